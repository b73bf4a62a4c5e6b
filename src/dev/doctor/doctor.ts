import { fetchMetadata, type MetadataOutcome } from "../../discovery/metadata";
import { probe, probeUrl } from "../../discovery/probe";
import type { FetchLike } from "../../transport/platform";
import { evaluate, type CheckResult } from "./checks";
import { findHub } from "./find-hub";
import { checkHistory } from "./history";

/** What `doctor` checks. */
export interface DoctorOptions {
    /** The app's URL (a page of it). */
    appUrl: string;
    /** The hub cookie to subscribe with, as the browser holds it (`--cookie name=value`). */
    cookie?: { name: string; value: string } | null;
    /** A bearer token to subscribe with (`--token`). */
    token?: string | null;
    /** The origin pages are served from (`--origin`); default the app URL's origin. */
    origin?: string | null;
    /** Deadline of each request in milliseconds; default 10 000. */
    timeout?: number;
    /** The fetch to use; default `globalThis.fetch`. */
    fetch?: FetchLike;
    /** The clock; default `Date.now`. */
    now?: () => number;
}

/** The report: every check's line, in order. */
export interface DoctorReport {
    /** The app URL checked. */
    readonly appUrl: string;
    /** The origin checked for CORS and publishing. */
    readonly origin: string;
    /** The hub found, or null. */
    readonly hub: string | null;
    /** One result per check. */
    readonly checks: readonly CheckResult[];
    /** Whether no check failed. */
    readonly ok: boolean;
}

/** The checks run after "hub found", skipped together when no hub was found. */
const LATER_CHECKS = ["hub reachable", "metadata valid", "Mercure 1.0", "CORS for the app origin", "cookie name", "anonymous access", "credentials accepted", "publish origin (whispers)", "history across pages"];

/** Default deadline of each request, in milliseconds. */
export const DEFAULT_DOCTOR_TIMEOUT = 10_000;

/**
 * Check a live deployment as a browser on `origin` would meet it: find the hub, subscribe without and with
 * the given credentials, read the metadata, and try a cookie-authenticated publish that cannot publish
 * anything (no topic, a dummy token). Never rejects.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
    const fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    const timeout = options.timeout ?? DEFAULT_DOCTOR_TIMEOUT;
    const origin = options.origin ?? new URL(options.appUrl).origin;
    const located = await findHub(options.appUrl, fetch, timeout);
    const hub = located.hub;
    if (hub === null) {
        const skipped = LATER_CHECKS.map((name): CheckResult => ({ name, verdict: "skip", detail: "no hub found" }));
        return { appUrl: options.appUrl, origin, hub: null, checks: [located.result, ...skipped], ok: false };
    }
    const cookie = options.cookie ?? null;
    const token = options.token ?? null;
    const anonymous = await probe({ url: probeUrl(hub), fetch, pageOrigin: origin, timeout });
    const challenged = anonymous.kind === "answered" ? anonymous.challenge?.resourceMetadata ?? null : null;
    const metadata = await fetchMetadata(hub, { fetch, timeout, url: sameOrigin(challenged, hub) });
    const credentialHeaders: Record<string, string> | null = token !== null ? { Authorization: `Bearer ${token}` } : cookie !== null ? { Cookie: `${cookie.name}=${cookie.value}` } : null;
    const withheld = credentialHeaders === null ? null : withholdCredentials(options.appUrl, hub, metadata);
    // Not followed through a redirect either: the credentials go to the hub URL checked, nowhere else.
    const credentialed =
        credentialHeaders === null || withheld !== null
            ? null
            : await probe({ url: probeUrl(hub), fetch: (url, init) => fetch(url, { ...init, redirect: "manual" }), pageOrigin: null, headers: credentialHeaders, timeout });
    const cookieName = cookie?.name ?? (metadata.kind === "found" ? metadata.validation.metadata?.mercureCookie : null) ?? "mercure_access_token";
    // No topic and a dummy token: the hub checks the origin first (400 when refused), then refuses the token.
    const publish = await probe({
        url: hub.href,
        fetch,
        pageOrigin: null,
        method: "POST",
        body: "",
        headers: { Origin: origin, Cookie: `${cookieName}=laravel-echo-mercure-doctor`, "Content-Type": "application/x-www-form-urlencoded" },
        timeout,
    });
    // From the cursor the page rendered: with the credentials where they may go, else anonymously.
    const history = await checkHistory(hub, located.cursor ?? null, withheld === null ? credentialHeaders : null, fetch, timeout);
    const checks = [
        located.result,
        ...evaluate({ hub, origin, anonymous, metadata, credentialed, cookie, token, publish, now: (options.now ?? Date.now)() }).map((check) =>
            check.name === "credentials accepted" && withheld !== null ? { name: check.name, verdict: "skip" as const, detail: `${token !== null ? "--token" : "--cookie"} not sent: ${withheld}` } : check,
        ),
        history,
    ];
    return { appUrl: options.appUrl, origin, hub: hub.href, checks, ok: checks.every((check) => check.verdict !== "fail") };
}

/**
 * Why `--cookie`/`--token` must not go to `hub`, or null when they may: only to the app's own origin (the one the user
 * named) or to a hub whose own protected-resource metadata names exactly it as `resource` (RFC 9728 §3.3), and never
 * over plain HTTP when the app is served over HTTPS.
 */
function withholdCredentials(appUrl: string, hub: URL, metadata: MetadataOutcome): string | null {
    const app = new URL(appUrl);
    if (app.protocol === "https:" && hub.protocol !== "https:") return `the hub ${hub.href} is plain HTTP while the app is HTTPS, and they would travel in the clear`;
    if (hub.origin === app.origin || (metadata.kind === "found" && metadata.validation.resourceMatches)) return null;
    return `the hub ${hub.href} is on another origin than the app (${app.origin}) and its protected-resource metadata does not name it as its resource (RFC 9728 §3.3): serve metadata there whose resource is the hub URL`;
}

/** A `resource_metadata` URL, used only on the hub's own origin. */
function sameOrigin(url: string | null, hub: URL): string | null {
    if (url === null) return null;
    try {
        return new URL(url).origin === hub.origin ? url : null;
    } catch {
        return null;
    }
}
