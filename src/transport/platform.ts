import type { HubTokenOption, HubTokenSource } from "../auth/hub-token";
import type { AuthResult } from "../auth/auth-client";
import type { FetchLike } from "../fetch";
import { lazyChunk, type LazyChunk } from "../lazy-chunk";

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

/** What the lazily loaded platform set-up chunk offers: `./platform-setup`'s exports. */
export type SetupModule = typeof import("./platform-setup");

/**
 * Load the platform set-up on first use, once per page (a separate chunk: see {@link needsSetup}). It checks each part
 * and names a missing one, adds the hub token (`hubToken`) and adapts the `EventSource` to its kind.
 */
export const loadSetup: LazyChunk<SetupModule> = lazyChunk(() => import("./platform-setup"));

/** The page's URL, when the code runs in an http(s) page; else null. */
export function pageHref(): string | null {
    const location = (globalThis as { location?: { href?: unknown } }).location;
    return typeof location?.href === "string" && /^https?:/.test(location.href) ? location.href : null;
}

/** Whether `Impl` is the engine's own code (`Function.prototype.toString` shows `[native code]`): the browser's `EventSource`. */
export function isNative(Impl: EventSourceConstructor): boolean {
    return /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(Impl));
}

/**
 * Whether the `EventSource` of these options must be adapted to its kind (see `event-source-adapter.ts`): with the
 * `eventSource`, `fetch` or `hubToken` option, or a global `EventSource` that is not the browser's (a polyfill put on
 * `window`). The browser's own, alone, is used as it is.
 */
export function needsAdapter(options: { eventSource?: unknown; fetch?: unknown; hubToken?: HubTokenOption | null }): boolean {
    if (options.eventSource !== undefined || options.fetch !== undefined || hasHubToken(options.hubToken)) return true;
    const global = (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
    return typeof global === "function" && !isNative(global);
}

/** Whether the `hubToken` option is set (header auth). */
export function hasHubToken(option: HubTokenOption | null | undefined): option is HubTokenOption {
    return option !== undefined && option !== null && option !== "";
}

/** The connector options a platform is resolved from. */
export interface PlatformOptions {
    /** The `host` option. */
    readonly host?: string | null;
    /** The `authEndpoint` option. */
    readonly authEndpoint: string;
    /** The `eventSource` option. */
    readonly eventSource?: EventSourceConstructor;
    /** The `fetch` option. */
    readonly fetch?: FetchLike;
    /** The `hubToken` option (header auth). */
    readonly hubToken?: HubTokenOption | null;
    /** The `heartbeatTimeout` option (`event-source-polyfill`'s). */
    readonly heartbeatTimeout?: unknown;
    /** The connector's `debug` log, or null: the set-up logs there what only it can see (a hub that keeps no history). */
    readonly log?: ((step: string, detail: object) => void) | null;
}

/**
 * Whether these options need the platform set-up chunk (see {@link loadSetup}): everywhere but the common page, that
 * is outside an http(s) page, without an `EventSource` or a `fetch`, with a `host` that does not parse against the
 * page, or where the `EventSource` must be adapted (see {@link needsAdapter}). The common page's platform is
 * {@link pagePlatform}.
 */
export function needsSetup(options: PlatformOptions): boolean {
    const page = pageHref();
    const scope = globalThis as { EventSource?: unknown; fetch?: unknown };
    if (page === null || needsAdapter(options) || typeof scope.EventSource !== "function" || typeof scope.fetch !== "function") return true;
    try {
        new URL(options.host || DEFAULT_HUB_PATH, page);
        return false;
    } catch {
        return true;
    }
}

/**
 * The platform of a page where {@link needsSetup} is false: the hub URL against the page, the auth endpoint as given
 * (`fetch` resolves it against the page), the browser's own `EventSource` and the page's `fetch`.
 */
export function pagePlatform(options: PlatformOptions): Platform {
    const scope = globalThis as unknown as { EventSource: EventSourceConstructor; fetch: FetchLike };
    return {
        hub: new URL(options.host || DEFAULT_HUB_PATH, pageHref()!),
        authEndpoint: options.authEndpoint,
        EventSource: scope.EventSource,
        fetch: (url, init) => scope.fetch(url, init),
        hubToken: null,
    };
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
    /** The `EventSource` implementation, adapted to its kind (see {@link adaptEventSource}). */
    EventSource: EventSourceConstructor;
    /** The `fetch` implementation; with a hub token, requests to the hub carry it. */
    fetch: FetchLike;
    /** The hub token source (the `hubToken` option), or null: the hub reads the cookie. */
    hubToken: HubTokenSource | null;
    /** The `EventSource` of whisper streams, when it differs from {@link Platform.EventSource} (shared across tabs: see `share/`). */
    whisperEventSource?: EventSourceConstructor;
    /**
     * Sends the batch auth request instead of `fetch` to {@link Platform.authEndpoint} (shared across tabs: the leading
     * tab's auth gateway); `probe`: a request of the batch isolation's search, not the connector's channel set.
     */
    authorize?: (names: readonly string[], signal: AbortSignal, probe?: boolean) => Promise<AuthResult>;
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
