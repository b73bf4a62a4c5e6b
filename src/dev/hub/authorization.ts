import type { IncomingMessage, ServerResponse } from "node:http";
import { verifyJwt } from "../jwt/jwt";
import { parseAuthorizationDetails, parseLegacyClaim } from "./grants";
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
    /** Expiry as a Unix time in milliseconds; null for a 0.x token without `exp` (`legacyProtocol`). */
    readonly expiresAt: number | null;
}

/** The RFC 6750 error codes the hub answers with. */
export type BearerError = "invalid_token" | "insufficient_scope" | "invalid_request";

/** Outcome of authenticating a request: a token (or none, where allowed) or the challenge to send. */
export type AuthenticationResult =
    | { readonly ok: true; readonly token: ValidatedToken | null; readonly source: "header" | "cookie" | null }
    | { readonly ok: false; readonly status: 400 | 401; readonly error: BearerError | null };

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Find the token of a request: `Authorization: Bearer` wins over the cookie (`cookieName`; null: cookie auth
 * is off and only the header counts); the query string is never looked at.
 */
export function extractToken(req: IncomingMessage, cookieName: string | null): TokenPresentation {
    // [spec] §2.1: header beats cookie; no query-string token (`access_token` is ignored).
    const authorization = req.headersDistinct["authorization"];
    if (authorization !== undefined) {
        if (authorization.length !== 1) return { kind: "malformed" };
        const match = BEARER.exec(authorization[0]!);
        return match === null ? { kind: "malformed" } : { kind: "token", token: match[1]!, source: "header" };
    }
    if (cookieName === null) return { kind: "none" };
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
    /**
     * Check it as a Mercure 0.x hub does (`legacyProtocol`): the signature, and `exp` and `nbf` when present;
     * neither `typ`, `iss` nor `aud`; grants from the 0.x `mercure` claim only.
     */
    readonly legacy?: boolean;
}

/** Why a token is refused, in words for the hub's refusal log (never sent to the client). */
export type TokenCheck = { readonly ok: true; readonly token: ValidatedToken } | { readonly ok: false; readonly reason: string };

/** Validate a compact JWS as a Mercure 1.0 access token; `null` means invalid_token. */
export function validateToken(token: string, requirements: TokenRequirements, now = Date.now()): ValidatedToken | null {
    const checked = checkToken(token, requirements, now);
    return checked.ok ? checked.token : null;
}

/** Validate a compact JWS as a Mercure 1.0 access token, saying which check failed when it is invalid. */
export function checkToken(token: string, requirements: TokenRequirements, now = Date.now()): TokenCheck {
    const refuse = (reason: string): TokenCheck => ({ ok: false, reason });
    // [spec] §2.2: HS256/384/512 from our allowlist only (never `none`); the key comes from configuration.
    const verified = verifyJwt(token, requirements.key, ["HS256", "HS384", "HS512"]);
    if (!verified.ok) {
        return refuse(
            verified.reason === "malformed"
                ? "it is not a compact JWS (three base64url parts, JSON header and claims)"
                : verified.reason === "algorithm"
                  ? "its alg is not HS256, HS384 or HS512"
                  : "its signature does not verify with the hub's key (--jwt-key)",
        );
    }
    const { header, claims } = verified.jwt;
    if (requirements.legacy === true) return checkLegacyClaims(claims, requirements.base, now);
    const typ = header["typ"];
    if (typeof typ !== "string" || !["at+jwt", "application/at+jwt"].includes(typ.toLowerCase())) {
        return refuse(`its header's typ is ${JSON.stringify(typ ?? null)}, not "at+jwt"`);
    }
    const iss = claims["iss"];
    // [spec] §2.2: `iss` must exactly equal a trusted issuer.
    if (typeof iss !== "string" || iss === "" || !requirements.issuers.includes(iss)) {
        return refuse(`its iss ${JSON.stringify(iss ?? null)} is not a trusted issuer (${requirements.issuers.map((i) => JSON.stringify(i)).join(", ")}; --issuer)`);
    }
    const aud = claims["aud"];
    const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!audiences.includes(requirements.resource)) {
        return refuse(
            `its aud ${JSON.stringify(aud ?? null)} does not contain this hub's resource identifier "${requirements.resource}" (mint the token for the URL clients reach the hub at, or start the hub with --resource)`,
        );
    }
    const exp = claims["exp"];
    if (typeof exp !== "number" || !Number.isFinite(exp)) return refuse("it has no numeric exp claim");
    if (exp * 1000 <= now) return refuse(`it expired at ${new Date(exp * 1000).toISOString()}`);
    const nbf = claims["nbf"];
    if (nbf !== undefined && (typeof nbf !== "number" || !Number.isFinite(nbf) || nbf * 1000 > now)) {
        return refuse(`its nbf ${JSON.stringify(nbf)} is in the future or not a number`);
    }
    const grants = parseAuthorizationDetails(claims["authorization_details"], requirements.base);
    if (grants === null) {
        return refuse(
            'its authorization_details are invalid (each Mercure detail needs non-empty "actions" and "topics" of {match, match_type?}, at most 100 topic entries)',
        );
    }
    return { ok: true, token: { grants, expiresAt: exp * 1000 } };
}

