import * as advice from "../../discovery/advice";
import { classify, type Diagnosis } from "../../discovery/classify";
import { cookieProblems, type CookieProblem } from "../../discovery/cookie-reach";
import type { MetadataOutcome } from "../../discovery/metadata";
import type { ProbeOutcome } from "../../discovery/probe";
import { readTokenClaims } from "../../discovery/token-claims";

/** A check's verdict: only `fail` makes the command exit non-zero. */
export type Verdict = "pass" | "fail" | "warn" | "skip";

/** One line of the report: a check, its verdict, what was seen, and the fix when it failed. */
export interface CheckResult {
    /** The check, e.g. `hub reachable`. */
    readonly name: string;
    /** Its verdict. */
    readonly verdict: Verdict;
    /** What was seen (a failure's cause). */
    readonly detail: string;
    /** What to change, for a failure or a warning. */
    readonly fix?: string;
}

/** What the doctor observed of a hub it found: every request's outcome, gathered before judging. */
export interface Observations {
    /** The hub URL. */
    readonly hub: URL;
    /** The origin pages are served from (`--origin`, else the app URL's). */
    readonly origin: string;
    /** A subscription without credentials, sent with the page origin. */
    readonly anonymous: ProbeOutcome;
    /** The metadata document. */
    readonly metadata: MetadataOutcome;
    /** A subscription with `--cookie` or `--token`, or null when neither was given. */
    readonly credentialed: ProbeOutcome | null;
    /** The cookie given with `--cookie`. */
    readonly cookie: { readonly name: string; readonly value: string } | null;
    /** The token given with `--token`. */
    readonly token: string | null;
    /** A cookie-authenticated publish without content from the page origin (nothing can be published). */
    readonly publish: ProbeOutcome;
    /** The current time in ms since the epoch. */
    readonly now: number;
}

/** Judge every check after "hub found" from the observations; pure. */
export function evaluate(observations: Observations): CheckResult[] {
    return [
        reachable(observations),
        metadataValid(observations),
        mercure10(observations),
        cors(observations),
        cookieName(observations),
        anonymousAccess(observations),
        credentials(observations),
        publishOrigin(observations),
    ];
}

function reachable(o: Observations): CheckResult {
    const name = "hub reachable";
    const probe = o.anonymous;
    if (probe.kind === "answered" && probe.status < 500 && ![404, 405, 410].includes(probe.status)) {
        return { name, verdict: "pass", detail: `HTTP ${probe.status} to a subscription without credentials` };
    }
    return fromDiagnosis(name, diagnose(o, probe));
}

function metadataValid(o: Observations): CheckResult {
    const name = "metadata valid";
    const metadata = o.metadata;
    if (metadata.kind === "absent") {
        return { name, verdict: "warn", detail: `not served (${metadata.url} answers HTTP ${metadata.status}); optional, but a Mercure 1.0 hub that accepts tokens serves it` };
    }
    if (metadata.kind === "unavailable") return { name, verdict: "warn", detail: `${metadata.url} could not be read (${metadata.reason})` };
    const { validation } = metadata;
    if (validation.metadata !== null && !validation.resourceMatches) {
        const hub = hubHref(o.hub);
        return {
            name,
            verdict: "fail",
            detail: `resource is "${validation.metadata.resource}" but the hub is reached at "${hub}", so tokens signed for "${hub}" (aud) are refused`,
            fix: advice.audienceFix(validation.metadata.resource, hub),
        };
    }
    if (validation.problems.length > 0 || validation.metadata === null) {
        return { name, verdict: "fail", detail: validation.problems.join("; "), fix: "fix the hub's protected-resource metadata (RFC 9728, mercure-hub §5)" };
    }
    const cookie = validation.metadata.mercureCookie;
    return { name, verdict: "pass", detail: `resource "${validation.metadata.resource}"${cookie === null ? "" : `, cookie "${cookie}"`}` };
}

function mercure10(o: Observations): CheckResult {
    const name = "Mercure 1.0";
    for (const probe of [o.anonymous, o.credentialed]) {
        if (probe?.kind !== "answered") continue;
        const outdated = diagnose(o, probe);
        if (outdated?.code === "hub_outdated") {
            const token = o.token ?? o.cookie?.value ?? null;
            const issuer = token === null ? null : (readTokenClaims(token)?.issuer ?? null);
            return { ...fromDiagnosis(name, outdated), fix: advice.upgradeSteps(issuer, o.cookie?.name ?? null) };
        }
    }
    const anonymous = o.anonymous;
    if (o.metadata.kind === "found") return { name, verdict: "pass", detail: "it serves protected-resource metadata" };
    if (anonymous.kind === "answered" && anonymous.challenge !== null) return { name, verdict: "pass", detail: "it answers with RFC 6750 challenges" };
    if (anonymous.kind === "answered" && anonymous.status >= 200 && anonymous.status < 300) return { name, verdict: "pass", detail: "it accepts match= subscriptions" };
    return { name, verdict: "skip", detail: "nothing the hub answered tells its version" };
}

function cors(o: Observations): CheckResult {
    const name = "CORS for the app origin";
    if (o.hub.origin === o.origin) return { name, verdict: "pass", detail: `the hub is on the app's origin (${o.origin}): no CORS needed` };
    const probe = o.anonymous;
    if (probe.kind !== "answered") return { name, verdict: "skip", detail: "the hub did not answer" };
    if (probe.cors === "allowed") return { name, verdict: "pass", detail: `${o.origin} may subscribe with credentials` };
    return {
        name,
        verdict: "fail",
        detail: `the hub does not allow credentialed requests from ${o.origin} (no Access-Control-Allow-Origin: ${o.origin} with Access-Control-Allow-Credentials: true)`,
        fix: advice.corsFix(o.origin, o.hub.hostname),
    };
}

