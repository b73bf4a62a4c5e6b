import type { DiagnosisCode } from "../errors";
import * as advice from "./advice";
import { cookieProblems } from "./cookie-reach";
import { sameUrl, type MetadataOutcome } from "./metadata";
import type { ProbeOutcome } from "./probe";
import type { TokenClaims } from "./token-claims";

/** Most matcher parameters the reference hub accepts in one subscribe request (mercure-hub §7). */
export const MAX_MATCHERS = 100;

/**
 * What failed, as the connector saw it.
 *
 * - `stream`: the main event stream failed terminally (the `EventSource` closed: any non-2xx answer).
 * - `whisper_stream`: a channel's whisper stream failed terminally.
 * - `whisper_post`: the hub refused a whisper publish with `status`, or it failed without an answer
 *   (`"network"`: a TypeError, which is also how a CORS refusal looks); `challenge` is its
 *   `WWW-Authenticate` value when the caller could read it.
 */
export type DiagnosedFailure =
    | { readonly kind: "stream" }
    | { readonly kind: "whisper_stream" }
    | { readonly kind: "whisper_post"; readonly status: number | "network"; readonly challenge?: string | null };

export type { DiagnosisCode } from "../errors";

/** One named cause: what the hub answered and what to change, in one sentence. */
export interface Diagnosis {
    /** The cause. */
    readonly code: DiagnosisCode;
    /** One sentence: what the hub answered, then the fix. */
    readonly message: string;
    /** The HTTP status observed, when there was one. */
    readonly status: number | undefined;
    /**
     * Whether retrying (re-authorizing, reopening) can help: true for a hub that is down or an expired
     * token; false for a configuration that must change first (stop the reconnect loop).
     */
    readonly retry: boolean;
}

/** Everything {@link classify} judges from: what failed, what the probe and the metadata showed. */
export interface DiagnosisFacts {
    /** The hub URL the client uses (no query). */
    readonly hub: URL;
    /** The page origin, or null outside a browser. */
    readonly pageOrigin: string | null;
    /** What failed. */
    readonly failure: DiagnosedFailure;
    /** How many matchers the failed subscribe request carried (1 when unknown). */
    readonly matcherCount: number;
    /** What the probe observed; null when none was needed (a whisper refused with 400 or 403). */
    readonly probe: ProbeOutcome | null;
    /** The metadata document, when it was fetched (only for a 401). */
    readonly metadata: MetadataOutcome | null;
    /** The cookie name the app sets, when known. */
    readonly appCookie: string | null;
    /** The claims of the token presented, when it is readable (a bearer token, a cookie given by value). */
    readonly token: TokenClaims | null;
    /** When the cookie the connector obtained expires, in ms since the epoch, when known. */
    readonly tokenExpiresAt: number | null;
    /** The current time in ms since the epoch. */
    readonly now: number;
}

/**
 * Name the cause of a failure from observed facts; null when the hub accepts the request now (nothing
 * to name: the usual error and retry stand). Pure: every input is in `facts`.
 */
export function classify(facts: DiagnosisFacts): Diagnosis | null {
    const { failure } = facts;
    if (failure.kind === "whisper_post" && (failure.status === 400 || failure.status === 403)) {
        return publishRefusal(facts, failure.status);
    }
    const probe = facts.probe;
    if (probe === null || probe.kind === "aborted") return null;
    const hub = hubHref(facts.hub);
    switch (probe.kind) {
        case "unreachable":
            return unreachable(facts, probe.reason);
        case "timeout":
            return diagnosis(
                "hub_unreachable",
                `The hub at ${hub} sent no response headers within ${Math.round(probe.ms / 1000)} s: if a proxy is in front of it, turn off its response buffering for the hub (for example X-Accel-Buffering: no).`,
                undefined,
                true,
            );
        case "cors_blocked":
            return cors(facts, undefined);
        case "answered":
            break;
    }
    if (probe.cors === "refused") return cors(facts, probe.status);
    const { status } = probe;
    if (status >= 200 && status < 300) {
        // [spec] laravel-mercure §10 "Same key": the hub reads the same cookie with its publisher key.
        if (failure.kind === "whisper_post" && failure.status === 401) {
            return diagnosis("invalid_token", `The hub accepts the cookie for subscribing but refused it for a whisper (HTTP 401): ${advice.sameKeyFix()}.`, 401, false);
        }
        return null;
    }
    if (status === 400) return badRequest(facts, probe.body);
    if (status === 401) return unauthorized(facts, probe);
    if (status === 403) {
        return diagnosis("insufficient_scope", `The hub refused the request with HTTP 403 (insufficient_scope): ${advice.scopeFix()}.`, 403, false);
    }
    if (status === 404 || status === 405 || status === 410) {
        return diagnosis("hub_not_found", `${hub} answered HTTP ${status}, so it is not a Mercure hub: ${advice.notAHubFix()}.`, status, false);
    }
    const retry = status >= 500 || status === 429 || status === 408;
    return diagnosis(
        "hub_refused",
        `The hub at ${hub} refused the request with HTTP ${status}${quote(probe.body)}: ${retry ? "retrying; if it persists, see the hub's log" : "see the hub's log"}.`,
        status,
        retry,
    );
}

