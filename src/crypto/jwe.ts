// The lazily loaded half of the crypto module: reached only through `loadCrypto()`'s dynamic import,
// so this file stays out of the core bundle. Imports nothing from the rest of the package but
// `./base64url` (used by nothing else), so that the chunk it lands in has no edge back into the core.
//
// Laravel's encrypted channels use exactly one JWE form (laravel-mercure §6.3): compact serialization,
// `alg: "dir"`, `enc: "A256GCM"`, no `zip`. This module implements that form on WebCrypto alone, from
// RFC 7516 (JWE) §5.1–5.2 and RFC 7518 (JWA) §4.5 and §5.3, and refuses every other.
import { decodeBase64url, encodeBase64url } from "./base64url";

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
 * - `segments`: not exactly five dot-separated segments (not a compact JWE).
 * - `base64url`: a segment is not base64url without padding.
 * - `header`: the protected header is not a UTF-8 JSON object.
 * - `alg`, `enc`: the header's `alg` is not `"dir"`, or its `enc` not `"A256GCM"`.
 * - `zip`: the header names a compression (any `zip`); laravel-mercure never compresses.
 * - `crit`: the header names critical extensions (any `crit`), none of which we understand.
 * - `encrypted_key`: the encrypted-key segment is not empty, as direct encryption requires.
 * - `iv`, `tag`: the IV is not 12 bytes, or the authentication tag not 16.
 * - `authentication`: AES-GCM did not authenticate (wrong key, or a tampered segment).
 * - `plaintext`: the plaintext is not UTF-8 JSON of a broadcast envelope (an object with a string `event`).
 */
export type JweRefusalReason =
    | "segments"
    | "base64url"
    | "header"
    | "alg"
    | "enc"
    | "zip"
    | "crit"
    | "encrypted_key"
    | "iv"
    | "tag"
    | "authentication"
    | "plaintext";

/** The one message of each refusal reason. */
const REFUSALS: Readonly<Record<JweRefusalReason, string>> = {
    segments: "The JWE is not a compact serialization of five segments.",
    base64url: "A JWE segment is not base64url without padding.",
    header: "The JWE's protected header is not a JSON object.",
    alg: "The JWE's alg is not dir.",
    enc: "The JWE's enc is not A256GCM.",
    zip: "The JWE's header asks for compression (zip), which laravel-mercure never uses.",
    crit: "The JWE's header names critical extensions (crit), none of which are supported.",
    encrypted_key: "The JWE's encrypted-key segment is not empty, as direct encryption requires.",
    iv: "The JWE's IV is not 12 bytes.",
    tag: "The JWE's authentication tag is not 16 bytes.",
    authentication: "The JWE did not authenticate under this channel's key (wrong key or tampered).",
    plaintext: "The plaintext carries no broadcast envelope (UTF-8 JSON with a string event).",
};

/**
 * A JWE that {@link decryptEnvelope} refused, with the reason as a stable `reason` (kept as the `cause`
 * of the uniform `decrypt_failed` error, for debugging only).
 */
export class JweRefusal extends Error {
    /** Why the JWE was refused. */
    readonly reason: JweRefusalReason;

    /** Create the refusal for `reason`, with that reason's fixed message. */
    constructor(reason: JweRefusalReason) {
        super(REFUSALS[reason]);
        this.name = "JweRefusal";
        this.reason = reason;
    }
}

/** The one protected header we produce, `{"alg":"dir","enc":"A256GCM"}`, as its base64url segment (laravel-mercure §6.3). */
const HEADER_SEGMENT = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0";

/** UTF-8 and ASCII text → bytes (the AAD, the sealed plaintext). */
const encoder = new TextEncoder();

/** Bytes → text, refusing invalid UTF-8 instead of replacing it (reusable: each call decodes a whole input). */
const decoder = new TextDecoder("utf-8", { fatal: true });

/** The AAD of {@link HEADER_SEGMENT}: its ASCII bytes (WebCrypto copies it on every call, so it can be shared). */
const HEADER_AAD = encoder.encode(HEADER_SEGMENT);

/** AES-GCM's IV and tag lengths in bytes for A256GCM (RFC 7518 §5.3: 96-bit IV, 128-bit tag). */
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A 32-byte key in base64url without padding is exactly 43 characters of the URL-safe alphabet. */
const KEY_43 = /^[A-Za-z0-9_-]{43}$/;

/**
 * Import a channel's JWK from the auth response as a non-extractable AES-256-GCM key.
 *
 * Only `{"kty":"oct","k":<32 bytes>}` with `alg` absent or `"A256GCM"`, `use` absent or `"enc"`, and `key_ops`
 * absent or a list of distinct operations that allows `decrypt` is accepted; anything else rejects. The key may
 * do what `key_ops` allows of `encrypt` (whispers) and `decrypt`, both when absent. Other members (`ext`, `kid`) are
 * ignored.
 */
