import type { FetchLike } from "../fetch";
import { parseAuthResponse, type AuthResponse } from "./auth-response";
import { isRecord, parseJson } from "../json";
import { raceDeadline } from "../timers";
import { stampAnswer, stampAuth, type Stamped, type StampStorage } from "./auth-stamp";

/**
 * The outcome of one batch auth request, classified so the connector never has to catch.
 *
 * - `ok`: 2xx, body parsed.
 * - `rejected`: 4xx, the server refused the batch (older servers deny this way; also 401/419), or an answer that
 *   is not Laravel's JSON (a redirect, to a login page most often, or an HTML page): `detail` then says what came back;
 *   `status` is 0 for a redirect the browser does not show.
 * - `error`: transient, worth retrying with backoff (5xx, network failure, timeout).
 * - `aborted`: cancelled by `disconnect()`; not an error.
 */
export type AuthResult =
    | { kind: "ok"; response: AuthResponse }
    | { kind: "rejected"; status: number; detail?: string; message?: string | undefined }
    | { kind: "error"; status: number | null; cause: unknown; message?: string | undefined }
    | { kind: "aborted" };

/** The longest server message an error quotes (a stack trace in the message is cut). */
export const SERVER_MESSAGE_MAX = 200;

/**
 * The `message` of a JSON error body (Laravel's `{"message": "…"}`), as one line of plain text: control characters
 * and runs of whitespace become one space, trimmed, at most {@link SERVER_MESSAGE_MAX} characters; `undefined` when
 * there is none. Only a parsed JSON string is read: an HTML error page says nothing here.
 */
export function serverMessage(body: unknown): string | undefined {
    if (!isRecord(body) || typeof body["message"] !== "string") return undefined;
    const line = body["message"].replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim();
    if (line === "") return undefined;
    return line.length > SERVER_MESSAGE_MAX ? line.slice(0, SERVER_MESSAGE_MAX - 1) + "…" : line;
}

/**
 * Everything a batch auth request needs.
 */
export interface AuthRequest {
    /** The auth endpoint URL. */
    endpoint: string;
    /** Extra headers (CSRF, bearer, custom), applied after the defaults so they can override them. */
    headers: Record<string, string>;
    /** Full channel names, in join order. */
    channelNames: readonly string[];
    /** The fetch implementation. */
    fetch: FetchLike;
    /** Cancels the request (disconnect). */
    signal: AbortSignal;
    /** Deadline in milliseconds. */
    timeout: number;
    /** Where the auth stamp is written (see `auth-stamp.ts`): the page's `localStorage` unless given (tests). */
    stamps?: StampStorage | undefined;
    /** Told the stamp the request wrote once it has left, and the one it replaced. */
    stamped?: ((stamped: Stamped) => void) | undefined;
}

/**
 * POST the whole channel set to the auth endpoint and classify the answer.
 *
 * The deadline and `disconnect()` race the request rather than rely on it: a `fetch` wrapper that
 * ignores its `signal` still times out (an `error`) or ends as `aborted`.
 */
export function requestAuthorization(request: AuthRequest): Promise<AuthResult> {
    return raceDeadline<AuthResult>(
        request.signal,
        request.timeout,
        (signal) => send(request, signal).catch((cause: unknown) => ({ kind: "error", status: null, cause })),
        () => ({ kind: "error", status: null, cause: new Error(`timed out after ${request.timeout} ms`) }),
        { kind: "aborted" },
    );
}

/** Send the request and classify the response; throws on a network error. */
async function send(request: AuthRequest, signal: AbortSignal): Promise<AuthResult> {
    // [spec] laravel-mercure §2.2: JSON body with exactly `channel_names`, credentials included. A relative endpoint is
    // resolved against the page's address, not against the document's base URL as fetch would: a <base href> injected
    // into the page (in <body> too) must not send the request and its headers elsewhere.
    const page = (globalThis as { location?: { href?: unknown } }).location?.href;
    const sent = request.fetch(typeof page === "string" && /^https?:/.test(page) ? new URL(request.endpoint, page).href : request.endpoint, {
        method: "POST",
        credentials: "include",
        // The headers (CSRF tokens, `auth.headers`) are the auth endpoint's alone: a redirect is not followed, so that
        // nothing reaches its target (fetch drops only Authorization there, and a 307 sends the body again). A browser
        // hands back an opaque answer of status 0, Node.js the 3xx itself.
        redirect: "manual",
        headers: {
            "Content-Type": "application/json",
            Accept: "application/json",
            ...request.headers,
        },
        body: JSON.stringify({ channel_names: request.channelNames }),
        signal,
    });
    // Once the request has left (not before: the first access to `localStorage` may take the page a few milliseconds).
    const stamped = stampAuth(request.stamps);
    if (stamped) request.stamped?.(stamped);
    const response = await sent;
    const status = response.status;
    // Its `Set-Cookie` is applied: the browser's hub cookie is this answer's now (see auth-stamp.ts).
    if (stamped && status >= 200 && status < 300 && response.redirected !== true) stampAnswer(stamped.stamp, request.stamps);
    const text = await response.text();
    const type = response.headers?.get("content-type") ?? null;
    // Laravel's broadcasting route answers JSON, and never by a redirect: a redirect (to a login page: the route sits
    // behind `auth` and the user has no session; followed only by a `fetch` option that ignores `redirect`) or an HTML
    // page is some other route's answer. ([spec] §2.5 has upstream read an unparsable 2xx body as {}: a real server never
    // sends one, so this fails it.)
    const body = parseJson(text);
    if (status < 100 || (status > 299 && status < 400) || response.redirected === true) {
        const target = response.headers?.get("location") ?? (response.redirected === true ? response.url : undefined);
        return { kind: "rejected", status, detail: `a redirect${target ? ` to ${target}` : ""}, not followed` };
    }
    if (status < 400 && (type?.includes("html") === true || typeof body !== "object" || body === null || Array.isArray(body))) {
        return { kind: "rejected", status, detail: `${type ?? "no content type"}, not Laravel's JSON` };
    }
    if (status >= 200 && status < 300) return { kind: "ok", response: { ...parseAuthResponse(body), stamp: stamped?.stamp } };
    // [spec] §2.8: < 500 is a rejection, everything else is transient. Laravel's JSON error body says why (issue 51).
    const message = serverMessage(body);
    if (status >= 400 && status < 500) return { kind: "rejected", status, message };
    return { kind: "error", status, cause: null, message };
}

