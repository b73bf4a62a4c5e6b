import type { HubTokenOption, HubTokenSource } from "../auth/hub-token";
import type { HubTokenModule } from "../auth/load-hub-token";
import type { AuthResult } from "../auth/auth-client";
import type { MercureError } from "../errors";
import type { FetchLike } from "../fetch";
import { lazyChunk } from "../lazy-chunk";

// The fetch types sit below auth and transport (src/fetch.ts); re-exported here for their readers.
export type { FetchLike, FetchResponseLike } from "../fetch";

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
 * What the connector reads of a stream event: its `data` and its id. A `MessageEvent` is one; the streams the
 * leading tab's hub engine feeds to its own tab (src/share/) hand over plain objects of this shape instead.
 */
export interface StreamMessage {
    /** The event's `data` field. */
    readonly data: unknown;
    /** The event's `id` field, "" without one. */
    readonly lastEventId: string;
}

/**
 * The `fetch` an `EventSource` implementation may take in its init dict to make its requests (the
 * `eventsource` package's `{ fetch }`): it is called with a `URL` and must resolve with a full `Response`.
 */
export type StreamFetch = (url: string | URL, init: RequestInit) => Promise<Response>;

/**
 * What the connector passes to an `EventSource` constructor: `withCredentials` (always true), and what the
 * implementation's kind takes (see {@link adaptEventSource}): the `fetch` for the `eventsource` package,
 * `headers`, `heartbeatTimeout` and `lastEventIdQueryParameterName` for `event-source-polyfill`.
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


/** The default hub path, resolved against the page origin when `host` is not given. */
export const DEFAULT_HUB_PATH = "/.well-known/mercure";

/**
 * How the hub URL, the auth endpoint, the `EventSource` and the `fetch` of a platform resolve: in a page (see
 * {@link inPage}) without a check, else through {@link loadChecks}'s module, which checks each and says what is missing.
 */
export interface PlatformParts {
    /** The hub URL of the `host` option: absolute as given, relative against the page, `/.well-known/mercure` when absent. */
    resolveHubUrl(host: string | null | undefined): URL;
    /** The auth endpoint, ready for `fetch`. */
    resolveAuthEndpoint(endpoint: string, hub: URL): string;
    /** The `eventSource` option, else `globalThis.EventSource`. */
    resolveEventSource(option: EventSourceConstructor | undefined): EventSourceConstructor;
    /** The `fetch` option, else `globalThis.fetch`. */
    resolveFetch(option: FetchLike | undefined): FetchLike;
}

/** What the lazily loaded checks chunk offers: `./platform-checks`'s exports. */
export type ChecksModule = typeof import("./platform-checks");

/**
 * Load the platform checks on first use, once per page (a separate chunk): only a connector outside a page (Node.js,
 * server-side rendering), without an `EventSource` or a `fetch`, or with a `host` that does not parse needs them.
 */
export const loadChecks: () => Promise<ChecksModule> = lazyChunk(() => import("./platform-checks"));

/** The page's URL, when the code runs in an http(s) page; else null. */
export function pageHref(): string | null {
    const location = (globalThis as { location?: { href?: unknown } }).location;
    return typeof location?.href === "string" && /^https?:/.test(location.href) ? location.href : null;
}

/**
 * Whether these options resolve in a page as they are, so that the checks chunk is not needed: an http(s) page, an
 * `EventSource` and a `fetch` (the options' or the page's), and a `host` (or none) that parses against the page.
 */
export function inPage(options: { host?: string | null; eventSource?: unknown; fetch?: unknown }): boolean {
    const page = pageHref();
    const scope = globalThis as { EventSource?: unknown; fetch?: unknown };
    if (page === null || typeof (options.eventSource ?? scope.EventSource) !== "function" || typeof (options.fetch ?? scope.fetch) !== "function") return false;
    try {
        new URL(options.host || DEFAULT_HUB_PATH, page);
        return true;
    } catch {
        return false;
    }
}

/** The parts in a page where {@link inPage} holds: nothing is missing, relative URLs resolve against the page. */
const PAGE_PARTS: PlatformParts = {
    resolveHubUrl: (host) => new URL(host || DEFAULT_HUB_PATH, pageHref()!),
    resolveAuthEndpoint: (endpoint) => endpoint,
    resolveEventSource: (option) => option ?? (globalThis as unknown as { EventSource: EventSourceConstructor }).EventSource,
    resolveFetch: (option) => option ?? ((url, init) => (globalThis as unknown as { fetch: FetchLike }).fetch(url, init)),
};

/**
 * The platform pieces a connector needs, resolved at first subscription (never at construction: server-side
 * rendering constructs Echo where there is no `window` or `EventSource`).
 */
