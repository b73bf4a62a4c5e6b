import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded crypto chunk offers: `./jwe`'s exports. */
export type CryptoModule = typeof import("./jwe");

/**
 * Load the JWE code on first use, once per page (a separate chunk in the ESM build).
 *
 * Callers check `hasWebCrypto()` first, so that a page without WebCrypto never downloads the chunk.
 */
export const loadCrypto: () => Promise<CryptoModule> = lazyChunk(() => import("./jwe"));
