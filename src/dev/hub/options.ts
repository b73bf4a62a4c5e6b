import { MercureError } from "../../index";
import { DEFAULT_DISPATCH_TIMEOUT_MS, DEFAULT_WRITE_TIMEOUT_MS } from "./lifetime";

/** Options of a {@link MercureHub}. */
export interface MercureHubOptions {
    /** HS256/384/512 key used to verify both publisher and subscriber tokens (Laravel's driver needs the same key for both roles). */
    jwtKey: string;
    /** Key verifying publisher tokens; default `jwtKey`. */
    publisherJwtKey?: string;
    /** Key verifying subscriber tokens (and subscription API calls); default `jwtKey`. */
    subscriberJwtKey?: string;
    /**
     * Trusted issuers (at least one): a token is valid only when its `iss` is listed, and the keys verify only
     * tokens of these issuers, as the reference hub binds keys to issuers. Laravel's `iss` is `claims.iss`
     * (`MERCURE_JWT_ISSUER`), else `app.url`.
     */
    issuers: string[];
    /**
     * Resource identifier that `aud` must contain, an absolute URL. Default: derived per request as
     * `http://<Host header><path>` (what the 1.0 Go hub does). When it ends with the hub path it is also the
     * base that relative URL patterns and topics resolve against; otherwise they resolve against
     * `http://mercure.invalid`, never against the request's host.
     */
    resource?: string;
    /** Hub path; default "/.well-known/mercure". */
    path?: string;
    /** Allow token-less subscribers (public updates only). Default false. */
    anonymous?: boolean;
    /** Cookie carrying the JWT. Default "mercure_access_token" (the dev stack runs on plain http, so no __Secure- prefix). */
    cookieName?: string;
    /**
     * Accept the token from the cookie. Default true; false accepts only `Authorization: Bearer` (the cookie is
     * ignored, as if absent, and the metadata advertises no `mercure_cookie`), like a hub on another registrable
     * domain that the app's cookie cannot reach.
     */
    cookieAuth?: boolean;
    /** Origins allowed for credentialed CORS (explicit allowlist, never "*" with credentials). Default []. */
    corsOrigins?: string[];
    /**
     * Origins allowed to publish with cookie authentication (CSRF check on Origin, fallback Referer; `*` allows
     * any). Default []. As on the reference hub, the hub's own origin is not exempt: list it to allow whispers
     * from pages it serves.
     */
    publishOrigins?: string[];
    /** Active subscriptions (subscription events + API). Default true. */
    subscriptions?: boolean;
    /** In-memory history for last_event_id replay. Default true. false behaves like the reference hub's `transport local`. */
    history?: boolean;
    /** Max retained updates. Default 10000. */
    historySize?: number;
    /** Keep-alive comment interval in ms. Default 15000. */
    heartbeatMs?: number;
    /**
     * The reference hub's `dispatch_timeout` in ms: a stream ends this long before its write deadline (when
     * that is still in the future). Default 5000; 0 ends streams at the deadline itself.
     */
    dispatchTimeout?: number;
    /**
     * The reference hub's `write_timeout` in ms: every stream, with or without a token, ends within 80–100 %
     * of it. Default 600000 (10 minutes); 0 removes the cap (streams with a token still end by its `exp`).
     */
    writeTimeout?: number;
    /**
     * Places each stream deadline within 80–100 % of its duration: 0 gives 80 %, 1 gives 100 %. Default
     * `Math.random`, as the reference hub; tests pass a constant to make stream ends deterministic.
     */
    lifetimeFraction?: () => number;
    /**
     * Called with one line saying why a request was refused: which token check failed (`typ`, `iss`, `aud`,
     * `exp`, signature, grants) or which grant was missing. The client only gets the RFC 6750 error, as from
     * the reference hub; the CLI's `--verbose` prints these lines. Default: none.
     */
    onRefusal?: (message: string) => void;
    /**
     * Answer like a Mercure 0.x hub, to test how clients and diagnostics react to one: a subscribe request
     * needs the `topic` parameter (400 `Missing "topic" parameter.` without it; `match…` parameters are
     * ignored), every authorization failure is a bare 401 (no `WWW-Authenticate`; 403 and 400 `invalid_request`
     * become 401 too), and no metadata document is served. Tokens are checked as the Go hub v0.24.2 checks them:
     * the signature, `exp` and `nbf` when present, neither `typ`, `iss` nor `aud`; they grant what their 0.x
     * `mercure` claim lists (exact topics or `*`), so a 1.0 token grants nothing. Default false.
     */
    legacyProtocol?: boolean;
}

