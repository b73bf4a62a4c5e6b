import { createCipheriv } from "node:crypto";

/** The §6.5 channel keys (laravel-mercure), as the auth response delivers them. */
export const JWKS = {
    "private-encrypted-orders.1": jwk("_krVFJmDXMqUC2MJsPo6mWlCfgj2aj3NZ5FI5NCVfDE"),
    "private-encrypted-room.1": jwk("zbrTANhmpD0YGFr7V0TtXWAe0i3rThfOowUuGBsoyNM"),
    "private-encrypted-a": jwk("AJiGp4LbTrTTzjNlvFSFfr-dnyyItVDVS6OI5uKDWsA"),
    "private-encrypted-b": jwk("uIJcHAjV9m6MTfWDW6h07axZjta91FiQlTwke1DcTSY"),
} as const;

/** The §6.5 key of `private-encrypted-a` under the other master key (sha256 of "mercure-encrypter-test-key"). */
export const ENCRYPTER_A_JWK = jwk("KxhqwWdo1kQBOjRy7llMeWjHcxywa-LdE2wgKcUw3ts");

/** The §6.5 deterministic JWE (fixed IV 000102…0b) for `private-encrypted-room.1`. */
export const VECTOR_JWE =
    "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAECAwQFBgcICQoL.sfZ2hzdSMmxMvWqxvtNcffVoKHj34TqAvFH6BeWESxLKCXnTHCu0oCX69wAfftd3VDEXt4cKn-RTs7zTo5aM8qMK3P0.mP0tlpD4dQGCaigpT0hlSw";

/** What {@link VECTOR_JWE} decrypts to. */
export const VECTOR_PLAINTEXT = '{"event":"MessageSent","payload":{"text":"hi"},"socket":"abcd.1234"}';

/** The header every sender produces, `{"alg":"dir","enc":"A256GCM"}`, in its base64url form. */
export const HEADER_SEGMENT = "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0";

/** A §6.2 JWK around a base64url key. */
export function jwk(k: string): { kty: "oct"; k: string; alg: "A256GCM"; use: "enc" } {
    return { kty: "oct", k, alg: "A256GCM", use: "enc" };
}

/** Base64url without padding. */
export function b64u(bytes: Uint8Array | string): string {
    return Buffer.from(bytes).toString("base64url");
}

/**
 * Seal by hand with Node's own AES-256-GCM, independently of the code under test: any protected header
 * (raw JSON text), the AAD being that header's segment, a fixed IV so the result is deterministic, and
 * a tag of `tagBytes` bytes (GCM allows shorter ones; A256GCM's is 16).
 */
export function sealByHand(
    keyB64u: string,
    plaintext: string | Uint8Array,
    header = '{"alg":"dir","enc":"A256GCM"}',
    iv: Uint8Array = Uint8Array.from({ length: 12 }, (_, i) => i),
    tagBytes = 16,
): string {
    const head = b64u(header);
    const cipher = createCipheriv("aes-256-gcm", Buffer.from(keyB64u, "base64url"), iv, { authTagLength: tagBytes });
    cipher.setAAD(Buffer.from(head, "ascii"));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [head, "", b64u(iv), b64u(ciphertext), b64u(cipher.getAuthTag())].join(".");
}

/** Replace segment `index` of a compact JWE. */
export function withSegment(jwe: string, index: number, value: string): string {
    const segments = jwe.split(".");
    segments[index] = value;
    return segments.join(".");
}

/** Change the first character of a base64url segment to another valid one (flips bits of its first byte). */
export function flipFirst(segment: string): string {
    return (segment[0] === "A" ? "B" : "A") + segment.slice(1);
}
