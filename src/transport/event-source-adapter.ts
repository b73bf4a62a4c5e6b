import type { HubTokenSource } from "../auth/hub-token";
import { errorStatus } from "../error-messages";
import { MercureError } from "../errors";
import { isNative, type EventSourceConstructor, type EventSourceInitLike, type FetchLike, type StreamFetch } from "./platform";

export { errorStatus } from "../error-messages";

/*
 * What each `EventSource` implementation needs to reach a Mercure hub (the `eventSource` option):
 *
 * - `native`: the browser's. Only `withCredentials`; it cannot send headers, so `hubToken` is refused.
 * - `polyfill`: `event-source-polyfill`'s `EventSourcePolyfill` (XHR/fetch based). It takes `headers`,
 *   `heartbeatTimeout` and `lastEventIdQueryParameterName`, and its error events carry `status`.
 * - `fetch`: anything else, taken to accept `{ fetch }` as the `eventsource` package (v4) does, so the
 *   connector's `fetch` (cookies kept, `Authorization` added) makes its requests.
 */

/** How the connector drives an `EventSource` implementation. */
export type EventSourceKind = "native" | "polyfill" | "fetch";

/**
 * The polyfill's default `heartbeatTimeout` (45 s) is barely above the reference hub's 40 s keep-alive and
 * reconnects a quiet stream spuriously; the connector's default leaves a 20 s margin.
 */
export const DEFAULT_HEARTBEAT_TIMEOUT = 60_000;

/**
 * Recognise an implementation by what it is, not by its name (minifiers rename classes):
 *
 * - `native`: the engine's own code (`Function.prototype.toString` shows `[native code]`);
 * - `polyfill`: `withCredentials` is a plain data property on its prototype chain, as `EventSourcePolyfill`
 *   defines it (`prototype.withCredentials = undefined`), where the browser's and the `eventsource` package's
 *   are accessors; a subclass is recognised through its chain. The name `EventSourcePolyfill` also counts;
 * - `fetch`: everything else.
 */
export function eventSourceKind(Impl: EventSourceConstructor): EventSourceKind {
    if (isNative(Impl)) return "native";
    if (Impl.name === "EventSourcePolyfill") return "polyfill";
    for (let proto: unknown = Impl.prototype; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
        const descriptor = Object.getOwnPropertyDescriptor(proto, "withCredentials");
        if (descriptor !== undefined) return "value" in descriptor ? "polyfill" : "fetch";
    }
    return "fetch";
}

/** What {@link adaptEventSource} needs besides the implementation. */
export interface AdaptOptions {
    /** The `fetch` the stream requests go through (the `fetch` option, with the hub token added), or undefined for none. */
    readonly fetch: FetchLike | undefined;
    /** The hub token (header auth), or null for the cookie. */
    readonly token: HubTokenSource | null;
    /** The polyfill's `heartbeatTimeout` (ms; the `heartbeatTimeout` option), {@link DEFAULT_HEARTBEAT_TIMEOUT} when not a positive number. */
    readonly heartbeatTimeout?: unknown;
    /**
     * Told when a stream that asked for a cursor (not `earliest`) is answered `Mercure-Last-Event-ID: earliest`: the hub
     * replays nothing from it (no history, or that event is gone; mercure-hub §1.4). Only a stream whose requests go
     * through `fetch` can read that header (the `eventsource` package's): a browser's `EventSource` cannot.
     */
    readonly replayGap?: (cursor: string) => void;
}

/**
 * The `EventSource` to open streams with: `Impl` receiving what its kind needs in the init dict, and
 * forgetting the hub token when a stream is refused with 401 (the next one asks for a new token). Throws
 * `invalid_option` for the browser's `EventSource` with a hub token: it cannot send the header, and a token
 * never goes into a URL.
 */
export function adaptEventSource(Impl: EventSourceConstructor, options: AdaptOptions): EventSourceConstructor {
    const { fetch, token } = options;
    const heartbeatTimeout = typeof options.heartbeatTimeout === "number" && options.heartbeatTimeout > 0 ? options.heartbeatTimeout : DEFAULT_HEARTBEAT_TIMEOUT;
    const kind = eventSourceKind(Impl);
    if (kind === "native" && token !== null) {
        throw new MercureError(
            "invalid_option",
            "`hubToken` needs an EventSource that sends headers, which the browser's cannot: pass `eventSource: EventSourcePolyfill` (event-source-polyfill), or serve the hub under the app's domain and use the cookie.",
        );
    }
    if (kind === "native" || (kind === "fetch" && fetch === undefined)) return Impl;
    const extra: Partial<EventSourceInitLike> & Record<string, unknown> = {};
    if (kind === "polyfill") {
        // [spec] mercure-hub §1.3: Mercure 1.0 reads the cursor from `last_event_id` (the polyfill's reconnects too).
        extra["lastEventIdQueryParameterName"] = "last_event_id";
        extra["heartbeatTimeout"] = heartbeatTimeout;
        // Read on each of the polyfill's own reconnects: they carry the newest token.
        if (token !== null) extra["headers"] = { get Authorization() { return `Bearer ${token.current() ?? ""}`; } };
    } else if (fetch !== undefined) {
        const gap = options.replayGap;
        extra.fetch = ((url, init) => {
            const sent = fetch(String(url), init);
            if (gap === undefined) return sent;
            // [spec] mercure-hub §1.4: the cursor goes as `last_event_id` first, as the `Last-Event-ID` header on reconnects.
            const headers = new Headers((init as { headers?: HeadersInit } | undefined)?.headers);
            const cursor = headers.get("last-event-id") ?? new URL(String(url)).searchParams.get("last_event_id");
            return sent.then((response) => {
                if (cursor && cursor !== "earliest" && response.headers?.get("mercure-last-event-id") === "earliest") gap(cursor);
                return response;
            });
        }) as StreamFetch;
    }
    return class extends Impl {
        constructor(url: string, init?: EventSourceInitLike) {
            super(url, { ...init, ...extra });
            // [spec] mercure-hub §1.5: on 401 obtain a new token; the connector re-authorizes and reopens.
            if (token !== null) this.addEventListener("error", (event) => errorStatus(event) === 401 && token.refused());
        }
    };
}
