import type { CredentialOption, HeaderOption } from "../auth/credential-options";
import type { HubTokenOption } from "../auth/hub-token";
import type { EventSourceConstructor, FetchLike } from "../transport/platform";
import type { DebugLogger } from "./debug-log";

// The limits lower layers read (auth, share) live in auth/limits.ts; re-exported for the connector's readers.
export { DEFAULT_AUTH_TIMEOUT, MAX_CHANNELS, resolveAuthTimeout, resolveHubTimeouts } from "../auth/limits";

/**
 * Options of {@link MercureConnector}: the upstream Echo Mercure connector's names, plus additive extras.
 */
export interface MercureConnectorOptions {
    /** `MercureConnector` (with stock Echo) or `"mercure"` (with `MercureEcho`). */
    broadcaster?: unknown;
    /** Hub URL; relative values resolve against the page. Default `/.well-known/mercure` on the page origin; required outside a browser. */
    host?: string | null;
    /**
     * Without `host`: a URL whose `Link: <…>; rel="mercure"` header names the hub, fetched when the page has
     * no `<link rel="mercure">` in its `<head>` (before falling back to `/.well-known/mercure`). Its `last-event-id` is the first cursor.
     */
    discover?: string | null;
    /** Log each protocol step: `true` with `console.debug`, or through your function. Never logs cookies, headers or tokens. */
    debug?: boolean | DebugLogger;
    /** `EventSource` implementation. Default `globalThis.EventSource`. */
    eventSource?: EventSourceConstructor;
    /** `fetch` implementation for the auth request. Default `globalThis.fetch`. */
    fetch?: FetchLike;
    /**
     * Header auth with the hub: a subscriber JWT, or a function returning one (called again before it expires, read
     * from its `exp`, and after a 401). Streams, whispers and hub probes then send `Authorization: Bearer <token>`
     * instead of relying on the cookie. Needs an `eventSource` that can send headers (`event-source-polyfill`, or the
     * `eventsource` package); with the browser's it is a configuration error (`invalid_option`). Never put in a URL.
     */
    hubToken?: HubTokenOption | null;
    /**
     * `event-source-polyfill` only: its `heartbeatTimeout` in milliseconds, after which a stream that received nothing
     * reconnects. Default 60000, above the reference hub's 40 s keep-alive; keep it above your hub's `heartbeat`.
     */
    heartbeatTimeout?: number;
    /** Batch auth URL. Default `/broadcasting/auth` (resolved against the hub origin outside a browser). */
    authEndpoint?: string;
    /** Extra headers for the auth request: each value a string, or a function giving one, called before every auth request. */
    auth?: { headers?: Record<string, HeaderOption> };
    /**
     * CSRF token sent as `X-CSRF-TOKEN`, or a function giving it (called before every auth request); read at each
     * request from `window.Laravel.csrfToken` or `<meta name="csrf-token">` when not given, else from Laravel's
     * `XSRF-TOKEN` cookie (sent as `X-XSRF-TOKEN`). After a 419 it is read again and the request retried once.
     */
    csrfToken?: CredentialOption;
    /** Sent as `Authorization: Bearer <token>` on the auth request; a function giving it is called before every auth request. */
    bearerToken?: CredentialOption;
    /** Event namespace. Default `App.Events`; `false` for none. */
    namespace?: string | false;
    /** Deadline of one auth request in milliseconds. Default 15000. */
    authTimeout?: number;
    /**
     * The hub's timings in milliseconds, which decide when the connector replaces its stream: the
     * reference hub ends a stream at a random 80–100 % of min(token lifetime, `write`) minus `dispatch`,
     * and the connector renews before the earliest of those moments. Defaults: the reference hub's
     * `dispatch_timeout` 5000 and `write_timeout` 600000. Set them when your hub is configured otherwise.
     */
    hubTimeouts?: { dispatch?: number; write?: number };
    /**
     * Share one hub connection between every tab of this app in the browser (same origin, hub and auth
     * endpoint). Default true. One tab leads: it authorizes the union of every tab's channels in one request
     * (so the browser's one hub cookie always covers every tab) and holds one stream for all of them; each
     * tab keeps its own channels, listeners, socket id and status. Needs Web Locks and `BroadcastChannel`
     * (secure contexts: https, localhost); without them, outside a browser, or with `false`, each connector
     * connects on its own. See `share/` and the README.
     */
    shareAcrossTabs?: boolean;
    /**
     * Presence channels: hold `leaving` back this many milliseconds after a user's last connection ended, and
     * report nothing if the same user connects again meanwhile (a page reload, a tab handing over). Default 5000
     * (covers a reload and a tab hand-over); 0 reports at once.
     */
    leaveDelay?: number;
    /**
     * Resume the stream across the pages of one browser tab (a link, a form's redirect, a reload): the next page subscribes
     * from the last event the previous page received, so that what is broadcast while the browser moves from one page
     * to the next arrives on the next page, once. Default false. Kept in `sessionStorage` for 2 minutes after the page
     * left, per hub and per Laravel session (a login or logout starts afresh); a new tab resumes nothing. Needs the
     * page's CSRF token (`<meta name="csrf-token">`, `window.Laravel.csrfToken` or a string `csrfToken`). A
     * `last-event-id` rendered into the page wins. Where the hub cookie the previous page left still covers the next
     * page's public and private channels, that page opens its stream beside its first auth request, one round trip
     * sooner; see docs/channels-and-events.md.
     */
    resumeAcrossPages?: boolean;
    /** Other Echo options (for example `withoutInterceptors`) pass through untouched. */
    [option: string]: unknown;
}

/**
 * Copy the options so that Echo's `setOptions()`, which writes CSRF and bearer headers into
 * `auth.headers`, never mutates the caller's objects or Echo's shared defaults.
 */
export function cloneHeaderOptions<T extends Record<string, unknown>>(options: T): T {
    const auth = options["auth"] as { headers?: Record<string, HeaderOption> } | undefined;
    const userAuthentication = options["userAuthentication"] as
        | { endpoint?: string; headers?: Record<string, string> }
        | undefined;
    return {
        ...options,
        auth: { ...auth, headers: { ...auth?.headers } },
        userAuthentication: {
            endpoint: "/broadcasting/user-auth",
            ...userAuthentication,
            headers: { ...userAuthentication?.headers },
        },
    };
}