/** A whisper POST refused with 400 or 403: its status says it all. */
function publishRefusal(facts: DiagnosisFacts, status: 400 | 403): Diagnosis {
    if (status === 403) {
        return diagnosis("insufficient_scope", `The hub refused a whisper with HTTP 403 (insufficient_scope): ${advice.scopeFix()}.`, 403, false);
    }
    // [spec] mercure-hub §3: a cookie-authenticated POST from an origin not in publish_origins gets 400
    // invalid_request, checked before the token.
    return diagnosis(
        "publish_origin_refused",
        `The hub refused a whisper with HTTP 400, as it does when the page origin is not in its publish_origins: ${advice.publishOriginFix(facts.pageOrigin)}.`,
        400,
        false,
    );
}

function unreachable(facts: DiagnosisFacts, reason: string): Diagnosis {
    const hub = hubHref(facts.hub);
    if (facts.pageOrigin?.startsWith("https:") && facts.hub.protocol === "http:") {
        return diagnosis("hub_unreachable", `The hub at ${hub} cannot be reached from this HTTPS page, because browsers block plain-HTTP requests there: serve the hub over HTTPS.`, undefined, false);
    }
    return diagnosis("hub_unreachable", `The hub at ${hub} could not be reached (${reason}): check that it is running and that the connector's host names it.`, undefined, true);
}

function cors(facts: DiagnosisFacts, status: number | undefined): Diagnosis {
    const page = facts.pageOrigin ?? "this page's origin";
    return diagnosis(
        "cors_refused",
        `The hub at ${facts.hub.origin} does not allow credentialed requests from ${page}: ${advice.corsFix(page, facts.hub.hostname)}.`,
        status,
        false,
    );
}

function badRequest(facts: DiagnosisFacts, body: string): Diagnosis {
    // [spec] mercure-hub §10: a 0.x hub answers 400 when the `topic` parameter is missing.
    if (/\btopic\b/i.test(body) && !/\bmatch/i.test(body)) {
        return diagnosis("hub_outdated", `The hub at ${hubHref(facts.hub)} asks for the "topic" parameter, as Mercure 0.x hubs do: ${advice.upgradeFix()}.`, 400, false);
    }
    // [spec] mercure-hub §7: the reference hub refuses more than 100 matchers with 400.
    if (facts.matcherCount > MAX_MATCHERS) {
        return diagnosis(
            "too_many_matchers",
            `The hub refused the stream with HTTP 400 because it carries ${facts.matcherCount} topic matchers and the reference hub accepts at most ${MAX_MATCHERS}: ${advice.tooManyMatchersFix()}.`,
            400,
            false,
        );
    }
    return diagnosis("hub_refused", `The hub at ${hubHref(facts.hub)} refused the request with HTTP 400${quote(body)}: see the hub's log.`, 400, false);
}

function unauthorized(facts: DiagnosisFacts, probe: Extract<ProbeOutcome, { kind: "answered" }>): Diagnosis {
    const challenge = probe.challenge;
    // [spec] mercure-hub §5, §10: 0.x hubs answer a plain 401 and never serve the metadata document, while a 1.0
    // hub that refuses tokens serves it (the Go hub whenever it validates tokens): its absence names a 0.x hub
    // even when the browser hides the challenge cross-origin (the reference hub exposes only `Link`).
    if (challenge === null && facts.metadata?.kind === "absent") return outdatedUnauthorized(facts, facts.metadata.url, probe.headersHidden);
    if (challenge === null && !probe.headersHidden) return cookieMissing(facts);
    if (challenge === null) return hiddenChallenge(facts);
    // [spec] mercure-hub §2.3: 401 `invalid_token` for a token presented but refused, a bare 401 for none.
    if (challenge.error === "invalid_token") return invalidToken(facts);
    if (challenge.error === null) return cookieMissing(facts);
    return diagnosis("hub_refused", `The hub refused the request with HTTP 401 (${challenge.error}): see the hub's log.`, 401, false);
}

/** A 401 without a challenge (or with one hidden cross-origin) from a hub that serves no metadata at `metadataUrl`. */
function outdatedUnauthorized(facts: DiagnosisFacts, metadataUrl: string, headersHidden: boolean): Diagnosis {
    const hub = hubHref(facts.hub);
    if (!headersHidden) {
        return diagnosis(
            "hub_outdated",
            `The hub at ${hub} answers HTTP 401 without a WWW-Authenticate challenge and serves no protected-resource metadata, as Mercure 0.x hubs do: ${advice.upgradeFix()}.`,
            401,
            false,
        );
    }
    // The challenge is hidden: a 1.0 hub whose metadata URL a proxy does not route to it looks the same.
    return diagnosis(
        "hub_outdated",
        `The hub at ${hub} answers HTTP 401 and serves no protected-resource metadata at ${metadataUrl}, as Mercure 0.x hubs do: ${advice.upgradeFix()}; if it is a 1.0 hub, route that URL to it.`,
        401,
        false,
    );
}

