import type { MercureError } from "../errors";
import type { FetchLike } from "../transport/platform";
import { classify, type DiagnosedFailure, type Diagnosis } from "./classify";
import { discoveryError } from "./discovery-error";
import { fetchMetadata, type MetadataOutcome } from "./metadata";
import { countMatchers, probe, probeUrl, type ProbeOutcome } from "./probe";
import { readTokenClaims } from "./token-claims";

/*
 * The lazily loaded entry of the diagnostics: the connector imports this module with `import()` only
 * after a failure, so none of it weighs on the page until then.
 */

export { classify, MAX_MATCHERS, type DiagnosedFailure, type Diagnosis, type DiagnosisCode, type DiagnosisFacts } from "./classify";

/** What {@link diagnose} needs to know about a failure. */
export interface DiagnoseInput {
    /** The hub URL the connector uses (its `host`, resolved); its query is ignored. */
    hub: URL | string;
    /** The connector's fetch (cookies must travel with it, as with the `EventSource`). */
    fetch: FetchLike;
    /** What failed. */
    failure: DiagnosedFailure;
    /**
     * The subscribe URL of the stream that failed; only its number of matchers is reproduced (the probe
     * subscribes to a topic nobody uses, never to the channels' topics).
     */
    subscribeUrl?: string | null;
    /** The page origin; default `location.origin` in a browser, null elsewhere. */
    pageOrigin?: string | null;
    /** The cookie name the app sets (Laravel's `MERCURE_COOKIE_NAME`), when known. */
    cookieName?: string | null;
    /** Outside a browser: a cookie to send by value (its name is compared with the hub's, its claims read). */
    cookie?: { readonly name: string; readonly value: string } | null;
    /** Outside a browser: a bearer token to send instead of the cookie (its claims are read). */
    token?: string | null;
    /** When the cookie the connector obtained expires, in ms since the epoch (from `expires_in`). */
    tokenExpiresAt?: number | null;
    /** Deadline of each request in milliseconds; default 10 000. */
    timeout?: number;
    /** Abort the diagnosis (then it resolves null). */
    signal?: AbortSignal;
    /** The clock, in ms since the epoch; default `Date.now`. */
    now?: () => number;
}

/**
 * Probe the hub once with `fetch` (which, unlike `EventSource`, can read the status, the
 * `WWW-Authenticate` challenge and the CORS outcome), fetch its metadata when a 401 needs it, and name the
 * cause of `input.failure`. Resolves null when the hub accepts the same request now or the diagnosis was
 * aborted; never rejects.
 */
export async function diagnose(input: DiagnoseInput): Promise<Diagnosis | null> {
    let hub: URL;
    try {
        hub = new URL(String(input.hub));
    } catch {
        return null; // No hub URL, nothing to probe: the connector's own error about `host` stands.
    }
    hub.search = "";
    hub.hash = "";
    const pageOrigin = input.pageOrigin === undefined ? currentPageOrigin() : input.pageOrigin;
    const failure = input.failure;
    const tokenValue = input.token ?? input.cookie?.value ?? null;
    const options = { timeout: input.timeout, signal: input.signal };
    let observed: ProbeOutcome | null = null;
    if (!(failure.kind === "whisper_post" && (failure.status === 400 || failure.status === 403))) {
        const headers: Record<string, string> = {};
        if (input.token) headers["Authorization"] = `Bearer ${input.token}`;
        else if (input.cookie) headers["Cookie"] = `${input.cookie.name}=${input.cookie.value}`;
        const matchers = input.subscribeUrl ? countMatchers(input.subscribeUrl) : 1;
        observed = await probe({ url: probeUrl(hub, matchers), fetch: input.fetch, pageOrigin, headers, ...options });
    }
    let metadata: MetadataOutcome | null = null;
    if (observed?.kind === "answered" && observed.status === 401 && observed.cors !== "refused") {
        // [spec] mercure-hub §5: the metadata is optional; fetched only when a 401 needs explaining.
        metadata = await fetchMetadata(hub, { fetch: input.fetch, url: sameOriginUrl(observed.challenge?.resourceMetadata ?? null, hub), ...options });
    }
    if (input.signal?.aborted) return null;
    return classify({
        hub,
        pageOrigin,
        failure,
        matcherCount: input.subscribeUrl ? countMatchers(input.subscribeUrl) : 1,
        probe: observed,
        metadata,
        appCookie: input.cookieName ?? input.cookie?.name ?? null,
        token: tokenValue === null ? null : readTokenClaims(tokenValue),
        tokenExpiresAt: input.tokenExpiresAt ?? null,
        now: (input.now ?? Date.now)(),
    });
}

/** The `MercureError` of a diagnosis, addressed to `channel` when it concerns one. */
export function diagnosisError(diagnosis: Diagnosis, channel?: string, cause?: unknown): MercureError {
    return discoveryError(diagnosis.code, diagnosis.message, {
        ...(channel !== undefined ? { channel } : {}),
        ...(diagnosis.status !== undefined ? { status: diagnosis.status } : {}),
        ...(cause !== undefined ? { cause } : {}),
    });
}

/** A challenge's `resource_metadata` URL, used only when it is on the hub's own origin. */
function sameOriginUrl(url: string | null, hub: URL): string | null {
    if (url === null) return null;
    try {
        const parsed = new URL(url, hub);
        return parsed.origin === hub.origin ? parsed.href : null;
    } catch {
        return null;
    }
}

function currentPageOrigin(): string | null {
    const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
    return typeof origin === "string" && /^https?:/.test(origin) ? origin : null;
}
