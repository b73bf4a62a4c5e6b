import type { CookieProblem } from "./cookie-reach";

/*
 * The fix for each misconfiguration, worded once: `diagnose()` puts them after what the hub answered, the
 * `doctor` command prints them under a failed check. Each returns a clause that says what to change
 * (no trailing period), naming Laravel's setting and the hub's.
 */

/**
 * The hub's CORS allowlist lacks the page origin. When the page and the hub are on two loopback names of one machine
 * (`localhost` and `127.0.0.1`), CORS is the smaller problem: the cookie Laravel sets for the page's host never reaches
 * the other name, so the fix is one host name on both sides.
 */
export function corsFix(pageOrigin: string, hubHost?: string): string {
    const pageHost = hostOf(pageOrigin);
    if (hubHost !== undefined && pageHost !== null && twoLoopbackNames(pageHost, hubHost)) return oneHostNameFix(pageHost, hubHost);
    return `add ${pageOrigin} to the hub's cors_origins, so that it answers with Access-Control-Allow-Origin: ${pageOrigin} and Access-Control-Allow-Credentials: true`;
}

/** The page and the hub use two names of this machine: the cookie of one never reaches the other. */
export function oneHostNameFix(pageHost: string, hubHost: string): string {
    return (
        `use one host name on both sides: the page is on ${pageHost} and the hub on ${hubHost}, and the cookie Laravel sets for ${pageHost} never reaches ${hubHost} ` +
        `(listing the origin in the hub's cors_origins does not change that); open the app with the host name of Laravel's APP_URL and MERCURE_PUBLIC_URL and the connector's host`
    );
}

/** Whether `a` and `b` are two different loopback names of this machine (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`). */
export function twoLoopbackNames(a: string, b: string): boolean {
    const loopback = (host: string) => host === "localhost" || host.endsWith(".localhost") || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === "[::1]" || host === "::1";
    return a.toLowerCase() !== b.toLowerCase() && loopback(a.toLowerCase()) && loopback(b.toLowerCase());
}

function hostOf(origin: string): string | null {
    try {
        return new URL(origin).hostname;
    } catch {
        return null;
    }
}

/** The hub refuses cookie-authenticated publishes (whispers) from the page origin. */
export function publishOriginFix(pageOrigin: string | null): string {
    return pageOrigin === null
        ? "send an Origin the hub lists in its publish_origins (a cookie-authenticated publish needs one)"
        : `add ${pageOrigin} to the hub's publish_origins (needed for whispers)`;
}

/** The hub speaks Mercure 0.x. */
export function upgradeFix(): string {
    return "upgrade the hub to Mercure 1.0 (this connector speaks only the 1.0 protocol)";
}

/**
 * How to upgrade a 0.x hub so that Laravel's tokens work on it (what `doctor` prints): the settings of the
 * official 1.0 Caddyfile that a 0.x configuration has no equivalent of, with Laravel's issuer and cookie name
 * when known.
 */
export function upgradeSteps(issuer: string | null, cookieName: string | null): string {
    const trusted = issuer === null ? "the issuer Laravel signs as (MERCURE_JWT_ISSUER, else APP_URL)" : `"${issuer}" (Laravel's MERCURE_JWT_ISSUER, else APP_URL)`;
    const cookie = cookieName === null ? "Laravel's MERCURE_COOKIE_NAME" : `"${cookieName}" (Laravel's MERCURE_COOKIE_NAME)`;
    return (
        `${upgradeFix()}; in its 1.0 configuration, trust ${trusted} with an issuer block (MERCURE_TRUSTED_ISSUERS in the official Caddyfile; ` +
        `0.x's publisher_jwt and subscriber_jwt work only in compatibility mode), keep Laravel's MERCURE_JWT_SECRET as the publisher and subscriber key, ` +
        `and set cookie_name to ${cookie}`
    );
}

/** The subscribe request carries more matchers than the reference hub accepts. */
export function tooManyMatchersFix(): string {
    return "leave channels you no longer need (each presence channel costs 2 matchers)";
}

/** The URL answering is not a Mercure hub. */
export function notAHubFix(): string {
    return 'set the connector\'s host and Laravel\'s MERCURE_PUBLIC_URL to the hub URL (usually ending in "/.well-known/mercure")';
}

/** The token's audience is not the hub's resource identifier. */
export function audienceFix(resource: string, hub: string): string {
    return resource === hub
        ? `set Laravel's MERCURE_PUBLIC_URL to exactly "${resource}", the URL the hub expects in aud`
        : `set Laravel's MERCURE_PUBLIC_URL to "${resource}", or the hub's resource identifier to "${hub}", the URL clients use`;
}

/** The token is refused for a reason its readable claims do not show: issuer or key. */
export function issuerOrKeyFix(issuer: string | null): string {
    return (
        (issuer === null ? "make the hub trust Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL)" : `make the hub trust the issuer "${issuer}"`) +
        " and verify tokens with Laravel's MERCURE_JWT_SECRET"
    );
}

/** The hub verifies publish tokens with another key than subscribe tokens. */
export function sameKeyFix(): string {
    return "give the hub Laravel's MERCURE_JWT_SECRET as its publisher key too (one key for both roles)";
}

/** The token expired. */
export function expiredFix(): string {
    return "renew the cookie before it expires (the connector re-authorizes; check the server's clock)";
}

/** The token lacks a grant. */
export function scopeFix(): string {
    return "check the channel's authorization in routes/channels.php, and client_events for whispers";
}

/** The cookie cannot reach the hub, for `problem`. */
export function cookieFix(problem: CookieProblem): string {
    switch (problem.kind) {
        case "name_mismatch":
            return `use one cookie name on both sides: Laravel sets "${problem.appCookie}" (MERCURE_COOKIE_NAME) but the hub reads "${problem.hubCookie}" (its cookie_name)`;
        case "secure_prefix_on_http":
            return `browsers refuse the "${problem.name}" cookie over plain HTTP: serve the app and the hub over HTTPS, or use a name without the __Secure- prefix on both sides`;
        case "cross_site":
            if (twoLoopbackNames(problem.pageHost, problem.hubHost)) return oneHostNameFix(problem.pageHost, problem.hubHost);
            return `the cookie set for ${problem.pageHost} cannot reach a hub on ${problem.hubHost}: serve the hub on the app's host or a subdomain of the same site (a reverse proxy at /.well-known/mercure is simplest)`;
    }
}

/**
 * No known reason why the cookie did not reach the hub; `inPage`: a browser page sent the request (outside one, in
 * Node.js, the cookie travels only if the client's `fetch` keeps it and its EventSource uses that `fetch`).
 */
export function cookieGenericFix(hubCookie: string | null, hubPath: string, inPage: boolean): string {
    return (
        (hubCookie === null ? "check that Laravel's MERCURE_COOKIE_NAME is the hub's cookie_name" : `check that Laravel's MERCURE_COOKIE_NAME is "${hubCookie}", the hub's cookie_name`) +
        (inPage
            ? `, and that the SameSite=Strict cookie with path ${hubPath} is sent to the hub (same site as the page)`
            : `, and, outside a browser, that the fetch you pass keeps the cookie the auth request set and that the EventSource sends it (the eventsource package, given that fetch)`)
    );
}
