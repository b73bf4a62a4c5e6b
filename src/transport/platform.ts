import type { AuthResult } from "../auth/auth-client";
import { MercureError } from "../errors";

/**
 * The part of the `EventSource` interface the connector uses; the browser's, the `eventsource` npm
 * package's and most polyfills fit it.
 */
export interface EventSourceLike {
    /** 0 connecting, 1 open, 2 closed. */
    readonly readyState: number;
    /** Called when the stream opens. */
    onopen: ((event: Event) => unknown) | null;
    /** Called for events without an `event:` field. */
    onmessage: ((event: MessageEvent) => unknown) | null;
    /** Called on every error, transient or terminal. */
    onerror: ((event: Event) => unknown) | null;
    /** Listen for events of a named type (`event: mercure` subscription events). */
    addEventListener(type: string, listener: (event: MessageEvent) => unknown): void;
    /** Close the stream for good. */
    close(): void;
}

/**
 * The `fetch` an `EventSource` implementation may take in its init dict to make its requests (the
 * `eventsource` package's `{ fetch }`): it is called with a `URL` and must resolve with a full `Response`.
 */
export type StreamFetch = (url: string | URL, init: RequestInit) => Promise<Response>;

/**
 * What the connector passes to an `EventSource` constructor: `withCredentials` (always true), and the
 * `fetch` option when one was given, for implementations that make their requests with it (native
 * `EventSource` ignores it).
 */
export interface EventSourceInitLike {
    /** Send cookies (the hub's subscriber cookie). */
    withCredentials?: boolean;
    /** The `fetch` the stream requests go through, so that they carry the same cookies as the auth request. */
    fetch?: StreamFetch;
}

/**
 * An `EventSource` constructor: `new (url, { withCredentials, fetch? })`.
 */
export interface EventSourceConstructor {
    new (url: string, init?: EventSourceInitLike): EventSourceLike;
    /** The `CLOSED` readyState constant (2 when absent). */
    readonly CLOSED?: number;
}

/**
 * The part of a fetch `Response` the connector reads.
 */
export interface FetchResponseLike {
    /** HTTP status. */
    readonly status: number;
    /** Read the body as text. */
    text(): Promise<string>;
}

/**
 * A `fetch` implementation: the global one, or a wrapper (for example one that keeps cookies in Node).
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<FetchResponseLike>;

/** The default hub path, resolved against the page origin when `host` is not given. */
export const DEFAULT_HUB_PATH = "/.well-known/mercure";

/**
 * Resolve the hub URL from the `host` option: absolute as given, relative against the page, or
 * `/.well-known/mercure` on the page origin when absent.
 */
export function resolveHubUrl(host: string | null | undefined): URL {
    const base = pageHref();
    if (host === null || host === undefined || host === "") {
        if (base === null) {
            throw new MercureError(
                "missing_platform",
                "The `host` option is required outside a browser: pass the Mercure hub URL, for example `http://localhost:8000/.well-known/mercure`.",
            );
        }
        return new URL(DEFAULT_HUB_PATH, base);
    }
    try {
        return base === null ? new URL(host) : new URL(host, base);
    } catch (cause) {
        throw new MercureError(
            base === null && !/^[a-z][a-z0-9+.-]*:/i.test(host) ? "missing_platform" : "invalid_option",
            base === null
                ? `The \`host\` option "${host}" must be an absolute URL outside a browser.`
                : `The \`host\` option "${host}" is not a valid URL: pass the Mercure hub URL.`,
            { cause },
        );
    }
}

/**
 * Resolve the auth endpoint: as given in a browser (fetch resolves it against the page), and against
 * the hub's origin elsewhere, where `fetch` needs an absolute URL.
 */
export function resolveAuthEndpoint(endpoint: string, hub: URL): string {
    return pageHref() === null ? new URL(endpoint, hub).href : endpoint;
}

/**
 * Pick the `EventSource` implementation: the `eventSource` option, else `globalThis.EventSource`.
 */
export function resolveEventSource(option: EventSourceConstructor | undefined): EventSourceConstructor {
    const candidate = option ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
    if (typeof candidate !== "function") {
        throw new MercureError(
            "missing_platform",
            "No EventSource implementation is available: pass one as the `eventSource` option (for example from the `eventsource` package in Node.js).",
        );
    }
    return candidate;
}

/**
 * The `EventSource` to open streams with: `Impl` itself, or, when the `fetch` option was given, `Impl`
 * receiving that `fetch` in its init dict, so that an implementation that makes its requests with it (the
 * `eventsource` package) sends the cookie the auth request stored. The `fetch` option is typed for the auth
 * request; one used for the stream must resolve with a full `Response` (the global `fetch` or a wrapper of
 * it does). An implementation that sets its own `fetch` (a subclass passing `{ ...init, fetch }`) keeps it.
 */
export function withStreamFetch(Impl: EventSourceConstructor, fetch: FetchLike | undefined): EventSourceConstructor {
    if (fetch === undefined) return Impl;
    const streamFetch: StreamFetch = (url, init) => fetch(String(url), init) as Promise<Response>;
    return class extends Impl {
        constructor(url: string, init?: EventSourceInitLike) {
            super(url, { ...init, fetch: streamFetch });
        }
    };
}

/**
 * Pick the `fetch` implementation: the `fetch` option, else `globalThis.fetch`.
 */
export function resolveFetch(option: FetchLike | undefined): FetchLike {
    if (option !== undefined) return option;
    const global = (globalThis as { fetch?: FetchLike }).fetch;
    if (typeof global !== "function") {
        throw new MercureError(
            "missing_platform",
            "No fetch implementation is available: pass one as the `fetch` option.",
        );
    }
    return (url, init) => global(url, init);
}

function pageHref(): string | null {
    const location = (globalThis as { location?: { href?: unknown } }).location;
    return typeof location?.href === "string" && /^https?:/.test(location.href) ? location.href : null;
}

/**
 * The platform pieces a connector needs, resolved at first subscription (never at construction: server-side
 * rendering constructs Echo where there is no `window` or `EventSource`).
 */
export interface Platform {
    /** The hub URL. */
    hub: URL;
    /** The auth endpoint, ready for `fetch`. */
    authEndpoint: string;
    /** The `EventSource` implementation. */
    EventSource: EventSourceConstructor;
    /** The `fetch` implementation. */
    fetch: FetchLike;
    /** The `EventSource` of whisper streams, when it differs from {@link Platform.EventSource} (shared across tabs: see `share/`). */
    whisperEventSource?: EventSourceConstructor;
    /** Sends the batch auth request instead of `fetch` to {@link Platform.authEndpoint} (shared across tabs: the leading tab's auth gateway). */
    authorize?: (names: readonly string[], signal: AbortSignal) => Promise<AuthResult>;
    /** The hub refused the cookie (a whisper POST): the next `authorize` must reach the auth endpoint, not a cached grant. */
    stale?: () => void;
    /** Called when the connector forgets this platform (`disconnect()`): a shared platform leaves the tabs' union. */
    release?: () => void;
}

/**
 * Resolve every platform piece from the connector options; throws a {@link MercureError} naming the
 * missing or invalid one.
 */
export function resolvePlatform(options: {
    host?: string | null;
    authEndpoint: string;
    eventSource?: EventSourceConstructor;
    fetch?: FetchLike;
}): Platform {
    const hub = resolveHubUrl(options.host);
    return {
        hub,
        authEndpoint: resolveAuthEndpoint(options.authEndpoint, hub),
        EventSource: withStreamFetch(resolveEventSource(options.eventSource), options.fetch),
        fetch: resolveFetch(options.fetch),
    };
}
