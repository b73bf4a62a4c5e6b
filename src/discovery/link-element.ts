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
    /** The document's base URL, against which `href`s resolve when {@link DocumentLike.URL} is absent. */
    readonly baseURI: string;
    /**
     * The document's address (a DOM `Document`'s `URL`): with it, `href`s resolve against the `<base href>` of
     * `<head>` if there is one, else against it; a `<base>` elsewhere is not honoured.
     */
    readonly URL?: string;
    /** Find elements by CSS selector. */
    querySelectorAll(selectors: string): ArrayLike<{ getAttribute(name: string): string | null }>;
}

/**
 * Find the hub a page announces with `<link rel="mercure" href="…">` in its `<head>` (the first such link with a
 * valid http(s) URL), honouring its `last-event-id` attribute; null when there is none. Only `<head>` counts: it is
 * the server's markup, where a `<body>` often holds what users wrote, and a link injected there must not move the
 * stream to another hub (forged events, the hub token sent there); a `<base href>` injected there must not either.
 */
export function discoverFromDocument(document: DocumentLike): DiscoveredHub | null {
    const base = headBase(document);
    if (base === null) return null;
    // [spec] mercure-hub §5, read from the <head> only: its links, and the links the parser moved there.
    const elements = document.querySelectorAll("head > link[rel][href]");
    for (let i = 0; i < elements.length; i++) {
        const element = elements[i]!;
        // [spec] mercure-hub §5: HTML links MAY announce the hub; rel tokens are case-insensitive.
        const rel = (element.getAttribute("rel") ?? "").toLowerCase().split(/[\t\n\f\r ]+/);
        if (!rel.includes("mercure")) continue;
        let href: string;
        try {
            href = new URL((element.getAttribute("href") ?? "").trim(), base).href;
        } catch {
            continue;
        }
        const hub = discoveredHub(href, element.getAttribute("last-event-id") ?? undefined);
        // [spec] Never downgrades: an https page's link to an http hub is skipped (mixed content, and in the clear).
        if (hub !== null && !downgrades(hub.hub, base)) return hub;
    }
    return null;
}

/**
 * The URL the `<head>`'s links resolve against: without {@link DocumentLike.URL}, `baseURI` as given; with it, the
 * first `<base href>` of `<head>` against it (as the browser does when that one comes first), else the address itself.
 * Null when neither parses (a document member shadowed by an element: DOM clobbering).
 */
function headBase(document: DocumentLike): string | null {
    const address = document.URL ?? document.baseURI;
    const base = document.URL === undefined ? null : document.querySelectorAll("head > base[href]")[0]?.getAttribute("href");
    for (const candidate of [base?.trim(), ""]) {
        try {
            if (candidate !== undefined) return new URL(candidate, address).href;
        } catch {
            // An invalid <base href> falls back to the address, as in HTML.
        }
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
