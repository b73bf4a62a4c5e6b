import { MercureError } from "../errors";
import type { FetchLike } from "../fetch";
import { DEFAULT_HUB_PATH, pageHref, type EventSourceConstructor } from "./platform";

/*
 * The platform parts resolved with a check each (see `PlatformParts` in platform.ts): a chunk loaded only where the
 * connector's options do not resolve in a page as they are (Node.js and server-side rendering, no `EventSource` or
 * `fetch`, a `host` that does not parse), so that what it says of a missing part costs a page nothing. Each throws
 * a `MercureError` naming the missing or invalid part.
 */

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
