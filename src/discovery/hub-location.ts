import { discoverFromDocument, type DocumentLike } from "./link-element";
import { loadDiscovery } from "./load";
import type { HubTokenOption } from "../auth/hub-token";
import { MercureError } from "../errors";
import { sharePlatform, type ShareEnvironment } from "../share/share-platform";
import { streamBudget } from "../transport/connection-budget";
import { resolveFetch, resolvePlatform, type EventSourceConstructor, type FetchLike, type Platform } from "../transport/platform";

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

/** The connector options that say where the hub is and how to reach it. */
export interface HubOptions {
    /** The `host` option. */
    readonly host?: string | null;
    /** The `discover` option. */
    readonly discover?: string | null;
    /** The `authEndpoint` option. */
    readonly authEndpoint: string;
    /** The `eventSource` option. */
    readonly eventSource?: EventSourceConstructor;
    /** The `fetch` option. */
    readonly fetch?: FetchLike;
    /** The `hubToken` option (header auth). */
    readonly hubToken?: HubTokenOption | null;
    /** The `heartbeatTimeout` option (`event-source-polyfill`'s). */
    readonly heartbeatTimeout?: number;
    /** The `shareAcrossTabs` option (default true): see {@link sharePlatform}. */
    readonly shareAcrossTabs?: boolean;
    /** @internal Tests only: the browser APIs sharing uses, instead of the page's. */
    readonly shareEnvironment?: ShareEnvironment;
}

/**
 * The hub of one connector: where it is ({@link locateNow}, else {@link locateByLink}) and the platform
 * resolved for it at first use. {@link HubLocator.forget} (on `disconnect()`) drops both: the next
 * connection looks the hub up again.
 */
export class HubLocator {
    /** Where the hub is (the `host` option, the page's `<link>`, the `discover` URL), or null until looked up. */
    private location: HubLocation | null = null;

    /** The platform resolved for the located hub, or null until {@link HubLocator.resolve}. */
    platform: Platform | null = null;

    /** Whether the located hub's `last-event-id` was offered as the first cursor (once per connector). */
    private cursorOffered = false;

    /** Whether the hub is known, looking it up in `options` without a request when it is not; false: call {@link HubLocator.discover}. */
    locate(options: HubOptions): boolean {
        this.location ??= locateNow(options.host, options.discover);
        return this.location !== null;
    }

    /**
     * [spec] mercure-hub §5: find the hub from the `Link` header of the `discover` URL in `options`: true when found, the
     * error when not (`status` set: the URL answered without a link), false when `signal` aborted first.
     */
    async discover(options: HubOptions, signal: AbortSignal, log: ((step: string, detail: object) => void) | null): Promise<boolean | MercureError> {
        log?.("discover", { url: options.discover });
        const found = await locateByLink(String(options.discover), options.fetch, signal);
        if (signal.aborted) return false;
        if (found instanceof Error) return found;
        this.location = found;
        return true;
    }

    /**
     * Resolve the platform for the located hub with `options` (throws a `MercureError` naming the missing piece), and offer
     * the link's `last-event-id` to `cursor` if it has none, once per connector (not after a `disconnect()`).
     */
    resolve(options: HubOptions, cursor: { cursor: string | null }, log: ((step: string, detail: object) => void) | null): Platform {
        const location = this.location;
        // Shared across tabs when the browser allows it: the auth and the streams go to the leading tab's engine.
        const platform = sharePlatform(resolvePlatform({ ...options, host: location?.host ?? options.host }), options);
        this.platform = platform;
        log?.("hub", { url: platform.hub.href, source: location?.source });
        // [spec] mercure-hub §5: a link's last-event-id is the first cursor (not after a disconnect()).
        if (!this.cursorOffered) cursor.cursor ??= location?.lastEventId ?? null;
        this.cursorOffered = true;
        return platform;
    }

    /** How many streams the connector may hold on the hub (see {@link streamBudget}); unlimited until resolved. */
    budget(): number {
        return this.platform === null ? Infinity : streamBudget(this.platform.hub);
    }

    /** Forget the hub and its platform (`disconnect()`). */
    forget(): void {
        this.platform?.release?.();
        this.location = null;
        this.platform = null;
    }
}

function lastEventId(id: string | undefined): { lastEventId?: string } {
    return id === undefined || id === "" ? {} : { lastEventId: id };
}