export interface Platform {
    /** The hub URL. */
    hub: URL;
    /** The auth endpoint, ready for `fetch`. */
    authEndpoint: string;
    /** The `EventSource` implementation, adapted to its kind (see {@link adaptEventSource}). */
    EventSource: EventSourceConstructor;
    /** The `fetch` implementation; with a hub token, requests to the hub carry it. */
    fetch: FetchLike;
    /** The hub token source (the `hubToken` option), or null: the hub reads the cookie. */
    hubToken: HubTokenSource | null;
    /** The `EventSource` of whisper streams, when it differs from {@link Platform.EventSource} (shared across tabs: see `share/`). */
    whisperEventSource?: EventSourceConstructor;
    /** Sends the batch auth request instead of `fetch` to {@link Platform.authEndpoint} (shared across tabs: the leading tab's auth gateway). */
    authorize?: (names: readonly string[], signal: AbortSignal) => Promise<AuthResult>;
    /** The hub refused the cookie (a whisper POST): the next `authorize` must reach the auth endpoint, not a cached grant. */
    stale?: () => void;
    /**
     * Shared across tabs: how many more whisper streams the leading tab's engine can open within the connection budget of
     * every tab (undefined: not known yet, the connector's own budget applies).
     */
    whisperRoom?: () => number | undefined;
    /** Called when the connector forgets this platform (`disconnect()`): a shared platform leaves the tabs' union. */
    release?: () => void;
}

/** What the lazily loaded `EventSource` adapter chunk offers: `./event-source-adapter`'s exports. */
export type AdapterModule = typeof import("./event-source-adapter");

/**
 * Load the `EventSource` adapter on first use, once per page (a separate chunk): only a connector with the
 * `eventSource`, `fetch` or `hubToken` option, or on a page whose global `EventSource` is not the browser's own, needs it.
 */
export const loadAdapter: () => Promise<AdapterModule> = lazyChunk(() => import("./event-source-adapter"));

/** Whether `Impl` is the engine's own code (`Function.prototype.toString` shows `[native code]`): the browser's `EventSource`. */
export function isNative(Impl: EventSourceConstructor): boolean {
    return /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(Impl));
}

/**
 * Whether the `EventSource` of these options must go through the adapter chunk (see `event-source-adapter.ts`), which
 * {@link resolvePlatform} then takes: with the `eventSource`, `fetch` or `hubToken` option, or a global `EventSource`
 * that is not the browser's (a polyfill put on `window`). The browser's own, alone, is used as it is.
 */
export function needsAdapter(options: { eventSource?: unknown; fetch?: unknown; hubToken?: HubTokenOption | null }): boolean {
    if (options.eventSource !== undefined || options.fetch !== undefined || hasHubToken(options.hubToken)) return true;
    const global = (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
    return typeof global === "function" && !isNative(global);
}

/** Whether the `hubToken` option is set (header auth): then the hub-token chunk must be loaded before {@link resolvePlatform}. */
export function hasHubToken(option: HubTokenOption | null | undefined): option is HubTokenOption {
    return option !== undefined && option !== null && option !== "";
}

/**
 * Resolve every platform piece from the connector options; throws a {@link MercureError} naming the
 * missing or invalid one (the browser's `EventSource` with `hubToken` is one). `tokens` is the lazily
 * loaded hub-token chunk, which the caller loads first when the `hubToken` option is set (see {@link hasHubToken}),
 * `adapter` the `EventSource` adapter chunk, loaded first where {@link needsAdapter}, and `checks` the checks chunk,
 * loaded first unless {@link inPage} (null: the options resolve in the page as they are).
 */
export function resolvePlatform(
    options: {
        host?: string | null;
        authEndpoint: string;
        eventSource?: EventSourceConstructor;
        fetch?: FetchLike;
        hubToken?: HubTokenOption | null;
        heartbeatTimeout?: unknown;
    },
    tokens: HubTokenModule | null,
    adapter: AdapterModule | null,
    checks: PlatformParts | null,
): Platform {
    const { resolveHubUrl, resolveAuthEndpoint, resolveEventSource, resolveFetch } = checks ?? PAGE_PARTS;
    const hub = resolveHubUrl(options.host);
    const { hubToken: option, heartbeatTimeout } = options;
    // Loaded by the caller whenever the option is set: `tokens` is non-null here then.
    const hubToken = hasHubToken(option) ? new tokens!.HubTokenSource(option) : null;
    const fetch = hubToken === null ? resolveFetch(options.fetch) : tokens!.withHubToken(resolveFetch(options.fetch), hub, hubToken);
    const Impl = resolveEventSource(options.eventSource);
    // Without the adapter (not needed: see needsAdapter), the browser's own EventSource is used as it is.
    const EventSource =
        adapter?.adaptEventSource(Impl, {
            // The stream goes through the `fetch` option, or through the global one when the token must be added.
            fetch: options.fetch === undefined && hubToken === null ? undefined : fetch,
            token: hubToken,
            heartbeatTimeout,
        }) ?? Impl;
    return { hub, authEndpoint: resolveAuthEndpoint(options.authEndpoint, hub), EventSource, fetch, hubToken };
}
