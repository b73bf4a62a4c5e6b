import type { HubTokenOption } from "../auth/hub-token";
import { lazyChunk, type LazyChunk } from "../lazy-chunk";
import { hasHubToken } from "../transport/platform";

/*
 * The only code of tab sharing in the core: whether sharing applies, and two loaders. The share client (the election,
 * the buses, the virtual `EventSource`s: `./share-platform`) is a chunk loaded as soon as a connector knows it will
 * share, and the hub engine (`./leadership`) a chunk the leading tab loads next.
 */

/** What the lazily loaded share client chunk offers: `./share-platform`'s exports. */
export type ShareModule = typeof import("./share-platform");

/** What the lazily loaded engine chunk offers: `./leadership`'s exports (the engine with it). */
export type EngineModule = typeof import("./leadership");

/** Load the hub engine on first use, once per page (a separate chunk: only the leading tab needs it). */
export const loadEngine: () => Promise<EngineModule> = lazyChunk(() => import("./leadership"));

/**
 * Load the share client on first use, once per page (a separate chunk: a page whose tabs never share never needs it),
 * and prefetch the engine chunk beside it: a lone tab leads at once and needs the engine next, so it downloads in
 * parallel instead of after (a failed prefetch is the leading tab's to retry and report: see `TabLink`). Both import
 * the tabs' protocol, a chunk of its own: it is asked for at the same time too, not once one of them has arrived.
 */
export const loadShare: LazyChunk<ShareModule> = lazyChunk(() => {
    import("./protocol").catch(() => undefined);
    loadEngine().catch(() => undefined);
    return import("./share-platform");
});

/** The connector options that decide whether its tabs share one hub connection. */
export interface ShareChoice {
    /** The `shareAcrossTabs` option (default true). */
    readonly shareAcrossTabs?: boolean;
    /** The `hubToken` option: with one, each tab sends its own header (see `sharePlatform`). */
    readonly hubToken?: HubTokenOption | null;
    /** @internal Tests only: the browser APIs to share with instead of the page's. */
    readonly shareEnvironment?: object;
}

/**
 * Whether a connector with these options shares its hub connection with the other tabs, so that it needs the share
 * client chunk: not with `shareAcrossTabs: false` or a `hubToken`, nor where the page lacks Web Locks (not a secure
 * context), `BroadcastChannel` or a `window` (outside a browser).
 */
export function sharingApplies(options: ShareChoice): boolean {
    if (options.shareAcrossTabs === false || hasHubToken(options.hubToken)) return false;
    return options.shareEnvironment !== undefined || pageCanShare();
}

/** Whether the page has what sharing needs: Web Locks (happy-dom and some embedded browsers have `navigator.locks` null), `BroadcastChannel`, `window`. */
export function pageCanShare(): boolean {
    const scope = globalThis as { navigator?: { locks?: { request?: unknown } | null }; BroadcastChannel?: unknown; window?: unknown };
    return typeof scope.navigator?.locks?.request === "function" && typeof scope.BroadcastChannel === "function" && scope.window != null;
}