function cookieName(o: Observations): CheckResult {
    const name = "cookie name";
    const hubCookie = o.metadata.kind === "found" ? (o.metadata.validation.metadata?.mercureCookie ?? null) : null;
    const appCookie = o.cookie?.name ?? null;
    const [problem] = cookieProblems({ hub: o.hub, pageOrigin: o.origin, hubCookie, appCookie });
    if (problem !== undefined) return { name, verdict: "fail", detail: cookieCause(problem), fix: advice.cookieFix(problem) };
    if (hubCookie === null) return { name, verdict: "skip", detail: "the hub does not advertise its cookie name (mercure_cookie)" };
    return {
        name,
        verdict: "pass",
        detail: appCookie === null ? `the hub reads "${hubCookie}": Laravel's MERCURE_COOKIE_NAME must be the same` : `the hub reads "${hubCookie}", the cookie given`,
    };
}

function anonymousAccess(o: Observations): CheckResult {
    const name = "anonymous access";
    const probe = o.anonymous;
    if (probe.kind !== "answered") return { name, verdict: "skip", detail: "the hub did not answer" };
    if (probe.status >= 200 && probe.status < 300) return { name, verdict: "pass", detail: "accepted: subscribers without a cookie receive public updates" };
    if (probe.status === 401) return { name, verdict: "pass", detail: "refused: every subscriber needs the cookie (Laravel's auth endpoint sets it, for public channels too)" };
    return { name, verdict: "skip", detail: `HTTP ${probe.status}` };
}

function credentials(o: Observations): CheckResult {
    const given = o.token !== null ? "--token" : o.cookie !== null ? `--cookie ${o.cookie.name}` : null;
    const name = "credentials accepted";
    if (o.credentialed === null || given === null) {
        return { name, verdict: "skip", detail: "pass --cookie <name>=<value> or --token <jwt> to check a subscription with them" };
    }
    const probe = o.credentialed;
    if (probe.kind === "answered" && probe.status >= 200 && probe.status < 300) return { name, verdict: "pass", detail: `the hub accepts a subscription with ${given}` };
    const diagnosis = diagnose(o, probe);
    return diagnosis === null ? { name, verdict: "warn", detail: "the request did not complete" } : fromDiagnosis(name, diagnosis);
}

function publishOrigin(o: Observations): CheckResult {
    const name = "publish origin (whispers)";
    const probe = o.publish;
    if (probe.kind !== "answered") return { name, verdict: "skip", detail: "the hub did not answer" };
    // [spec] mercure-hub §3: the origin is checked before the token: 400 invalid_request means refused.
    if (probe.status === 400 && probe.challenge?.error === "invalid_request") {
        return { name, verdict: "fail", detail: `the hub refuses cookie-authenticated publishes (whispers) from ${o.origin} (HTTP 400 invalid_request)`, fix: advice.publishOriginFix(o.origin) };
    }
    // [spec] mercure-hub §10: a 0.x hub answers a bare 401 to a refused origin and to a refused token alike.
    if (probe.status === 401 && probe.challenge === null) {
        return { name, verdict: "skip", detail: `HTTP 401 without a challenge, which a 0.x hub answers whether it refuses the origin ${o.origin} or the token: cannot tell` };
    }
    if (probe.status === 401 || probe.status === 403) return { name, verdict: "pass", detail: `${o.origin} may publish with the cookie (whispers); the probe's dummy token was then refused` };
    return { name, verdict: "warn", detail: `HTTP ${probe.status} to a cookie-authenticated publish from ${o.origin}: could not tell` };
}

/** Classify one probe's outcome as a failed subscription. */
function diagnose(o: Observations, probe: ProbeOutcome): Diagnosis | null {
    const value = o.token ?? o.cookie?.value ?? null;
    return classify({
        hub: o.hub,
        pageOrigin: o.origin,
        failure: { kind: "stream" },
        matcherCount: 1,
        probe,
        metadata: o.metadata,
        appCookie: o.cookie?.name ?? null,
        token: value === null ? null : readTokenClaims(value),
        tokenExpiresAt: null,
        now: o.now,
    });
}

/** A failed check from a diagnosis: its message is "cause: fix.". */
export function fromDiagnosis(name: string, diagnosis: Diagnosis | null): CheckResult {
    if (diagnosis === null) return { name, verdict: "warn", detail: "the request did not complete" };
    const message = diagnosis.message.replace(/\.$/, "");
    const colon = sentenceColon(message);
    return colon === -1
        ? { name, verdict: "fail", detail: message }
        : { name, verdict: "fail", detail: message.slice(0, colon), fix: message.slice(colon + 2) };
}

/** The first `": "` outside parentheses (a cause quoted in them, "(fetch failed: ECONNREFUSED)", is not the split), or -1. */
function sentenceColon(message: string): number {
    let depth = 0;
    for (let i = 0; i < message.length - 1; i++) {
        const char = message[i];
        if (char === "(") depth++;
        else if (char === ")") depth = Math.max(0, depth - 1);
        else if (char === ":" && depth === 0 && message[i + 1] === " ") return i;
    }
    return -1;
}

function cookieCause(problem: CookieProblem): string {
    switch (problem.kind) {
        case "name_mismatch":
            return `the cookie given is "${problem.appCookie}" but the hub reads "${problem.hubCookie}"`;
        case "secure_prefix_on_http":
            return `"${problem.name}" has the __Secure- prefix, but the app or the hub is on plain HTTP`;
        case "cross_site":
            return `the app (${problem.pageHost}) and the hub (${problem.hubHost}) are on different sites`;
    }
}

function hubHref(hub: URL): string {
    return hub.origin + hub.pathname;
}
