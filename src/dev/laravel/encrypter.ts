import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { base64UrlDecode, base64UrlEncode, decodeJsonSegment } from "../jwt/jwt";
import { LaravelDevError } from "./errors";

/** A channel key as the auth response delivers it: exactly these four members. */
export interface ChannelJwk {
    /** Always `"oct"`. */
    kty: "oct";
    /** The 32-byte key, base64url without padding (43 characters). */
    k: string;
    /** Always `"A256GCM"`. */
    alg: "A256GCM";
    /** Always `"enc"`. */
    use: "enc";
}

/** The base64url protected header `{"alg":"dir","enc":"A256GCM"}`, identical on every side. */
export const JWE_PROTECTED_HEADER = base64UrlEncode(JSON.stringify({ alg: "dir", enc: "A256GCM" }));

/** Derive a channel's 32-byte key (HKDF-SHA256, empty salt, info = full channel name). */
export function deriveChannelKey(masterKey: Uint8Array, channel: string): Uint8Array {
    // [spec] laravel-mercure §6.1: PHP hash_hkdf('sha256', key, 32, channel).
    return new Uint8Array(hkdfSync("sha256", masterKey, new Uint8Array(0), Buffer.from(channel, "utf8"), 32));
}

/** The JWK form of a channel key, as granted encrypted channels receive it. */
export function channelJwk(key: Uint8Array): ChannelJwk {
    // [spec] laravel-mercure §6.2: no kid, no key_ops.
    return { kty: "oct", k: base64UrlEncode(key), alg: "A256GCM", use: "enc" };
}

/** Seal a plaintext as compact JWE dir/A256GCM (optional fixed IV for tests; otherwise 12 random bytes). */
export function sealJwe(key: Uint8Array, plaintext: string, iv?: Uint8Array): string {
    // [spec] laravel-mercure §6.3: AES-256-GCM, 96-bit IV, 128-bit tag, AAD = the header segment's ASCII.
    const nonce = iv ?? randomBytes(12);
    if (key.length !== 32) throw new LaravelDevError("invalid_jwe", "The JWE key must be exactly 32 bytes.");
    if (nonce.length !== 12) throw new LaravelDevError("invalid_jwe", "The JWE IV must be exactly 12 bytes.");
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(Buffer.from(JWE_PROTECTED_HEADER, "ascii"));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [JWE_PROTECTED_HEADER, "", base64UrlEncode(nonce), base64UrlEncode(ciphertext), base64UrlEncode(tag)].join(
        ".",
    );
}

/** Open a compact JWE dir/A256GCM; throws a `invalid_jwe` {@link LaravelDevError} on anything wrong. */
export function openJwe(key: Uint8Array, jwe: string): string {
    // [spec] laravel-mercure §6.4: fail closed on every deviation from the format.
    const segments = jwe.split(".");
    if (segments.length !== 5 || segments[1] !== "") {
        throw new LaravelDevError("invalid_jwe", "The value is not a direct-encryption compact JWE.");
    }
    const [head, , ivText, ciphertextText, tagText] = segments as [string, string, string, string, string];
    const header = decodeJsonSegment(head);
    if (header === null || header["alg"] !== "dir" || header["enc"] !== "A256GCM") {
        throw new LaravelDevError("invalid_jwe", "The JWE uses an unsupported algorithm; expected dir with A256GCM.");
    }
    const iv = base64UrlDecode(ivText);
    const ciphertext = base64UrlDecode(ciphertextText);
    const tag = base64UrlDecode(tagText);
    if (iv === null || iv.length !== 12 || ciphertext === null || tag === null || tag.length !== 16) {
        throw new LaravelDevError("invalid_jwe", "The JWE has a malformed IV, ciphertext or tag segment.");
    }
    if (key.length !== 32) throw new LaravelDevError("invalid_jwe", "The JWE key must be exactly 32 bytes.");
    try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv);
        decipher.setAAD(Buffer.from(head, "ascii"));
        decipher.setAuthTag(tag);
        const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
        return new TextDecoder("utf-8", { fatal: true }).decode(plaintext);
    } catch (cause) {
        throw new LaravelDevError("invalid_jwe", "The JWE failed authentication; the key or the ciphertext is wrong.", {
            cause,
        });
    }
}

/** Derives channel keys from the configured master key (HKDF is cheap, so nothing is cached). */
export class ChannelEncrypter {
    /** The configured 32-byte master key. */
    private readonly masterKey: Uint8Array;

    /** Create an encrypter for the decoded `encryption_key`. */
    constructor(masterKey: Uint8Array) {
        this.masterKey = masterKey;
    }

    /** The key of one full channel name. */
    key(channel: string): Uint8Array {
        return deriveChannelKey(this.masterKey, channel);
    }

    /** The JWK of one full channel name. */
    jwk(channel: string): ChannelJwk {
        return channelJwk(this.key(channel));
    }

    /** Seal a plaintext for a channel with a fresh random IV. */
    seal(channel: string, plaintext: string): string {
        return sealJwe(this.key(channel), plaintext);
    }
}

