import { lazyChunk } from "../lazy-chunk";
import { loadSetup } from "../transport/platform";

/*
 * The only discovery code a connector imports eagerly: two loaders. Everything else (discovery when
 * `host` is absent, diagnostics after a failure) is a separate chunk fetched on first use.
 */

/** What the lazily loaded diagnostics chunk offers: `./diagnose`'s exports. */
export type DiagnosticsModule = typeof import("./diagnose");

/** What the lazily loaded discovery chunk offers: `./discover`'s exports. */
export type DiscoveryModule = typeof import("./discover");

/** Load `diagnose()` and its helpers on first use, once per page. */
export const loadDiagnostics: () => Promise<DiagnosticsModule> = lazyChunk(() => import("./diagnose"));

/**
 * Load `discoverHub()`, `findHub()` and `locateHub()` on first use, once per page, and ask for the platform set-up chunk
 * at the same time: the discovery chunk imports it (the default hub and `fetch` resolve through its checks), so it
 * downloads in parallel instead of after.
 */
export const loadDiscovery: () => Promise<DiscoveryModule> = lazyChunk(() => {
    loadSetup().catch(() => undefined);
    return import("./discover");
});
