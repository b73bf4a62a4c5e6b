// The lazily loaded half of the crypto module: reached only through `loadCrypto()`'s dynamic import,
// so this file and `jose` stay out of the core bundle. Imports nothing from the rest of the package, so
// that the chunk it lands in has no edge back into the core.
//
// Laravel's encrypted channels use exactly one JWE form (laravel-mercure §6.3): compact serialization,
// `alg: "dir"`, `enc: "A256GCM"`, no `zip`. jose decrypts it, allowed that pair only; this file adds what jose
// leaves to the caller: the key imported once per channel, and the broadcast read out of the plaintext. Sealing
// (encrypted whispers) is one AES-GCM call on WebCrypto with jose's base64url: jose's `CompactEncrypt` would add
// its whole encryption path (about 2 kB min+gzip) to produce the same five segments.
import { base64url, compactDecrypt, importJWK, type DecryptOptions } from "jose";

/** A decrypted broadcast: the plaintext `{event, payload, socket}` of laravel-mercure §6.3. */
export interface DecryptedEnvelope {
    /** The event name, exactly as the server broadcast it. */
    event: string;
    /** The event payload (any JSON value; `undefined` when the server sent none). */
    payload: unknown;
    /** The sender's socket id for `toOthers()`, or `null` when absent or empty. */
    socket: string | null;
}

/**
 * Why {@link decryptEnvelope} refused a JWE (each has one fixed message, see {@link JweRefusal}).
 *
 * - `compact`: not five dot-separated segments of base64url characters (checked before jose sees it).
 * - `invalid`: jose refused the JWE before decrypting it or after: an `alg` other than `dir` or an `enc` other
 *   than `A256GCM`, any `zip` or `crit`, a non-empty encrypted key, an IV other than 12 bytes or a tag other
 *   than 16, a protected header that is not a JSON object, a segment that is not base64url. jose's error
 *   (its `code` says which class) is the refusal's `cause`.
 * - `authentication`: AES-GCM did not authenticate (wrong key, or a tampered segment).
 * - `plaintext`: the plaintext is not UTF-8 JSON of a broadcast envelope (an object with a string `event`).
 */
export type JweRefusalReason = "compact" | "invalid" | "authentication" | "plaintext";

/** The one message of each refusal reason. */
const REFUSALS: Readonly<Record<JweRefusalReason, string>> = {
    compact: "The JWE is not a compact serialization: five segments of base64url characters.",
    invalid: "The JWE is not dir / A256GCM without zip or crit, with a 12-byte IV and a 16-byte tag.",
    authentication: "The JWE did not authenticate under this channel's key (wrong key or tampered).",
    plaintext: "The plaintext carries no broadcast envelope (UTF-8 JSON with a string event).",
};

/**
 * A JWE that {@link decryptEnvelope} refused, with the reason as a stable `reason` (kept as the `cause`
 * of the uniform `decrypt_failed` error, for debugging only); jose's own error, if any, is its `cause`.
 */
export class JweRefusal extends Error {
    /** Why the JWE was refused. */
    readonly reason: JweRefusalReason;

    /** Create the refusal for `reason`, with that reason's fixed message. */
    constructor(reason: JweRefusalReason, cause?: unknown) {
        super(REFUSALS[reason], { cause });
        this.name = "JweRefusal";
        this.reason = reason;
    }
}

/** The one protected header Laravel produces and we seal with (laravel-mercure §6.3). */
const HEADER = { alg: "dir", enc: "A256GCM" } as const;

/** {@link HEADER} as its base64url segment, as Laravel and jose serialize it. */
const HEADER_SEGMENT = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0";

/** UTF-8 and ASCII text → bytes (the AAD, the sealed plaintext). */
const encoder = new TextEncoder();

/** The AAD of a sealed JWE: the ASCII bytes of {@link HEADER_SEGMENT} (WebCrypto copies it on every call, so it can be shared). */
const HEADER_AAD = encoder.encode(HEADER_SEGMENT);

/** AES-GCM's IV and tag lengths in bytes for A256GCM (RFC 7518 §5.3: 96-bit IV, 128-bit tag). */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * jose's options for every decryption, built once: `dir` and `A256GCM` only (§6.4), and `maxDecompressedLength: 0`,
 * with which jose refuses a `zip: "DEF"` plaintext instead of inflating it (it refuses every other `zip` anyway, §6.3).
 */
const DECRYPT: DecryptOptions = {
    keyManagementAlgorithms: [HEADER.alg],
    contentEncryptionAlgorithms: [HEADER.enc],
    maxDecompressedLength: 0,
};

/**
 * Five segments of the base64url alphabet (`\w` is `[A-Za-z0-9_]`). jose decodes with `atob` or
 * `Uint8Array.fromBase64`, which skip whitespace and accept `=` padding; this keeps those spellings out.
 */
const COMPACT = /^[\w-]*\.[\w-]*\.[\w-]*\.[\w-]*\.[\w-]*$/;

/** Bytes → text, refusing invalid UTF-8 instead of replacing it (reusable: each call decodes a whole input). */
const decoder = new TextDecoder("utf-8", { fatal: true });

/** A 32-byte key in base64url without padding is exactly 43 characters of the URL-safe alphabet. */
const KEY_43 = /^[\w-]{43}$/;

