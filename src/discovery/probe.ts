import type { FetchLike, FetchResponseLike } from "../transport/platform";
import { within } from "../transport/deadline";
import { describeFailure, discardBody, readHeader, responseType, responseUrl } from "./response";
import { bearerChallenge, type BearerChallenge } from "./www-authenticate";

/** The exact-match topic a probe subscribes to: no update is ever published there, no presence listens. */
export const PROBE_TOPIC = "urn:laravel-echo-mercure:probe";

/** Default deadline of one probe (until the response headers and an error body arrived), in milliseconds. */
export const DEFAULT_PROBE_TIMEOUT = 10_000;

/** The longest error body a probe keeps, in characters. */
const MAX_BODY = 2_000;

/**
 * Whether the hub let the page read its answer (mercure-hub §7).
 *
 * - `not_applicable`: no page origin is known (outside a browser, nothing to check).
 * - `same_origin`: the page and the hub share an origin.
 * - `allowed`: a browser read the cross-origin answer, or the answer names the page origin in
 *   `Access-Control-Allow-Origin` with `Access-Control-Allow-Credentials: true`.
 * - `refused`: the answer lacks those headers (seen where fetch does not enforce CORS, as in Node.js).
 */
export type CorsOutcome = "not_applicable" | "same_origin" | "allowed" | "refused";

/**
 * What one probe request observed, classified.
 *
 * - `answered`: an HTTP answer: its status, its Bearer challenge, its error body, its CORS outcome, and
 *   whether the browser hid its headers.
 * - `cors_blocked`: the request failed in the browser but a `no-cors` request reached the hub: the hub
 *   is up and CORS refuses the page.
 * - `unreachable`: no HTTP answer at all (connection refused, DNS, TLS, mixed content).
 * - `timeout`: no response headers before the deadline.
 * - `aborted`: the caller aborted.
 */
export type ProbeOutcome =
    | {
          readonly kind: "answered";
          readonly status: number;
          readonly challenge: BearerChallenge | null;
          readonly body: string;
          /** The `Content-Type` (an accepted stream's is `text/event-stream`), when readable. */
          readonly contentType: string | null;
          readonly cors: CorsOutcome;
          /**
           * True when a browser read a cross-origin answer: it shows only CORS-safelisted and exposed
           * headers (the reference hub exposes only `Link`), so a missing challenge proves nothing.
           */
          readonly headersHidden: boolean;
          /** The hub's `Mercure-Last-Event-ID` (mercure-hub §1.4: answered when the request carried a cursor), when readable. */
          readonly lastEventId: string | null;
      }
    | { readonly kind: "cors_blocked" }
    | { readonly kind: "unreachable"; readonly reason: string }
    | { readonly kind: "timeout"; readonly ms: number }
    | { readonly kind: "aborted" };

/** One probe request. */
export interface ProbeRequest {
    /** The URL to request (see {@link probeUrl}). */
    readonly url: string;
    /** The fetch to use: the connector's, so that its cookies travel. */
    readonly fetch: FetchLike;
    /** The page origin, or null outside a browser: decides whether CORS applies. */
    readonly pageOrigin: string | null;
    /** `GET` (default) or `POST`. */
    readonly method?: "GET" | "POST";
    /** Extra headers, e.g. `Cookie` or `Authorization` outside a browser. */
    readonly headers?: Readonly<Record<string, string>>;
    /** A request body (POST). */
    readonly body?: string;
    /** Deadline in milliseconds; default {@link DEFAULT_PROBE_TIMEOUT}. */
    readonly timeout?: number;
    /** Abort the probe. */
    readonly signal?: AbortSignal;
}

/**
 * The URL a probe subscribes to: the hub URL with `count` exact matchers on {@link PROBE_TOPIC} (numbered),
 * so that a hub limiting matchers answers as it did to the failed stream, while no real topic is
 * subscribed (a real presence topic would announce a phantom member to the room).
 */
export function probeUrl(hub: URL | string, count = 1): string {
    const url = new URL(String(hub));
    url.hash = "";
    const params = new URLSearchParams();
    for (let i = 1; i <= Math.max(1, count); i++) params.append("match", count > 1 ? `${PROBE_TOPIC}:${i}` : PROBE_TOPIC);
    url.search = params.toString();
    return url.href;
}

