// The lazily loaded half of the crypto module: reached only through `loadCrypto()`'s dynamic import,
// so `jose` and this file stay out of the core bundle. Imports nothing from the rest of the package,
// so that the chunk it lands in has no edge back into the core.
import { CompactEncrypt, compactDecrypt } from "jose";

/** A decrypted broadcast: the plaintext `{event, payload, socket}` of laravel-mercure §6.3. */
export interface DecryptedEnvelope {
    /** The event name, exactly as the server broadcast it. */
    event: string;
    /** The event payload (any JSON value; `undefined` when the server sent none). */
    payload: unknown;
    /** The sender's socket id for `toOthers()`, or `null` when absent or empty. */
    socket: string | null;
}

/** The one protected header we produce and accept (laravel-mercure §6.3). */
const HEADER = { alg: "dir", enc: "A256GCM" } as const;

/** A 32-byte key in base64url without padding is exactly 43 characters of the URL-safe alphabet. */
const KEY_43 = /^[A-Za-z0-9_-]{43}$/;

/**
 * Import a channel's JWK from the auth response as a non-extractable AES-256-GCM key.
 *
 * Only `{"kty":"oct","k":<32 bytes>}` with `alg` absent or `"A256GCM"` is accepted; anything else rejects.
 */
export async function importChannelKey(jwk: unknown): Promise<CryptoKey> {
    if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw new Error("The JWK is not an object.");
    const { kty, k, alg } = jwk as Record<string, unknown>;
    // [spec] laravel-mercure §6.2: {"kty":"oct","k":"<43 chars>","alg":"A256GCM","use":"enc"}.
    if (kty !== "oct") throw new Error("The JWK is not a symmetric (oct) key.");
    if (typeof k !== "string" || !KEY_43.test(k)) throw new Error("The JWK's k is not 32 bytes of base64url.");
    if (alg !== undefined && alg !== "A256GCM") throw new Error("The JWK's alg is not A256GCM.");
    // Only the members we checked reach WebCrypto: a stray `key_ops` or `ext` cannot change the key's use.
    return crypto.subtle.importKey("jwk", { kty: "oct", k, alg: "A256GCM" }, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
}

/**
 * Decrypt one compact JWE (dir / A256GCM) with a channel key and read the broadcast inside.
 *
 * Rejects, never returns partial data, when anything is off. jose enforces (jose 6.2, `lib/jwe_decrypt.js`):
 * exactly five segments, `alg` and `enc` on the allow-lists below, an empty encrypted-key segment for
 * `dir`, a 96-bit IV and 128-bit tag, `crit`, and the GCM tag over the protected header as AAD. It
 * would inflate a `zip: "DEF"` plaintext unless `maxDecompressedLength` is 0, which refuses any `zip`.
 * The plaintext must then be UTF-8 JSON with a string `event`.
 */
export async function decryptEnvelope(jwe: string, key: CryptoKey): Promise<DecryptedEnvelope> {
    // [spec] laravel-mercure §6.4: dir + A256GCM only; jose authenticates the header segment as AAD.
    const { plaintext } = await compactDecrypt(jwe, key, {
        keyManagementAlgorithms: [HEADER.alg],
        contentEncryptionAlgorithms: [HEADER.enc],
        // [spec] §6.3: no zip. 0 makes jose refuse a compressed plaintext instead of inflating it.
        maxDecompressedLength: 0,
    });
    const body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(plaintext)) as Record<string, unknown> | null;
    // [spec] §6.4: a plaintext without a string event (also: not an object) carries no broadcast envelope.
    if (typeof body?.["event"] !== "string") throw new Error("The plaintext carries no event name.");
    const socket = body["socket"];
    return { event: body["event"], payload: body["payload"], socket: typeof socket === "string" && socket !== "" ? socket : null };
}

/**
 * Seal a plaintext (for an encrypted whisper) as compact JWE with the header `{"alg":"dir","enc":"A256GCM"}`.
 *
 * jose draws a fresh random 12-byte IV for every call (laravel-mercure §7.2).
 */
export async function sealEnvelope(plaintext: object, key: CryptoKey): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(plaintext))).setProtectedHeader(HEADER).encrypt(key);
}
