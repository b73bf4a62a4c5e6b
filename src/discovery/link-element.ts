import { metadataUrlFor } from "./well-known";

/** Where a hub was found. */
export interface DiscoveredHub {
    /** The hub URL (fragment removed). */
    readonly hub: URL;
    /** The link's `last-event-id`: pass it as the first `last_event_id`, so nothing published since the page was rendered is missed. */
    readonly lastEventId?: string;
    /** Where the hub's protected resource metadata is served (RFC 9728 §3.1; not fetched by discovery). */
    readonly metadataUrl?: URL;
}

/** The part of a DOM `Document` {@link discoverFromDocument} reads. */
export interface DocumentLike {
    /** The document's base URL, against which `href`s resolve. */
    readonly baseURI: string;
    /** Find elements by CSS selector. */
    querySelectorAll(selectors: string): ArrayLike<{ getAttribute(name: string): string | null }>;
}

/**
 * Find the hub a page announces with `<link rel="mercure" href="…">` (the first such link with a valid
 * http(s) URL), honouring its `last-event-id` attribute; null when there is none.
 */
export function discoverFromDocument(document: DocumentLike): DiscoveredHub | null {
    const elements = document.querySelectorAll("link[rel][href]");
    for (let i = 0; i < elements.length; i++) {
        const element = elements[i]!;
        // [spec] mercure-hub §5: HTML links MAY announce the hub; rel tokens are case-insensitive.
        const rel = (element.getAttribute("rel") ?? "").toLowerCase().split(/[\t\n\f\r ]+/);
        if (!rel.includes("mercure")) continue;
        let href: string;
        try {
            href = new URL((element.getAttribute("href") ?? "").trim(), document.baseURI).href;
        } catch {
            continue;
        }
        const hub = discoveredHub(href, element.getAttribute("last-event-id") ?? undefined);
        // [spec] Never downgrades: an https page's link to an http hub is skipped (mixed content, and in the clear).
        if (hub !== null && !downgrades(hub.hub, document.baseURI)) return hub;
    }
    return null;
}

/** The discovery result for a link target: an http(s) URL without fragment; null for anything else. */
export function discoveredHub(href: string, lastEventId?: string): DiscoveredHub | null {
    let hub: URL;
    try {
        hub = new URL(href);
    } catch {
        return null;
    }
    if (hub.protocol !== "https:" && hub.protocol !== "http:") return null;
    hub.hash = "";
    return { hub, metadataUrl: metadataUrlFor(hub), ...(lastEventId !== undefined ? { lastEventId } : {}) };
}

/** Whether reaching `hub` from what announced it (`from`, a URL) would leave HTTPS for plain HTTP. */
export function downgrades(hub: URL, from: string | URL): boolean {
    return hub.protocol === "http:" && new URL(from).protocol === "https:";
}
