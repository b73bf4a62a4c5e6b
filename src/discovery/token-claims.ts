/**
 * The claims of an access token that explain why a hub refuses it (mercure-hub §2.2), read WITHOUT
 * verifying the signature: for diagnostics only, never to decide access.
 */
export interface TokenClaims {
    /** `iss`, when a string. */
    readonly issuer: string | null;
    /** `aud` as a list (a string `aud` is one entry). */
    readonly audiences: readonly string[];
    /** `exp` in milliseconds since the epoch, when a number. */
    readonly expiresAt: number | null;
    /** `nbf` in milliseconds since the epoch, when a number. */
    readonly notBefore: number | null;
    /** The header's `typ`, when a string (Mercure 1.0 wants `at+jwt`). */
    readonly type: string | null;
}

/** Decode the header and claims of a compact JWS; null when `token` is not one. */
export function readTokenClaims(token: string): TokenClaims | null {
    const parts = token.trim().split(".");
    if (parts.length !== 3) return null;
    const header = decodeSegment(parts[0]!);
    const claims = decodeSegment(parts[1]!);
    if (header === null || claims === null) return null;
    const aud = claims["aud"];
    return {
        issuer: typeof claims["iss"] === "string" ? claims["iss"] : null,
        audiences: typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud.filter((value): value is string => typeof value === "string") : [],
        expiresAt: seconds(claims["exp"]),
        notBefore: seconds(claims["nbf"]),
        type: typeof header["typ"] === "string" ? header["typ"] : null,
    };
}

function seconds(value: unknown): number | null {
    return typeof value === "number" && Number.isFinite(value) ? value * 1000 : null;
}

function decodeSegment(segment: string): Record<string, unknown> | null {
    if (!/^[A-Za-z0-9_-]*$/.test(segment)) return null;
    try {
        const base64 = segment.replace(/-/g, "+").replace(/_/g, "/");
        const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
        const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
        const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
        return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
    } catch {
        return null;
    }
}
