import { HubTokenSource, withHubToken } from "../auth/hub-token";
import { MercureError } from "../errors";
import type { FetchLike } from "../fetch";
import { adaptEventSource } from "./event-source-adapter";
import { DEFAULT_HUB_PATH, hasHubToken, pageHref, type EventSourceConstructor, type Platform, type PlatformOptions } from "./platform";

/*
 * The platform set-up: a chunk loaded only where the connector's options are not the common page's (see `needsSetup`
 * in platform.ts): Node.js and server-side rendering, no `EventSource` or `fetch`, a `host` that does not parse, the
 * `eventSource`, `fetch` or `hubToken` option, a global `EventSource` that is not the browser's. It resolves each part
 * with a check (each throws a `MercureError` naming the missing or invalid part), adds the hub token to the hub's
 * requests and adapts the `EventSource` to its kind, so that none of it costs a page anything. The discovery chunk
 * imports it too (the default hub and `fetch`).
 */

/**
 * Resolve every platform piece from the connector options; throws a {@link MercureError} naming the missing or
 * invalid one (the browser's `EventSource` with `hubToken` is one).
 */
export function resolvePlatform(options: PlatformOptions): Platform {
    const hub = resolveHubUrl(options.host);
    const { hubToken: option, heartbeatTimeout } = options;
    const hubToken = hasHubToken(option) ? new HubTokenSource(option) : null;
    const fetch = hubToken === null ? resolveFetch(options.fetch) : withHubToken(resolveFetch(options.fetch), hub, hubToken);
    const log = options.log ?? null;
    /** Whether the debug log was told the hub keeps no history (once per platform: a hub without any answers so at every reconnect). */
    let told = false;
    const EventSource = adaptEventSource(resolveEventSource(options.eventSource), {
        // The stream goes through the `fetch` option, or through the global one when the token must be added or the
        // debug log reads the hub's answers.
        fetch: options.fetch === undefined && hubToken === null && log === null ? undefined : fetch,
        token: hubToken,
        heartbeatTimeout,
        // [spec] mercure-hub §1.4: reported once, never acted on (refetching on `earliest` would loop on such a hub).
        ...(log === null
            ? {}
            : {
                  replayGap: (cursor: string) => {
                      if (told) return;
                      told = true;
                      log("history", { cursor, replayed: false, why: "the hub answered Mercure-Last-Event-ID: earliest: it keeps no history, or no longer has that event; what was published before the stream opened is not replayed" });
                  },
              }),
    });
    return { hub, authEndpoint: resolveAuthEndpoint(options.authEndpoint, hub), EventSource, fetch, hubToken };
}

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
function resolveAuthEndpoint(endpoint: string, hub: URL): string {
    return pageHref() === null ? new URL(endpoint, hub).href : endpoint;
}

/**
 * Pick the `EventSource` implementation: the `eventSource` option, else `globalThis.EventSource`.
 */
function resolveEventSource(option: EventSourceConstructor | undefined): EventSourceConstructor {
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