/** {@link MercureHubOptions} with every default applied. */
export interface ResolvedHubOptions {
    /** Key verifying publisher tokens. */
    publisherJwtKey: string;
    /** Key verifying subscriber tokens. */
    subscriberJwtKey: string;
    /** Trusted issuers: a token's `iss` must be one of them. */
    issuers: readonly string[];
    /** Fixed resource identifier, or `null` to derive it from each request. */
    resource: string | null;
    /** The base relative URL patterns and topics resolve against (never the request's host). */
    patternBase: string;
    /** Hub path without a trailing slash. */
    path: string;
    /** Whether token-less subscribers are accepted. */
    anonymous: boolean;
    /** Name of the cookie carrying the JWT. */
    cookieName: string;
    /** Whether the cookie is read at all (false: header auth only). */
    cookieAuth: boolean;
    /** Origins allowed for credentialed CORS. */
    corsOrigins: readonly string[];
    /** Origins allowed to publish with cookie authentication. */
    publishOrigins: readonly string[];
    /** Whether subscription events and the subscription API are on. */
    subscriptions: boolean;
    /** Whether updates are retained for replay. */
    history: boolean;
    /** Maximum number of retained updates. */
    historySize: number;
    /** Keep-alive comment interval in ms. */
    heartbeatMs: number;
    /** See {@link MercureHubOptions.dispatchTimeout}. */
    dispatchTimeout: number;
    /** See {@link MercureHubOptions.writeTimeout}. */
    writeTimeout: number;
    /** See {@link MercureHubOptions.lifetimeFraction}. */
    lifetimeFraction: () => number;
    /** See {@link MercureHubOptions.onRefusal}. */
    onRefusal: ((message: string) => void) | null;
    /** See {@link MercureHubOptions.legacyProtocol}. */
    legacyProtocol: boolean;
}

/** The default hub path, as discovery expects it. */
export const DEFAULT_HUB_PATH = "/.well-known/mercure";

/** The reference hub's URL-pattern base when no resource identifier names the hub (RFC 6761 `.invalid`). */
export const FALLBACK_PATTERN_BASE = "http://mercure.invalid";

/** Fill in defaults and check the options; throws `invalid_option` on an unusable value. */
export function resolveHubOptions(options: MercureHubOptions): ResolvedHubOptions {
    if (typeof options.jwtKey !== "string" || options.jwtKey === "") {
        throw invalid("The hub option jwtKey must be a non-empty string; pass the key your publisher signs with.");
    }
    const issuers: unknown = options.issuers;
    // [spec] mercure-hub §2.2: `iss` must exactly equal a trusted issuer bound to the key; a hub without one
    // trusts no token (the reference hub refuses such a configuration).
    if (!Array.isArray(issuers) || issuers.length === 0 || !issuers.every((iss) => typeof iss === "string" && iss !== "")) {
        throw invalid(
            "The hub option issuers must list at least one trusted issuer: the iss your Laravel app signs with (MERCURE_JWT_ISSUER, else APP_URL).",
        );
    }
    const path = (options.path ?? DEFAULT_HUB_PATH).replace(/\/+$/, "");
    if (!path.startsWith("/") || /[?#\s]/.test(path)) {
        throw invalid(`The hub option path "${options.path}" must be an absolute URL path such as "/.well-known/mercure".`);
    }
    const historySize = options.historySize ?? 10_000;
    if (!Number.isSafeInteger(historySize) || historySize < 1) {
        throw invalid("The hub option historySize must be a positive integer.");
    }
    const heartbeatMs = options.heartbeatMs ?? 15_000;
    if (!Number.isFinite(heartbeatMs) || heartbeatMs <= 0) {
        throw invalid("The hub option heartbeatMs must be a positive number of milliseconds.");
    }
    const dispatchTimeout = options.dispatchTimeout ?? DEFAULT_DISPATCH_TIMEOUT_MS;
    const writeTimeout = options.writeTimeout ?? DEFAULT_WRITE_TIMEOUT_MS;
    for (const [name, value] of [["dispatchTimeout", dispatchTimeout], ["writeTimeout", writeTimeout]] as const) {
        if (!Number.isFinite(value) || value < 0) {
            throw invalid(`The hub option ${name} must be a non-negative number of milliseconds (0 disables it).`);
        }
    }
    const lifetimeFraction = options.lifetimeFraction ?? Math.random;
    if (typeof lifetimeFraction !== "function") {
        throw invalid("The hub option lifetimeFraction must be a function returning a number in [0, 1].");
    }
    const resource = options.resource ?? null;
    if (resource !== null && !isAbsoluteUrl(resource)) {
        throw invalid(`The hub option resource "${resource}" must be an absolute URL without a fragment, such as "https://example.com/.well-known/mercure".`);
    }
    const corsOrigins = options.corsOrigins ?? [];
    if (corsOrigins.includes("*") || corsOrigins.includes("null")) {
        throw invalid('The hub option corsOrigins must list explicit origins; "*" and "null" cannot carry credentials.');
    }
    return {
        publisherJwtKey: options.publisherJwtKey ?? options.jwtKey,
        subscriberJwtKey: options.subscriberJwtKey ?? options.jwtKey,
        issuers: [...(issuers as string[])],
        resource,
        // [spec] mercure-hub §1.2: a resource identifier that is the full hub URL doubles as the base of
        // relative patterns and topics; otherwise the fixed fallback base, never the request's host.
        patternBase: resource !== null && resource.endsWith(path) ? resource : FALLBACK_PATTERN_BASE,
        path,
        anonymous: options.anonymous ?? false,
        cookieName: options.cookieName ?? "mercure_access_token",
        cookieAuth: options.cookieAuth ?? true,
        corsOrigins,
        publishOrigins: options.publishOrigins ?? [],
        subscriptions: options.subscriptions ?? true,
        history: options.history ?? true,
        historySize,
        heartbeatMs,
        dispatchTimeout,
        writeTimeout,
        lifetimeFraction,
        onRefusal: options.onRefusal ?? null,
        legacyProtocol: options.legacyProtocol ?? false,
    };
}

function isAbsoluteUrl(value: string): boolean {
    try {
        const url = new URL(value);
        return url.host !== "" && url.hash === "" && !value.includes("#");
    } catch {
        return false;
    }
}

function invalid(message: string): MercureError {
    return new MercureError("invalid_option", message);
}
