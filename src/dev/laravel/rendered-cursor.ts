import { parseLinkHeader } from "../../discovery/public";
import { signJwt } from "../jwt/jwt";
import { serverClaims, type PublisherTokenInput } from "./publisher-token";
import { AUTHORIZATION_DETAIL_TYPE } from "./subscriber-token";

/*
 * What a Laravel page renders so that the connector starts from it: the hub's last event id at render time, read from
 * the hub's subscriptions API (mercure-hub §4.2: every answer carries `Link: <hub>; rel="mercure"; last-event-id="…"`),
 * put in the page's `<head>` as `<link rel="mercure" href="…" last-event-id="…">` (mercure-hub §5). The page then
 * receives every event published after its render, once, however long its scripts take to join. This is what the
 * middleware in docs/channels-and-events.md does, here in the dev stack's Laravel stand-in.
 */

/**
 * The topic whose subscriptions are asked for: nobody subscribes to it, so the answer's body is an empty collection
 * whatever the hub's load, and only its `Link` header is read.
 */
export const CURSOR_TOPIC = "laravel-echo-mercure-cursor";

/** How long the stand-in waits for the hub's answer before rendering the page without a cursor. */
const CURSOR_TIMEOUT_MS = 2_000;

/** What {@link hubLastEventId} needs. */
export interface CursorRequest extends PublisherTokenInput {
    /** The hub URL the app reaches the hub at (the one it publishes to). */
    readonly hubUrl: string;
    /** The shared JWT key. */
    readonly jwtKey: string;
}

/**
 * The hub's last event id, asked of its subscriptions API with a one-minute token that may read one collection
 * (`subscribe` on its exact path, mercure-hub §4.2): `earliest` when nothing was published yet; null when the hub
 * does not answer with one (subscriptions off: 404; unreachable; no `Link`), and the page then renders no cursor.
 */
export async function hubLastEventId(request: CursorRequest): Promise<string | null> {
    const url = new URL(request.hubUrl);
    url.pathname = `${url.pathname.replace(/\/$/, "")}/subscriptions/exact/${CURSOR_TOPIC}`;
    url.search = "";
    // [spec] mercure-hub §4.2: the request path in relative form, compared byte for byte by an exact grant.
    const claims = serverClaims(request, [{ type: AUTHORIZATION_DETAIL_TYPE, actions: ["subscribe"], topics: [{ match: url.pathname }] }]);
    try {
        const response = await fetch(url, {
            headers: { Authorization: `Bearer ${signJwt(claims, request.jwtKey, "HS256")}` },
            signal: AbortSignal.timeout(CURSOR_TIMEOUT_MS),
        });
        await response.body?.cancel();
        if (!response.ok) return null;
        const link = parseLinkHeader(response.headers.get("link"), url).find((candidate) => candidate.rel.includes("mercure"));
        return link?.params["last-event-id"] || null;
    } catch {
        return null;
    }
}

/** Escape an attribute value for HTML. */
function escapeAttribute(value: string): string {
    return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * The `<link rel="mercure">` a page renders in its `<head>`: the public hub URL, and the hub's last event id when the
 * hub gave one (without it, the link still names the hub, and the connector starts from now).
 */
export function hubLinkElement(publicUrl: string, lastEventId: string | null): string {
    const cursor = lastEventId === null ? "" : ` last-event-id="${escapeAttribute(lastEventId)}"`;
    return `<link rel="mercure" href="${escapeAttribute(publicUrl)}"${cursor}>`;
}