function invalidToken(facts: DiagnosisFacts): Diagnosis {
    const hub = hubHref(facts.hub);
    const resource = metadataResource(facts);
    const expected = resource ?? hub;
    const token = facts.token;
    const refused = "The hub rejected the access token (HTTP 401 invalid_token)";
    const expiresAt = token?.expiresAt ?? facts.tokenExpiresAt;
    // [spec] mercure-hub §2.2: `exp` is enforced, `nbf` when present, `typ` must be at+jwt.
    if (expiresAt !== null && expiresAt <= facts.now) {
        return diagnosis("invalid_token", `${refused} because it expired at ${new Date(expiresAt).toISOString()}: ${advice.expiredFix()}.`, 401, true);
    }
    if (token?.notBefore != null && token.notBefore > facts.now) {
        return diagnosis("invalid_token", `${refused} because it is not valid before ${new Date(token.notBefore).toISOString()}: check the clocks of the app and the hub.`, 401, false);
    }
    if (token !== null && token.type !== null && !["at+jwt", "application/at+jwt"].includes(token.type.toLowerCase())) {
        return diagnosis("invalid_token", `${refused} because its typ is "${token.type}", not the "at+jwt" Mercure 1.0 requires: issue tokens with Laravel 13's mercure driver.`, 401, false);
    }
    // [spec] mercure-hub §2.2: `aud` must contain the hub's resource identifier.
    if (token !== null && !token.audiences.some((audience) => sameUrl(audience, expected))) {
        const audiences = token.audiences.length === 0 ? "missing" : token.audiences.map((audience) => `"${audience}"`).join(", ");
        return diagnosis("invalid_token", `${refused} because its aud is ${audiences} while the hub expects "${expected}": ${advice.audienceFix(expected, hub)}.`, 401, false);
    }
    if (resource !== null && !sameUrl(resource, hub)) {
        return diagnosis(
            "invalid_token",
            `${refused} because the hub expects the audience "${resource}" but is reached at "${hub}": ${advice.audienceFix(resource, hub)}.`,
            401,
            false,
        );
    }
    if (token !== null) {
        return diagnosis("invalid_token", `${refused} although its audience and expiry are right, so the issuer or the key differs: ${advice.issuerOrKeyFix(token.issuer)}.`, 401, false);
    }
    return diagnosis(
        "invalid_token",
        `${refused}: check that Laravel's MERCURE_PUBLIC_URL is exactly "${expected}" (the aud the hub expects), that the hub trusts Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL) and that both use the same MERCURE_JWT_SECRET.`,
        401,
        false,
    );
}

function cookieMissing(facts: DiagnosisFacts): Diagnosis {
    const hubCookie = facts.metadata?.kind === "found" ? (facts.metadata.validation.metadata?.mercureCookie ?? null) : null;
    const [problem] = cookieProblems({ hub: facts.hub, pageOrigin: facts.pageOrigin, hubCookie, appCookie: facts.appCookie });
    const fix = problem === undefined ? advice.cookieGenericFix(hubCookie, facts.hub.pathname, facts.pageOrigin !== null) : advice.cookieFix(problem);
    return diagnosis("cookie_missing", `No access token reached the hub (HTTP 401 without error): ${fix}.`, 401, false);
}

/** A 401 whose challenge the browser hid (cross-origin): the cookie may be missing or refused. */
function hiddenChallenge(facts: DiagnosisFacts): Diagnosis {
    const hubCookie = facts.metadata?.kind === "found" ? (facts.metadata.validation.metadata?.mercureCookie ?? null) : null;
    const [problem] = cookieProblems({ hub: facts.hub, pageOrigin: facts.pageOrigin, hubCookie, appCookie: facts.appCookie });
    if (problem !== undefined) return diagnosis("cookie_missing", `No access token reached the hub (HTTP 401): ${advice.cookieFix(problem)}.`, 401, false);
    const resource = metadataResource(facts);
    if (resource !== null && !sameUrl(resource, hubHref(facts.hub))) return invalidToken(facts);
    const expected = resource ?? hubHref(facts.hub);
    return diagnosis(
        "invalid_token",
        `The hub refused the access token with HTTP 401 (its reason is hidden cross-origin): check that the cookie${hubCookie === null ? "" : ` "${hubCookie}"`} reaches it, that Laravel's MERCURE_PUBLIC_URL is exactly "${expected}", and that the hub trusts Laravel's issuer and MERCURE_JWT_SECRET.`,
        401,
        false,
    );
}

function metadataResource(facts: DiagnosisFacts): string | null {
    return facts.metadata?.kind === "found" ? (facts.metadata.validation.metadata?.resource ?? null) : null;
}

function diagnosis(code: DiagnosisCode, message: string, status: number | undefined, retry: boolean): Diagnosis {
    return { code, message, status, retry };
}

/** The hub URL as messages show it: without query or fragment. */
function hubHref(hub: URL): string {
    return hub.origin + hub.pathname;
}

/** The first line of an error body, quoted, when there is one. */
function quote(body: string): string {
    const line = body.trim().split(/\r?\n/)[0]?.slice(0, 200) ?? "";
    return line === "" ? "" : ` ("${line}")`;
}
