import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded crypto chunk offers: `./jwe`'s exports. */
export type CryptoModule = typeof import("./jwe");

/**
 * Load the JWE code on first use, once per page (a separate chunk in the ESM build).
 *
 * Callers check `hasWebCrypto()` first, so that a page without WebCrypto never downloads the chunk.
 */
export const loadCrypto: () => Promise<CryptoModule> = lazyChunk(() => import("./jwe"));

/**
 * Whether WebCrypto's `crypto.subtle` exists here; checked before anything loads the JWE chunk. It lives beside the
 * loader (in the first render, with the encrypted channels' slot that starts the download) rather than with the
 * crypto errors, which stay in their chunk.
 */
export function hasWebCrypto(): boolean {
    // [spec] browser-facts "Secure contexts": crypto.subtle is undefined on plain-http origins but localhost.
    return typeof globalThis.crypto?.subtle?.decrypt === "function";
}