/** The claims of a verified token, checked as the Go hub v0.24.2 does. */
function checkLegacyClaims(claims: Readonly<Record<string, unknown>>, base: string, now: number): TokenCheck {
    const exp = claims["exp"];
    if (exp !== undefined && (typeof exp !== "number" || exp * 1000 <= now)) return { ok: false, reason: `its exp ${JSON.stringify(exp)} is past or not a number` };
    const nbf = claims["nbf"];
    if (nbf !== undefined && (typeof nbf !== "number" || nbf * 1000 > now)) return { ok: false, reason: `its nbf ${JSON.stringify(nbf)} is in the future or not a number` };
    const grants = parseLegacyClaim(claims, base);
    if (grants === null) return { ok: false, reason: "its mercure claim lists more than 100 selectors" };
    return { ok: true, token: { grants, expiresAt: typeof exp === "number" ? exp * 1000 : null } };
}

/**
 * Authenticate a request as a publisher or a subscriber (each role has its key): a malformed presentation
 * is 400 invalid_request, a missing token 401 (unless `optional`), an invalid one 401 invalid_token even
 * when a token was optional.
 */
export function authenticate(
    req: IncomingMessage,
    context: RequestContext,
    options: Pick<ResolvedHubOptions, "cookieName" | "cookieAuth" | "publisherJwtKey" | "subscriberJwtKey" | "issuers" | "patternBase" | "onRefusal" | "legacyProtocol">,
    role: "publisher" | "subscriber",
    optional = false,
): AuthenticationResult {
    const refused = (why: string): void => options.onRefusal?.(`${req.method ?? "GET"} ${context.rawPath} refused (${role}): ${why}.`);
    const presented = extractToken(req, options.cookieAuth ? options.cookieName : null);
    if (presented.kind === "malformed") {
        refused("the Authorization header is not one `Bearer <token>`");
        return { ok: false, status: 400, error: "invalid_request" };
    }
    if (presented.kind === "none") {
        if (optional) return { ok: true, token: null, source: null };
        refused(options.cookieAuth ? `no token, neither in an Authorization: Bearer header nor in the "${options.cookieName}" cookie` : "no Authorization: Bearer header (cookie auth is off)");
        return { ok: false, status: 401, error: null };
    }
    const checked = checkToken(presented.token, {
        key: role === "publisher" ? options.publisherJwtKey : options.subscriberJwtKey,
        resource: context.resource,
        issuers: options.issuers,
        base: options.patternBase,
        legacy: options.legacyProtocol,
    });
    // [spec] §1.5: an invalid token is never downgraded to anonymous.
    if (!checked.ok) {
        refused(`the token from the ${presented.source === "header" ? "Authorization header" : `"${options.cookieName}" cookie`} is invalid: ${checked.reason}`);
        return { ok: false, status: 401, error: "invalid_token" };
    }
    return { ok: true, token: checked.token, source: presented.source };
}

/** Build the `WWW-Authenticate` value of an RFC 6750 challenge with the RFC 9728 metadata URL. */
export function challengeHeader(metadataUrl: string, error: BearerError | null): string {
    const metadata = `resource_metadata="${metadataUrl}"`;
    return error === null ? `Bearer ${metadata}` : `Bearer error="${error}", ${metadata}`;
}

/**
 * Answer with an RFC 6750 challenge; reasons for invalid_token are not disclosed. A 0.x hub (no metadata URL:
 * `legacyProtocol`) answers every authorization failure with a bare 401 instead.
 */
export function sendChallenge(
    res: ServerResponse,
    context: RequestContext,
    status: 400 | 401 | 403,
    error: BearerError | null,
): void {
    if (context.metadataUrl === null) {
        // [spec] mercure-hub §10: Go v0.24.2 answers 401 `Unauthorized` for a missing, invalid or malformed token, a
        // publish outside the grant, the subscriptions API without a grant and a cookie POST from a refused origin.
        if (res.headersSent) return;
        res.writeHead(401, { "Content-Type": "text/plain; charset=utf-8" });
        res.end("Unauthorized\n");
        return;
    }
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
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "WWW-Authenticate": challengeHeader(context.metadataUrl, error) });
    res.end(message + "\n");
}
