/** What the lazily loaded crypto chunk offers: `./jwe`'s exports. */
export type CryptoModule = typeof import("./jwe");

/** The one in-flight or finished load, shared by every caller; cleared when a load fails so it can retry. */
let loading: Promise<CryptoModule> | undefined;

/**
 * Load the JWE code on first use, once per page (a separate chunk in the ESM build).
 *
 * Callers check `hasWebCrypto()` first, so that a page without WebCrypto never downloads the chunk.
 */
export function loadCrypto(): Promise<CryptoModule> {
    loading ??= import("./jwe").catch((error: unknown) => {
        loading = undefined; // A chunk that failed to download (offline, deploy in between) is retried next time.
        throw error;
    });
    return loading;
}
