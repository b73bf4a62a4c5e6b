/*
 * Hub discovery (mercure-hub §5): from a resource's `Link: <…>; rel="mercure"` header, from a
 * `<link rel="mercure">` in the `<head>` of the page or of a fetched HTML document, and the fallback order the connector
 * uses when its `host` option is absent. Loaded lazily: only a connector without `host` needs it.
 */

import type { FetchLike } from "../transport/platform";
import { resolveFetch, resolveHubUrl } from "../transport/platform-setup";
import type { HubLocation } from "./hub-location";
import { MercureError } from "../errors";
import { within } from "../transport/deadline";
import { discoveryError } from "./discovery-error";
import { findHtmlLinks } from "./html-links";
import { linksWithRel, parseLinkHeader } from "./link-header";
import { discoveredHub, discoverFromDocument, downgrades, type DiscoveredHub, type DocumentLike } from "./link-element";
import { describeFailure, discardBody, readHeader, responseUrl } from "./response";

export { discoverFromDocument, type DiscoveredHub, type DocumentLike } from "./link-element";

/** Options of {@link discoverHub}. */
export interface DiscoverHubOptions {
    /** The fetch to use; default `globalThis.fetch`. */
    fetch?: FetchLike;
    /** Deadline in milliseconds; default 10 000. */
    timeout?: number;
    /** Abort the request (the promise then rejects). */
    signal?: AbortSignal;
    /** The request's credentials mode; default `same-origin`. */
    credentials?: RequestCredentials;
}

/** Default deadline of a discovery request, in milliseconds. */
export const DEFAULT_DISCOVERY_TIMEOUT = 10_000;

/**
 * Find the hub a resource announces: `GET resourceUrl`, then its `Link` header's first `rel="mercure"`
 * link (relative targets resolve against the response URL), else, for an HTML answer, its first
 * `<link rel="mercure">`. Rejects with a `MercureError` (`discovery_failed`) naming the resource and
 * what to add when there is none, or when the request fails.
 */
export async function discoverHub(resourceUrl: string | URL, options: DiscoverHubOptions = {}): Promise<DiscoveredHub> {
    const url = resolveResourceUrl(resourceUrl);
    const fetch = resolveFetch(options.fetch);
    const waited = await within(
        async (signal) => {
            const response = await fetch(url, {
                method: "GET",
                credentials: options.credentials ?? "same-origin",
                headers: { Accept: "text/html, application/json;q=0.9, */*;q=0.8" },
                signal,
            });
            const base = responseUrl(response) ?? url;
            if (downgrades(new URL(base), url)) return { status: response.status, links: [], from: base };
            // [spec] mercure-hub §5: the header wins over links embedded in the document.
            const linked = linksWithRel(parseLinkHeader(readHeader(response, "link"), base), "mercure");
            if (linked.length > 0 || !/html/i.test(readHeader(response, "content-type") ?? "")) {
                discardBody(response);
                return { status: response.status, links: linked.map((link) => ({ href: link.href, lastEventId: link.params["last-event-id"] })), from: base };
            }
            const embedded = findHtmlLinks(await response.text(), base).filter((link) => link.rel.includes("mercure"));
            return { status: response.status, links: embedded.map((link) => ({ href: link.href, lastEventId: link.attributes["last-event-id"] })), from: base };
        },
        options.timeout ?? DEFAULT_DISCOVERY_TIMEOUT,
        options.signal ?? new AbortController().signal,
    );
    if (waited.kind !== "done") {
        const reason = waited.kind === "failed" ? describeFailure(waited.cause) : waited.kind === "timeout" ? "no answer in time" : "aborted";
        throw discoveryError("discovery_failed", `Discovering the Mercure hub from "${url}" failed (${reason}): check the URL, or set the connector's host to the hub URL.`, {
            ...(waited.kind === "failed" ? { cause: waited.cause } : {}),
        });
    }
    const { status, links, from } = waited.value;
    let refused: DiscoveredHub | null = null;
    for (const link of links) {
        const hub = discoveredHub(link.href, link.lastEventId);
        // [spec] Never downgrades: an https resource (or its redirect) naming an http hub is refused, not followed.
        if (hub !== null && (downgrades(hub.hub, url) || downgrades(hub.hub, from))) refused ??= hub;
        else if (hub !== null) return hub;
    }
    if (refused !== null || downgrades(new URL(from), url)) {
        throw discoveryError(
            "discovery_failed",
            `"${url}" is served over HTTPS but ${refused === null ? `redirected to ${from}` : `announces the hub over plain HTTP (${refused.hub.href})`}: refused, so that no token or event travels in the clear; announce an https:// hub URL, or set the connector's host.`,
            { status },
        );
    }
    throw discoveryError(
        "discovery_failed",
        `"${url}" (HTTP ${status}) announces no Mercure hub: add a Link: <hub URL>; rel="mercure" header to it (cross-origin, also list Link in Access-Control-Expose-Headers), or set the connector's host.`,
        { status },
    );
}

