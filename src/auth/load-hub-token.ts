import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded hub-token chunk offers: `./hub-token`'s exports (the token source, the fetch that adds it). */
export type HubTokenModule = typeof import("./hub-token");

/**
 * Load the `hubToken` machinery on first use, once per page (a separate chunk in the ESM and CJS builds): only a
 * connector with the `hubToken` option (header auth) needs it, before its first auth request.
 */
export const loadHubToken: () => Promise<HubTokenModule> = lazyChunk(() => import("./hub-token"));
