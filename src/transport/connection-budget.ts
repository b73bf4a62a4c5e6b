/**
 * The most streams one connector holds on an HTTP/1.1 hub: the main stream with its replacement and the
 * replaced streams still draining, and the whisper streams.
 *
 * A browser opens at most 6 connections to one host (scheme, host and port) over HTTP/1.1, for the whole
 * profile, shared by all its tabs. An `EventSource` holds one for as long as it is open; a request made while
 * all of them are held waits until one closes. The connector's streams leave 1 of them free, for its own
 * requests to the hub's origin (the auth request on a same-origin hub, whisper POSTs, presence snapshots):
 * they never wait behind its streams.
 */
export const HTTP1_STREAMS = 6 - 1; // connections per host, less the one left free for requests

/** The most whisper streams one connector holds on an HTTP/1.1 hub: the budget less the main stream. */
export const HTTP1_WHISPER_STREAMS = HTTP1_STREAMS - 1;

/** The part of `performance` read here: the protocol of completed requests. */
interface ResourceTimings {
    getEntriesByType?(type: "resource"): ReadonlyArray<{ readonly name: string; readonly nextHopProtocol?: string }>;
}

/**
 * How many streams the connector may hold on `hub` at once (see {@link HTTP1_STREAMS}), or `Infinity` where
 * connections are not counted.
 *
 * Counted: in a browser, a hub reached over HTTP/1.1, that is a plain `http:` hub (browsers speak HTTP/2
 * only over TLS; `php artisan serve` and the development hub are `http:`), or one that a completed request
 * to its origin (the auth request behind a same-origin proxy, a snapshot, a whisper POST) reports as
 * `http/1.x` in its resource timing. Not counted: HTTP/2 and HTTP/3, where every stream shares one
 * connection; an `https:` hub whose protocol the page cannot see (cross-origin timings hide it), which
 * every production hub behind TLS serves over HTTP/2; and outside a browser (Node.js's `fetch` keeps no
 * such cap).
 */
export function streamBudget(hub: URL, environment: { location?: unknown; performance?: ResourceTimings } = globalThis): number {
    if (environment.location === undefined) return Infinity;
    return hub.protocol === "http:" || spokeHttp1(hub.origin, environment.performance) ? HTTP1_STREAMS : Infinity;
}

/** Whether a completed request to `origin` went over HTTP/1.x (browser-facts: `nextHopProtocol`). */
function spokeHttp1(origin: string, performance: ResourceTimings | undefined): boolean {
    let entries: ReturnType<NonNullable<ResourceTimings["getEntriesByType"]>> = [];
    try {
        entries = performance?.getEntriesByType?.("resource") ?? [];
    } catch {
        return false; // A partial `performance` (a test environment): nothing known.
    }
    return entries.some((entry) => entry.name.startsWith(origin + "/") && /^http\/1/.test(entry.nextHopProtocol ?? ""));
}