/** How {@link locateHub} found the hub. */
export type HubSource = "link-element" | "link-header" | "well-known";

/** Options of {@link locateHub}. */
export interface LocateHubOptions extends DiscoverHubOptions {
    /** The page's document; default `globalThis.document` (null skips the `<link>` lookup). */
    document?: DocumentLike | null;
    /** The connector's `discover` option: a URL whose `Link` header names the hub. */
    discover?: string | null;
}

/**
 * Find the hub of a connector without `host`: a `<link rel="mercure">` in the page's `<head>`, else the `Link`
 * header of the `discover` URL (its failure rejects: the option asked for it), else `/.well-known/mercure`
 * on the page's origin. Rejects like the connector's `host` resolution outside a browser.
 */
export async function locateHub(options: LocateHubOptions = {}): Promise<DiscoveredHub & { readonly source: HubSource }> {
    const found = await findHub(options.document === undefined ? pageDocument() : options.document, options.discover, options);
    return found ?? { ...discoveredHub(resolveHubUrl(null).href)!, source: "well-known" };
}

/**
 * The steps of {@link locateHub} that find a hub (mercure-hub §5): the `document`'s `<link rel="mercure">`,
 * else the `discover` URL's `Link` header (when it is a non-empty string; its failure rejects); null when
 * neither applies, for the caller to fall back to `/.well-known/mercure` (the connector leaves that to its
 * platform resolution, which refuses it outside a browser). What a connector without `host` runs.
 */
export async function findHub(document: DocumentLike | null, discover: unknown, options: DiscoverHubOptions): Promise<(DiscoveredHub & { readonly source: HubSource }) | null> {
    const linked = document === null ? null : discoverFromDocument(document);
    if (linked !== null) return { ...linked, source: "link-element" };
    if (typeof discover === "string" && discover !== "") return { ...(await discoverHub(discover, options)), source: "link-header" };
    return null;
}

/**
 * Where a connector without `host` finds its hub (see `HubLocator` in `hub-location.ts`): {@link findHub} in the page,
 * with the global `fetch` when `fetch` is undefined; `host` null for the default (`/.well-known/mercure`). Resolves
 * with the `MercureError` saying why there is none (`discovery_failed` naming the URL and what to add;
 * `missing_platform` without `fetch`) instead of rejecting: the connector takes a rejection for a failed download of
 * this chunk.
 */
export async function connectorHub(discover: unknown, fetch: FetchLike | undefined, signal: AbortSignal): Promise<HubLocation | MercureError> {
    try {
        const found = await findHub(pageDocument(), discover, { fetch, signal });
        if (found === null) return { host: null, source: "well-known" };
        // An empty `last-event-id` offers no cursor.
        return { host: found.hub.href, source: found.source, lastEventId: found.lastEventId || undefined };
    } catch (cause) {
        // Only MercureErrors leave, resolved: the connector takes a rejection for a failed download of this chunk.
        return cause instanceof MercureError ? cause : discoveryError("discovery_failed", "Finding the hub failed unexpectedly: set the connector's host.", { cause });
    }
}

/**
 * The page's document, or null outside a browser. Its members are read through `Document.prototype` (and `Node`'s):
 * an element named `querySelectorAll`, `URL` or `baseURI` shadows the document's own (DOM clobbering).
 */
export function pageDocument(): DocumentLike | null {
    const scope = globalThis as { document?: object; Document?: { prototype: object } };
    const document = scope.document;
    if (document === undefined) return null;
    const read = (name: string): unknown => Reflect.get(scope.Document?.prototype ?? document, name, document);
    const query = read("querySelectorAll") as (this: object, selectors: string) => ReturnType<DocumentLike["querySelectorAll"]>;
    return { URL: read("URL") as string, baseURI: read("baseURI") as string, querySelectorAll: (selectors) => query.call(document, selectors) };
}

function resolveResourceUrl(resourceUrl: string | URL): string {
    const page = (globalThis as { location?: { href?: unknown } }).location?.href;
    try {
        return new URL(String(resourceUrl), typeof page === "string" && /^https?:/.test(page) ? page : undefined).href;
    } catch (cause) {
        throw discoveryError("discovery_failed", `The discovery URL "${String(resourceUrl)}" is not a valid URL: pass an absolute URL, or a path in a browser.`, { cause });
    }
}