/**
 * Import a channel's JWK from the auth response as a non-extractable AES-256-GCM key, once per key: jose is then
 * handed the key itself for every message, so no message imports it again.
 *
 * Only `{"kty":"oct","k":<32 bytes>}` is accepted, with `alg` absent or `"A256GCM"`, `use` absent or `"enc"`, and
 * `key_ops` absent or a list of distinct strings that allows `decrypt`: the checks jose makes of a JWK it is given
 * to decrypt with (jose's `importJWK` returns an oct key's bytes without them). The key may do what `key_ops`
 * allows of `encrypt` (whispers) and `decrypt`, both when absent. Other members (`ext`, `kid`) are ignored.
 */
export async function importChannelKey(jwk: unknown): Promise<CryptoKey> {
    if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw new Error("The JWK is not an object.");
    const { kty, k, alg, use, key_ops: ops } = jwk as Record<string, unknown>;
    // [spec] laravel-mercure §6.2: {"kty":"oct","k":"<43 chars>","alg":"A256GCM","use":"enc"}.
    if (kty !== "oct") throw new Error("The JWK is not a symmetric (oct) key.");
    if (typeof k !== "string" || !KEY_43.test(k)) throw new Error("The JWK's k is not 32 bytes of base64url.");
    if (alg !== undefined && alg !== HEADER.enc) throw new Error("The JWK's alg is not A256GCM.");
    if (use !== undefined && use !== "enc") throw new Error("The JWK's use is not enc.");
    // [spec] RFC 7517 §4.3: key_ops lists distinct operations the key is for; one that forbids decrypting is refused.
    // jose's importJWK refuses key_ops that are not distinct strings; decrypt must be among them.
    if (ops !== undefined && !(Array.isArray(ops) && ops.includes("decrypt"))) throw new Error("The JWK's key_ops do not allow decrypt.");
    // Only the members we checked reach jose: a stray `ext` cannot change the key.
    const bytes = await importJWK({ kty, k, ...(ops !== undefined && { key_ops: ops as string[] }) }, HEADER.enc);
    const usages: KeyUsage[] = ops === undefined || (ops as unknown[]).includes("encrypt") ? ["encrypt", "decrypt"] : ["decrypt"];
    return crypto.subtle.importKey("raw", bytes as Uint8Array<ArrayBuffer>, { name: "AES-GCM" }, false, usages);
}

/**
 * Decrypt one compact JWE (dir / A256GCM) with a channel key and read the broadcast inside.
 *
 * Rejects with a {@link JweRefusal}, never returns partial data, when anything is off: see
 * {@link JweRefusalReason} for every case.
 */
export async function decryptEnvelope(jwe: string, key: CryptoKey): Promise<DecryptedEnvelope> {
    // [spec] RFC 7516 §7.1: BASE64URL(header) . BASE64URL(encrypted key) . BASE64URL(IV) . BASE64URL(ciphertext) . BASE64URL(tag).
    if (!COMPACT.test(jwe)) throw new JweRefusal("compact");
    let plaintext: Uint8Array;
    try {
        // [spec] laravel-mercure §6.3-6.4, RFC 7516 §5.2: jose checks the header, authenticates the header segment
        // as received (the AAD) with the IV, ciphertext and tag, and only then returns the plaintext.
        ({ plaintext } = await compactDecrypt(jwe, key, DECRYPT));
    } catch (cause) {
        throw new JweRefusal(isCode(cause, "ERR_JWE_DECRYPTION_FAILED") ? "authentication" : "invalid", cause);
    }
    return readEnvelope(plaintext);
}

/**
 * Seal a plaintext (for an encrypted whisper) as compact JWE with the header `{"alg":"dir","enc":"A256GCM"}`,
 * under a fresh random 12-byte IV drawn for this call (laravel-mercure §7.2).
 */
export async function sealEnvelope(plaintext: object, key: CryptoKey): Promise<string> {
    // [spec] RFC 7518 §5.3: a 96-bit IV, never reused under one key; random IVs make that overwhelmingly likely.
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = new Uint8Array(
        await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: HEADER_AAD, tagLength: 128 }, key, encoder.encode(JSON.stringify(plaintext))),
    );
    const cut = sealed.length - TAG_BYTES;
    // [spec] laravel-mercure §6.3, RFC 7516 §7.1: header . "" (dir) . IV . ciphertext . tag.
    return `${HEADER_SEGMENT}..${base64url.encode(iv)}.${base64url.encode(sealed.subarray(0, cut))}.${base64url.encode(sealed.subarray(cut))}`;
}

/** Whether `error` is a jose error of class `code`. */
function isCode(error: unknown, code: string): boolean {
    return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/** Read the broadcast envelope out of a decrypted plaintext; throws `plaintext` when there is none. */
function readEnvelope(plaintext: Uint8Array): DecryptedEnvelope {
    let body: unknown;
    try {
        body = JSON.parse(decoder.decode(plaintext));
    } catch {
        throw new JweRefusal("plaintext");
    }
    // [spec] §6.4: a plaintext without a string event (also: not an object) carries no broadcast envelope.
    if (typeof body !== "object" || body === null || typeof (body as Record<string, unknown>)["event"] !== "string") throw new JweRefusal("plaintext");
    const { event, payload, socket } = body as Record<string, unknown>;
    return { event: event as string, payload, socket: typeof socket === "string" && socket !== "" ? socket : null };
}
