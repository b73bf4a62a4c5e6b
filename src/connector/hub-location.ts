import { discoverFromDocument, type DocumentLike } from "../discovery/link-element";
import { loadDiscovery } from "../discovery/load";
import { MercureError } from "../errors";
import { resolveFetch, type FetchLike } from "../transport/platform";

/*
 * Where a connector's hub is (mercure-hub §5): the `host` option, else a `<link rel="mercure">` in the
 * page, else the `Link` header of the `discover` URL, else `/.well-known/mercure` on the page origin. Only
 * the `discover` step is asynchronous and loads the discovery chunk; the others cost nothing.
 */

/** How the connector found its hub. */
export type HubSource = "option" | "link-element" | "link-header" | "well-known";

/** The hub the connector uses, as found. */
export interface HubLocation {
    /** The `host` to resolve the platform with; null for the default (`/.well-known/mercure`, or `missing_platform` outside a browser). */
    readonly host: string | null;
    /** The link's `last-event-id`: the first `last_event_id`, so that nothing published since the page was rendered is missed. */
    readonly lastEventId?: string;
    /** How it was found. */
    readonly source: HubSource;
}

/**
 * The hub known without a request: the `host` option, else the page's `<link rel="mercure">`, else the
 * default; null when the `discover` URL must be fetched first (see {@link locateByLink}).
 */
export function locateNow(
    host: string | null | undefined,
    discover: unknown,
    document: DocumentLike | null = (globalThis as { document?: DocumentLike }).document ?? null,
): HubLocation | null {
    if (host) return { host, source: "option" };
    const linked = document === null ? null : discoverFromDocument(document);
    if (linked !== null) return { host: linked.hub.href, source: "link-element", ...lastEventId(linked.lastEventId) };
    if (typeof discover === "string" && discover !== "") return null;
    return { host: null, source: "well-known" };
}

/**
 * The hub the `discover` URL's `Link: <…>; rel="mercure"` header names, or the `MercureError` saying why
 * there is none (`discovery_failed` naming the URL and what to add; `missing_platform` without `fetch`).
 */
export async function locateByLink(discover: string, fetch: FetchLike | undefined, signal: AbortSignal): Promise<HubLocation | MercureError> {
    try {
        const found = await (await loadDiscovery()).discoverHub(discover, { fetch: resolveFetch(fetch), signal });
        return { host: found.hub.href, source: "link-header", ...lastEventId(found.lastEventId) };
    } catch (error) {
        return error instanceof MercureError ? error : new MercureError("discovery_failed", `Loading the hub discovery for "${discover}" failed: check the network, or set the connector's host.`, { cause: error });
    }
}

function lastEventId(id: string | undefined): { lastEventId?: string } {
    return id === undefined || id === "" ? {} : { lastEventId: id };
}
