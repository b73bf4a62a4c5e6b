import type { IncomingMessage, ServerResponse } from "node:http";
import { verifyJwt } from "../jwt/jwt";
import { parseAuthorizationDetails } from "./grants";
import type { Grant } from "./grants";
import type { RequestContext } from "./http";
import type { ResolvedHubOptions } from "./options";

/** How a request presented (or failed to present) a token. */
export type TokenPresentation =
    | { readonly kind: "none" }
    | { readonly kind: "malformed" }
    | { readonly kind: "token"; readonly token: string; readonly source: "header" | "cookie" };

/** What the hub keeps from a validated token. */
export interface ValidatedToken {
    /** Mercure grants, in token order. */
    readonly grants: readonly Grant[];
    /** Expiry as a Unix time in milliseconds. */
    readonly expiresAt: number;
}

/** The RFC 6750 error codes the hub answers with. */
export type BearerError = "invalid_token" | "insufficient_scope" | "invalid_request";

/** Outcome of authenticating a request: a token (or none, where allowed) or the challenge to send. */
export type AuthenticationResult =
    | { readonly ok: true; readonly token: ValidatedToken | null; readonly source: "header" | "cookie" | null }
    | { readonly ok: false; readonly status: 400 | 401; readonly error: BearerError | null };

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Find the token of a request: `Authorization: Bearer` wins over the cookie; the query string is never
 * looked at.
 */
export function extractToken(req: IncomingMessage, cookieName: string): TokenPresentation {
    // [spec] §2.1: header beats cookie; no query-string token (`access_token` is ignored).
    const authorization = req.headersDistinct["authorization"];
    if (authorization !== undefined) {
        if (authorization.length !== 1) return { kind: "malformed" };
        const match = BEARER.exec(authorization[0]!);
        return match === null ? { kind: "malformed" } : { kind: "token", token: match[1]!, source: "header" };
    }
    const token = readCookie(req.headers.cookie, cookieName);
    return token === null || token === "" ? { kind: "none" } : { kind: "token", token, source: "cookie" };
}

/** Read one cookie value from a `Cookie` header (first occurrence wins; quotes stripped). */
export function readCookie(header: string | undefined, name: string): string | null {
    if (header === undefined) return null;
    for (const pair of header.split(";")) {
        const eq = pair.indexOf("=");
        if (eq === -1 || pair.slice(0, eq).trim() !== name) continue;
        const value = pair.slice(eq + 1).trim();
        return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
    }
    return null;
}

/** What a token is checked against. */
export interface TokenRequirements {
    /** Verification key of the role (publisher or subscriber). */
    readonly key: string;
    /** Resource identifier `aud` must contain. */
    readonly resource: string;
    /** Trusted issuers. */
    readonly issuers: readonly string[];
    /** The base relative grant patterns resolve against. */
    readonly base: string;
}

/** Validate a compact JWS as a Mercure 1.0 access token; `null` means invalid_token. */
export function validateToken(token: string, requirements: TokenRequirements, now = Date.now()): ValidatedToken | null {
    // [spec] §2.2: HS256/384/512 from our allowlist only (never `none`); the key comes from configuration.
    const verified = verifyJwt(token, requirements.key, ["HS256", "HS384", "HS512"]);
    if (!verified.ok) return null;
    const { header, claims } = verified.jwt;
    const typ = header["typ"];
    if (typeof typ !== "string" || !["at+jwt", "application/at+jwt"].includes(typ.toLowerCase())) return null;
    const iss = claims["iss"];
    if (typeof iss !== "string" || iss === "") return null;
    // [spec] §2.2: `iss` must exactly equal a trusted issuer.
    if (!requirements.issuers.includes(iss)) return null;
    const aud = claims["aud"];
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.includes(requirements.resource)) return null;
    const exp = claims["exp"];
    if (typeof exp !== "number" || !Number.isFinite(exp) || exp * 1000 <= now) return null;
    const nbf = claims["nbf"];
    if (nbf !== undefined && (typeof nbf !== "number" || !Number.isFinite(nbf) || nbf * 1000 > now)) return null;
    const grants = parseAuthorizationDetails(claims["authorization_details"], requirements.base);
    if (grants === null) return null;
    return { grants, expiresAt: exp * 1000 };
}

/**
 * Authenticate a request as a publisher or a subscriber (each role has its key): a malformed presentation
 * is 400 invalid_request, a missing token 401 (unless `optional`), an invalid one 401 invalid_token even
 * when a token was optional.
 */
export function authenticate(
    req: IncomingMessage,
    context: RequestContext,
    options: Pick<ResolvedHubOptions, "cookieName" | "publisherJwtKey" | "subscriberJwtKey" | "issuers" | "patternBase">,
    role: "publisher" | "subscriber",
    optional = false,
): AuthenticationResult {
    const presented = extractToken(req, options.cookieName);
    if (presented.kind === "malformed") return { ok: false, status: 400, error: "invalid_request" };
    if (presented.kind === "none") {
        return optional ? { ok: true, token: null, source: null } : { ok: false, status: 401, error: null };
    }
    const token = validateToken(presented.token, {
        key: role === "publisher" ? options.publisherJwtKey : options.subscriberJwtKey,
        resource: context.resource,
        issuers: options.issuers,
        base: options.patternBase,
    });
    // [spec] §1.5: an invalid token is never downgraded to anonymous.
    if (token === null) return { ok: false, status: 401, error: "invalid_token" };
    return { ok: true, token, source: presented.source };
}

/** Build the `WWW-Authenticate` value of an RFC 6750 challenge with the RFC 9728 metadata URL. */
export function challengeHeader(metadataUrl: string, error: BearerError | null): string {
    const metadata = `resource_metadata="${metadataUrl}"`;
    return error === null ? `Bearer ${metadata}` : `Bearer error="${error}", ${metadata}`;
}

/** Answer with an RFC 6750 challenge; reasons for invalid_token are not disclosed. */
export function sendChallenge(
    res: ServerResponse,
    context: RequestContext,
    status: 400 | 401 | 403,
    error: BearerError | null,
): void {
    // [spec] §2.3: 401 bare / invalid_token, 403 insufficient_scope, 400 invalid_request, all with resource_metadata.
    const message =
        error === null
            ? "An access token is required."
            : error === "invalid_token"
              ? "The access token is invalid."
              : error === "insufficient_scope"
                ? "The access token does not grant this."
                : "The access token presentation is malformed.";
    if (res.headersSent) return;
    res.writeHead(status, {
        "Content-Type": "text/plain; charset=utf-8",
        // [spec] §10: 0.x hubs answered without a challenge (and served no metadata).
        ...(context.metadataUrl === null ? {} : { "WWW-Authenticate": challengeHeader(context.metadataUrl, error) }),
    });
    res.end(message + "\n");
}
