import { createHmac, timingSafeEqual } from "node:crypto";

/** The HMAC algorithms the dev stack signs and verifies. */
export type HmacAlgorithm = "HS256" | "HS384" | "HS512";

/** A JWT's header and claims as decoded JSON. */
export interface DecodedJwt {
    /** The JOSE header. */
    header: Record<string, unknown>;
    /** The claims set. */
    claims: Record<string, unknown>;
}

const HASHES: Record<HmacAlgorithm, string> = { HS256: "sha256", HS384: "sha384", HS512: "sha512" };

/** Encode bytes or a UTF-8 string as base64url without padding. */
export function base64UrlEncode(value: Uint8Array | string): string {
    return Buffer.from(value).toString("base64url");
}

/** Decode base64url (padding optional); returns `null` on characters outside the alphabet. */
export function base64UrlDecode(value: string): Buffer | null {
    if (!/^[A-Za-z0-9_-]*$/.test(value)) return null;
    return Buffer.from(value, "base64url");
}

/**
 * Sign `claims` as a compact JWS with an HMAC algorithm and `typ` `at+jwt` (RFC 9068), as Mercure 1.0 wants.
 */
export function signJwt(
    claims: Record<string, unknown>,
    key: string | Uint8Array,
    algorithm: HmacAlgorithm = "HS256",
    header: Record<string, unknown> = {},
): string {
    const head = base64UrlEncode(JSON.stringify({ alg: algorithm, typ: "at+jwt", ...header }));
    const body = base64UrlEncode(JSON.stringify(claims));
    const signature = createHmac(HASHES[algorithm], key).update(`${head}.${body}`).digest();
    return `${head}.${body}.${base64UrlEncode(signature)}`;
}

/** Why {@link verifyJwt} refused a token. */
export type JwtFailure = "malformed" | "algorithm" | "signature";

/**
 * Verify a compact JWS signed with one of `algorithms` and `key`; the key is never taken from the token.
 * Claim checks (`exp`, `aud`, ...) are the caller's.
 */
export function verifyJwt(
    token: string,
    key: string | Uint8Array,
    algorithms: readonly HmacAlgorithm[] = ["HS256", "HS384", "HS512"],
): { ok: true; jwt: DecodedJwt } | { ok: false; reason: JwtFailure } {
    const parts = token.split(".");
    if (parts.length !== 3) return { ok: false, reason: "malformed" };
    const [head, body, signature] = parts as [string, string, string];
    const header = decodeJsonSegment(head);
    const claims = decodeJsonSegment(body);
    const given = base64UrlDecode(signature);
    if (header === null || claims === null || given === null) return { ok: false, reason: "malformed" };
    const alg = header["alg"];
    if (typeof alg !== "string" || !(algorithms as readonly string[]).includes(alg)) {
        return { ok: false, reason: "algorithm" };
    }
    const expected = createHmac(HASHES[alg as HmacAlgorithm], key).update(`${head}.${body}`).digest();
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        return { ok: false, reason: "signature" };
    }
    return { ok: true, jwt: { header, claims } };
}

/** Decode a base64url segment holding a JSON object (a JOSE header or claims set); `null` otherwise. */
export function decodeJsonSegment(segment: string): Record<string, unknown> | null {
    const bytes = base64UrlDecode(segment);
    if (bytes === null) return null;
    try {
        const value: unknown = JSON.parse(bytes.toString("utf8"));
        return typeof value === "object" && value !== null && !Array.isArray(value)
            ? (value as Record<string, unknown>)
            : null;
    } catch {
        return null;
    }
}
