import { MercureError } from "../errors";

export { hasWebCrypto } from "./load";

/**
 * The error codes the crypto module reports (both part of `MercureErrorCode`).
 *
 * - `decrypt_failed`: an event on an encrypted channel could not be decrypted with that channel's key
 *   (missing or malformed JWK, wrong key, tampered or malformed JWE, no broadcast envelope inside);
 *   it was dropped. The message is the same whatever the reason; the reason is kept as `cause`.
 * - `crypto_unavailable`: WebCrypto (`crypto.subtle`) is missing, as on plain-http pages other than
 *   `localhost`, so encrypted channels cannot be decrypted at all.
 */
export type CryptoErrorCode = "decrypt_failed" | "crypto_unavailable";

/**
 * The one place the crypto module builds its errors: a `MercureError` naming the channel, with one
 * fixed message per code (a decryption failure never says why, so it leaks nothing to an attacker
 * probing with forged ciphertexts; the reason stays in `cause` for debugging).
 */
export function cryptoError(code: CryptoErrorCode, channel: string, cause?: unknown): MercureError {
    const message =
        code === "decrypt_failed"
            ? `An event on encrypted channel "${channel}" could not be decrypted and was dropped; check that the server's broadcasting encryption_key is the one that issued this channel's key.`
            : `Encrypted channel "${channel}" needs WebCrypto (crypto.subtle), which browsers only provide in secure contexts; serve the app over HTTPS or open it on http://localhost.`;
    return new MercureError(code, message, { channel, cause });
}