/** How many matcher parameters (`match`, `match_exact`, `match_urlpattern`, …) a subscribe URL carries. */
export function countMatchers(subscribeUrl: string): number {
    try {
        let count = 0;
        // [spec] mercure-hub §1.2: every parameter whose name starts with `match` is a matcher.
        for (const name of new URL(subscribeUrl).searchParams.keys()) if (name.toLowerCase().startsWith("match")) count++;
        return count;
    } catch {
        return 0;
    }
}

/**
 * Send one request to the hub with credentials and report what came back, reading only the headers of a
 * successful event stream (it is cancelled at once) and the start of an error body; never rejects.
 * When the request fails cross-origin, a second, `no-cors` request tells a CORS refusal (it reaches the
 * hub) from a hub that is down (it fails too).
 */
export async function probe(request: ProbeRequest): Promise<ProbeOutcome> {
    const timeout = request.timeout ?? DEFAULT_PROBE_TIMEOUT;
    const signal = request.signal ?? new AbortController().signal;
    const method = request.method ?? "GET";
    const crossOrigin = request.pageOrigin !== null && originOf(request.url) !== request.pageOrigin;
    const headers: Record<string, string> = { Accept: method === "GET" ? "text/event-stream" : "*/*" };
    // Browsers ignore a script's Origin header and send their own; elsewhere this stands in for it.
    if (crossOrigin) headers["Origin"] = request.pageOrigin!;
    Object.assign(headers, request.headers);
    const waited = await within(
        async (inner) => {
            const response = await request.fetch(request.url, {
                method,
                headers,
                credentials: "include",
                signal: inner,
                ...(request.body !== undefined ? { body: request.body } : {}),
            });
            const success = response.status >= 200 && response.status < 300;
            // An accepted event stream never ends: read its headers only.
            if (success) discardBody(response);
            return { response, body: success ? "" : (await response.text()).slice(0, MAX_BODY) };
        },
        timeout,
        signal,
    );
    switch (waited.kind) {
        case "aborted":
            return { kind: "aborted" };
        case "timeout":
            return { kind: "timeout", ms: timeout };
        case "failed":
            if (signal.aborted) return { kind: "aborted" };
            return crossOrigin ? probeWithoutCors(request, timeout, signal, waited.cause) : { kind: "unreachable", reason: describeFailure(waited.cause) };
        case "done": {
            const { response, body } = waited.value;
            return {
                kind: "answered",
                status: response.status,
                challenge: bearerChallenge(readHeader(response, "www-authenticate")),
                body,
                contentType: readHeader(response, "content-type"),
                cors: corsOutcome(response, request),
                headersHidden: responseType(response) === "cors",
                lastEventId: readHeader(response, "mercure-last-event-id"),
            };
        }
    }
}

/** The CORS outcome of an answer the script could read. */
function corsOutcome(response: FetchResponseLike, request: ProbeRequest): CorsOutcome {
    if (request.pageOrigin === null) return "not_applicable";
    if (originOf(responseUrl(response) ?? request.url) === request.pageOrigin) return "same_origin";
    // A browser hands a cross-origin answer to the script only when CORS allowed it.
    if (responseType(response) === "cors") return "allowed";
    // [spec] mercure-hub §7: credentialed CORS needs the exact origin and Allow-Credentials: true.
    const allowOrigin = readHeader(response, "access-control-allow-origin");
    const allowCredentials = readHeader(response, "access-control-allow-credentials");
    return allowOrigin === request.pageOrigin && allowCredentials?.toLowerCase() === "true" ? "allowed" : "refused";
}

/** After a failed cross-origin request: an opaque `no-cors` answer means the hub is up and CORS refused. */
async function probeWithoutCors(request: ProbeRequest, timeout: number, signal: AbortSignal, first: unknown): Promise<ProbeOutcome> {
    const waited = await within(
        async (inner) => {
            const response = await request.fetch(request.url, { method: "GET", mode: "no-cors", credentials: "include", signal: inner });
            discardBody(response);
            return response;
        },
        timeout,
        signal,
    );
    if (waited.kind === "aborted") return { kind: "aborted" };
    if (waited.kind === "done") {
        // An opaque answer (a browser) proves only that the hub answered; a readable one (no CORS here)
        // would contradict the first failure, so that counts as unreachable too.
        return responseType(waited.value) === "opaque" ? { kind: "cors_blocked" } : { kind: "unreachable", reason: describeFailure(first) };
    }
    return { kind: "unreachable", reason: describeFailure(first) };
}

function originOf(url: string): string | null {
    try {
        return new URL(url).origin;
    } catch {
        return null;
    }
}
