import { raceDeadline } from "../timers";
import type { FetchLike } from "../transport/platform";
import { describeCause } from "../errors";
import { isRecord, parseJson } from "../json";
import { readSubscription, type Subscription } from "./subscription-event";

/** Default deadline of one snapshot request, in milliseconds. */
export const SNAPSHOT_TIMEOUT = 10_000;

/**
 * The outcome of one snapshot request, classified so the caller never has to catch.
 *
 * - `ok`: 2xx with a well-formed body; `members` are the active subscriptions with a payload.
 * - `failed`: non-2xx, malformed body, network error or deadline; `reason` says which, for the message.
 * - `aborted`: cancelled through the signal (`disconnect()`); not an error.
 */
export type SnapshotResult =
    | { kind: "ok"; members: Subscription[] }
    | { kind: "failed"; reason: string; status?: number; cause?: unknown }
    | { kind: "aborted" };

/**
 * GET the active-subscriptions snapshot at `url` with the cookie, and classify the answer.
 *
 * The deadline holds even when `fetch` ignores the signal: the request is raced against it.
 */
export function fetchSnapshot(url: string, fetch: FetchLike, signal: AbortSignal, timeout = SNAPSHOT_TIMEOUT): Promise<SnapshotResult> {
    return raceDeadline<SnapshotResult>(
        signal,
        timeout,
        (requestSignal) => request(url, fetch, requestSignal),
        () => ({ kind: "failed", reason: `timed out after ${timeout} ms` }),
        { kind: "aborted" },
    );
}

/** Run the request itself and classify it. */
async function request(url: string, fetch: FetchLike, signal: AbortSignal): Promise<SnapshotResult> {
    try {
        // [spec] laravel-mercure §5.4 step 3: GET with credentials (the cookie's urlpattern grant), no headers.
        const response = await fetch(url, { credentials: "include", signal });
        const status = response.status;
        const text = await response.text();
        // [spec] §5.4 step 4: a non-2xx answer is a failure, never an empty room.
        // A redirect is not followed with the hub token (auth/hub-token.ts): a browser shows it as status 0.
        if (status < 200 || status > 299) return { kind: "failed", reason: status < 400 ? "a redirect, not followed" : `HTTP ${status}`, status };
        const members = parseSnapshot(text);
        return members === null ? { kind: "failed", reason: "malformed response", status } : { kind: "ok", members };
    } catch (cause) {
        return { kind: "failed", reason: describeCause(cause), cause };
    }
}

/**
 * Read a snapshot body: the members (active subscriptions with a payload, `exact` when the entry says),
 * or `null` when the body is not JSON or has no `subscriptions` array.
 */
export function parseSnapshot(text: string): Subscription[] | null {
    const body = parseJson(text);
    const entries = isRecord(body) ? body["subscriptions"] : null;
    if (!Array.isArray(entries)) return null;
    const members: Subscription[] = [];
    for (const entry of entries) {
        // [spec] §5.4 step 4: keep `active === true` with `payload != null`; `id`, `type`, `@context` ignored.
        if (!isRecord(entry) || entry["active"] !== true || (entry["match_type"] ?? "exact") !== "exact") continue;
        const member = readSubscription(entry, String(entry["match"] ?? ""));
        if (member !== null) members.push(member);
    }
    return members;
}