export async function importChannelKey(jwk: unknown): Promise<CryptoKey> {
    if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) throw new Error("The JWK is not an object.");
    const { kty, k, alg, use, key_ops: ops } = jwk as Record<string, unknown>;
    // [spec] laravel-mercure §6.2: {"kty":"oct","k":"<43 chars>","alg":"A256GCM","use":"enc"}.
    if (kty !== "oct") throw new Error("The JWK is not a symmetric (oct) key.");
    if (typeof k !== "string" || !KEY_43.test(k)) throw new Error("The JWK's k is not 32 bytes of base64url.");
    if (alg !== undefined && alg !== "A256GCM") throw new Error("The JWK's alg is not A256GCM.");
    if (use !== undefined && use !== "enc") throw new Error("The JWK's use is not enc.");
    // [spec] RFC 7517 §4.3: key_ops lists distinct operations the key is for; one that forbids decrypting is refused.
    const usages: KeyUsage[] = ["encrypt", "decrypt"];
    if (ops !== undefined) {
        if (!Array.isArray(ops) || new Set(ops).size !== ops.length || !ops.includes("decrypt")) throw new Error("The JWK's key_ops do not allow decrypt.");
        if (!ops.includes("encrypt")) usages.shift();
    }
    // Only the members we checked reach WebCrypto: a stray `ext` cannot change the key.
    return crypto.subtle.importKey("jwk", { kty: "oct", k, alg: "A256GCM" }, { name: "AES-GCM" }, false, usages);
}

/**
 * Decrypt one compact JWE (dir / A256GCM) with a channel key and read the broadcast inside.
 *
 * Rejects with a {@link JweRefusal}, never returns partial data, when anything is off: see
 * {@link JweRefusalReason} for every case, checked in that order.
 */
export async function decryptEnvelope(jwe: string, key: CryptoKey): Promise<DecryptedEnvelope> {
    // [spec] RFC 7516 §7.1: BASE64URL(header) . BASE64URL(encrypted key) . BASE64URL(IV) . BASE64URL(ciphertext) . BASE64URL(tag).
    const segments = jwe.split(".");
    if (segments.length !== 5) throw new JweRefusal("segments");
    const [head, encryptedKey, ivText, ciphertextText, tagText] = segments as [string, string, string, string, string];
    const headerBytes = decodeBase64url(head);
    const iv = decodeBase64url(ivText);
    const ciphertext = decodeBase64url(ciphertextText);
    const tag = decodeBase64url(tagText);
    if (!headerBytes || !decodeBase64url(encryptedKey) || !iv || !ciphertext || !tag) throw new JweRefusal("base64url");
    // The header every sender produces needs no parsing; any other spelling is read and checked member by member.
    if (head !== HEADER_SEGMENT) checkHeader(headerBytes);
    // [spec] RFC 7518 §4.5: with dir the encrypted key is the empty octet sequence.
    if (encryptedKey !== "") throw new JweRefusal("encrypted_key");
    // [spec] RFC 7518 §5.3: A256GCM uses a 96-bit IV and a 128-bit tag.
    if (iv.length !== IV_BYTES) throw new JweRefusal("iv");
    if (tag.length !== TAG_BYTES) throw new JweRefusal("tag");
    // WebCrypto's AES-GCM takes the ciphertext with the tag appended.
    const sealed = new Uint8Array(ciphertext.length + TAG_BYTES);
    sealed.set(ciphertext);
    sealed.set(tag, ciphertext.length);
    // [spec] laravel-mercure §6.3, RFC 7516 §5.2 step 14: AAD = the ASCII bytes of the header segment as received.
    const additionalData = head === HEADER_SEGMENT ? HEADER_AAD : encoder.encode(head);
    let plaintext: ArrayBuffer;
    try {
        plaintext = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData, tagLength: 128 }, key, sealed);
    } catch {
        throw new JweRefusal("authentication");
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
        await crypto.subtle.encrypt(
            { name: "AES-GCM", iv, additionalData: HEADER_AAD, tagLength: 128 },
            key,
            encoder.encode(JSON.stringify(plaintext)),
        ),
    );
    const cut = sealed.length - TAG_BYTES;
    // [spec] laravel-mercure §6.3: header . "" . IV . ciphertext . tag.
    return `${HEADER_SEGMENT}..${encodeBase64url(iv)}.${encodeBase64url(sealed.subarray(0, cut))}.${encodeBase64url(sealed.subarray(cut))}`;
}

/** Check a protected header other than the canonical segment; throws the first reason it is refused for. */
function checkHeader(bytes: Uint8Array): void {
    const header = readJson(bytes, "header");
    if (typeof header !== "object" || header === null || Array.isArray(header)) throw new JweRefusal("header");
    // [spec] laravel-mercure §6.4: alg = dir and enc = A256GCM only; §6.3: no zip.
    if ((header as Record<string, unknown>)["alg"] !== "dir") throw new JweRefusal("alg");
    if ((header as Record<string, unknown>)["enc"] !== "A256GCM") throw new JweRefusal("enc");
    if (Object.hasOwn(header, "zip")) throw new JweRefusal("zip");
    // [spec] RFC 7515 §4.1.11 (by RFC 7516 §4.1.13): a recipient that does not understand a listed extension must refuse.
    if (Object.hasOwn(header, "crit")) throw new JweRefusal("crit");
}

/** Read the broadcast envelope out of a decrypted plaintext; throws `plaintext` when there is none. */
function readEnvelope(plaintext: ArrayBuffer): DecryptedEnvelope {
    const body = readJson(plaintext, "plaintext");
    // [spec] §6.4: a plaintext without a string event (also: not an object) carries no broadcast envelope.
    if (typeof body !== "object" || body === null || typeof (body as Record<string, unknown>)["event"] !== "string") throw new JweRefusal("plaintext");
    const { event, payload, socket } = body as Record<string, unknown>;
    return { event: event as string, payload, socket: typeof socket === "string" && socket !== "" ? socket : null };
}

/** The UTF-8 JSON value in `bytes`; throws the refusal `reason` when they are not UTF-8 or not JSON. */
function readJson(bytes: Uint8Array | ArrayBuffer, reason: JweRefusalReason): unknown {
    try {
        return JSON.parse(decoder.decode(bytes));
    } catch {
        throw new JweRefusal(reason);
    }
}
