import { describe, expect, it } from "vitest";
import { classify, type DiagnosisFacts } from "../../../src/discovery/classify";
import { validateMetadata, type MetadataOutcome } from "../../../src/discovery/metadata";
import type { ProbeOutcome } from "../../../src/discovery/probe";
import { readTokenClaims } from "../../../src/discovery/token-claims";
import { unsignedToken } from "./fake-hub";

const HUB = "https://example.com/.well-known/mercure";
const NOW = Date.parse("2026-09-01T12:00:00Z");

/** An HTTP answer of the probe. */
function answered(status: number, extra: Partial<Extract<ProbeOutcome, { kind: "answered" }>> = {}): ProbeOutcome {
    return { kind: "answered", status, challenge: null, body: "", contentType: null, cors: "same_origin", headersHidden: false, lastEventId: null, ...extra };
}

/** A challenge with `error`. */
function challenge(error: string | null) {
    return { error, errorDescription: null, resourceMetadata: null, scope: null };
}

/** The metadata document a hub serves, found. */
function metadata(overrides: Record<string, unknown> = {}): MetadataOutcome {
    const document = { resource: HUB, mercure_cookie: "mercure_access_token", ...overrides };
    return { kind: "found", url: "https://example.com/.well-known/oauth-protected-resource/.well-known/mercure", validation: validateMetadata(document, HUB) };
}

function facts(overrides: Partial<DiagnosisFacts>): DiagnosisFacts {
    return {
        hub: new URL(HUB),
        pageOrigin: "https://example.com",
        failure: { kind: "stream" },
        matcherCount: 2,
        probe: answered(200),
        metadata: null,
        appCookie: null,
        token: null,
        tokenExpiresAt: null,
        now: NOW,
        ...overrides,
    };
}

describe("classify()", () => {
    it("names nothing when the hub accepts the stream now", () => {
        expect(classify(facts({}))).toBeNull();
        expect(classify(facts({ probe: { kind: "aborted" } }))).toBeNull();
        expect(classify(facts({ failure: { kind: "whisper_post", status: "network" } }))).toBeNull();
    });

    it("names a hub that does not answer, to be retried", () => {
        expect(classify(facts({ probe: { kind: "unreachable", reason: "connect ECONNREFUSED" } }))).toEqual({
            code: "hub_unreachable",
            message: "The hub at https://example.com/.well-known/mercure could not be reached (connect ECONNREFUSED): check that it is running and that the connector's host names it.",
            status: undefined,
            retry: true,
        });
    });

    it("names mixed content: a plain-HTTP hub from an HTTPS page, which retrying cannot fix", () => {
        const result = classify(facts({ hub: new URL("http://hub.example.com/.well-known/mercure"), probe: { kind: "unreachable", reason: "Failed to fetch" } }));
        expect(result).toMatchObject({ code: "hub_unreachable", retry: false });
        expect(result?.message).toContain("serve the hub over HTTPS");
    });

    it("names a proxy that buffers the stream when no headers arrive", () => {
        expect(classify(facts({ probe: { kind: "timeout", ms: 10_000 } }))?.message).toBe(
            "The hub at https://example.com/.well-known/mercure sent no response headers within 10 s: if a proxy is in front of it, turn off its response buffering for the hub (for example X-Accel-Buffering: no).",
        );
    });

    it("names CORS not allowing the page origin, whether the browser blocked the answer or its headers show it", () => {
        const page = "https://app.example.com";
        const expected = {
            code: "cors_refused",
            message: `The hub at https://example.com does not allow credentialed requests from ${page}: add ${page} to the hub's cors_origins, so that it answers with Access-Control-Allow-Origin: ${page} and Access-Control-Allow-Credentials: true.`,
            retry: false,
        };
        expect(classify(facts({ pageOrigin: page, probe: { kind: "cors_blocked" } }))).toMatchObject({ ...expected, status: undefined });
        expect(classify(facts({ pageOrigin: page, probe: answered(401, { cors: "refused" }) }))).toMatchObject({ ...expected, status: 401 });
    });

    it("names one host name for both sides, not CORS, when the page and the hub are on localhost and 127.0.0.1 (the cookie never crosses; issue 51)", () => {
        const oneName = (page: string, hub: string) => classify(facts({ pageOrigin: page, hub: new URL(`${hub}/.well-known/mercure`), probe: { kind: "cors_blocked" } }))?.message;
        expect(oneName("http://localhost:8000", "http://127.0.0.1:3000")).toBe(
            "The hub at http://127.0.0.1:3000 does not allow credentialed requests from http://localhost:8000: use one host name on both sides: the page is on localhost and the hub on 127.0.0.1, " +
                "and the cookie Laravel sets for localhost never reaches 127.0.0.1 (listing the origin in the hub's cors_origins does not change that); open the app with the host name of Laravel's APP_URL and MERCURE_PUBLIC_URL and the connector's host.",
        );
        expect(oneName("http://127.0.0.1:8000", "http://localhost:3000")).toContain("use one host name on both sides: the page is on 127.0.0.1 and the hub on localhost");
        expect(oneName("http://app.localhost:8000", "http://[::1]:3000")).toContain("use one host name on both sides");
        // One name, two ports: CORS is the whole story.
        expect(oneName("http://localhost:8000", "http://localhost:3000")).toContain("add http://localhost:8000 to the hub's cors_origins");
        // A cookie that does not reach the hub (cookie_missing) says the same for two loopback names.
        const missing = classify(facts({ pageOrigin: "http://localhost:8000", hub: new URL("http://127.0.0.1:3000/.well-known/mercure"), probe: answered(401, { cors: "allowed", challenge: challenge(null) }) }));
        expect(missing?.message).toContain("use one host name on both sides");
    });

    it("names a pre-1.0 hub that asks for the topic parameter: upgrade, no retry", () => {
        expect(classify(facts({ probe: answered(400, { body: 'Missing "topic" parameter.\n' }) }))).toEqual({
            code: "hub_outdated",
            message: 'The hub at https://example.com/.well-known/mercure asks for the "topic" parameter, as Mercure 0.x hubs do: upgrade the hub to Mercure 1.0 (this connector speaks only the 1.0 protocol).',
            status: 400,
            retry: false,
        });
    });

    it("names a pre-1.0 hub from a plain 401 without challenge and without metadata", () => {
        const result = classify(facts({ probe: answered(401), metadata: { kind: "absent", url: "x", status: 404 } }));
        expect(result).toMatchObject({ code: "hub_outdated", status: 401, retry: false });
        expect(result?.message).toContain("without a WWW-Authenticate challenge and serves no protected-resource metadata");
    });

    it("names too many matchers on a 400 for a request with more than 100", () => {
        expect(classify(facts({ matcherCount: 101, probe: answered(400, { body: "More than 100 matcher parameters.\n" }) }))).toEqual({
            code: "too_many_matchers",
            message:
                "The hub refused the stream with HTTP 400 because it carries 101 topic matchers and the reference hub accepts at most 100: leave channels you no longer need (each presence channel costs 2 matchers).",
            status: 400,
            retry: false,
        });
        expect(classify(facts({ matcherCount: 100, probe: answered(400, { body: "Invalid match value.\nmore" }) }))).toMatchObject({
            code: "hub_refused",
            message: 'The hub at https://example.com/.well-known/mercure refused the request with HTTP 400 ("Invalid match value."): see the hub\'s log.',
        });
    });

    it("names the audience when the hub's resource identifier is not the URL clients use", () => {
        const result = classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), metadata: metadata({ resource: "https://hub.internal/.well-known/mercure" }) }));
        expect(result).toEqual({
            code: "invalid_token",
            message:
                'The hub rejected the access token (HTTP 401 invalid_token) because the hub expects the audience "https://hub.internal/.well-known/mercure" but is reached at "https://example.com/.well-known/mercure": set Laravel\'s MERCURE_PUBLIC_URL to "https://hub.internal/.well-known/mercure", or the hub\'s resource identifier to "https://example.com/.well-known/mercure", the URL clients use.',
            status: 401,
            retry: false,
        });
    });

    it("names the expected audience, issuer and key when nothing more is visible", () => {
        const result = classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), metadata: metadata() }));
        expect(result).toMatchObject({ code: "invalid_token", retry: false });
        expect(result?.message).toBe(
            `The hub rejected the access token (HTTP 401 invalid_token): check that Laravel's MERCURE_PUBLIC_URL is exactly "${HUB}" (the aud the hub expects), that the hub trusts Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL) and that both use the same MERCURE_JWT_SECRET.`,
        );
    });

    it("names an expired token, from its claims or from the cookie's known expiry, as retryable", () => {
        const expired = readTokenClaims(unsignedToken({ aud: HUB, exp: NOW / 1000 - 60 }));
        const result = classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), metadata: metadata(), token: expired }));
        expect(result).toMatchObject({ code: "invalid_token", retry: true });
        expect(result?.message).toContain("because it expired at 2026-09-01T11:59:00.000Z");
        expect(classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), tokenExpiresAt: NOW - 1 }))?.retry).toBe(true);
    });

    it("names a token's wrong aud, not-yet-valid nbf and wrong typ", () => {
        const refused = (claims: Record<string, unknown>, header?: Record<string, unknown>) =>
            classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), metadata: metadata(), token: readTokenClaims(unsignedToken(claims, header)) }))?.message;
        expect(refused({ aud: "https://localhost/.well-known/mercure", exp: NOW / 1000 + 60 })).toContain(
            `because its aud is "https://localhost/.well-known/mercure" while the hub expects "${HUB}": set Laravel's MERCURE_PUBLIC_URL to exactly "${HUB}"`,
        );
        expect(refused({ exp: NOW / 1000 + 60 })).toContain("because its aud is missing");
        expect(refused({ aud: HUB, nbf: NOW / 1000 + 60, exp: NOW / 1000 + 120 })).toContain("because it is not valid before 2026-09-01T12:01:00.000Z");
        expect(refused({ aud: HUB, exp: NOW / 1000 + 60 }, { alg: "HS256", typ: "JWT" })).toContain('because its typ is "JWT", not the "at+jwt" Mercure 1.0 requires');
    });

    it("names the issuer or the key when the token's audience and expiry are right", () => {
        const token = readTokenClaims(unsignedToken({ iss: "https://app.test", aud: HUB, exp: NOW / 1000 + 60 }));
        expect(classify(facts({ probe: answered(401, { challenge: challenge("invalid_token") }), metadata: metadata(), token }))?.message).toBe(
            `The hub rejected the access token (HTTP 401 invalid_token) although its audience and expiry are right, so the issuer or the key differs: make the hub trust the issuer "https://app.test" and verify tokens with Laravel's MERCURE_JWT_SECRET.`,
        );
    });

    it("names a cookie name mismatch when no token reached the hub", () => {
        expect(classify(facts({ probe: answered(401, { challenge: challenge(null) }), metadata: metadata(), appCookie: "laravel_mercure" }))).toEqual({
            code: "cookie_missing",
            message:
                'No access token reached the hub (HTTP 401 without error): use one cookie name on both sides: Laravel sets "laravel_mercure" (MERCURE_COOKIE_NAME) but the hub reads "mercure_access_token" (its cookie_name).',
            status: 401,
            retry: false,
        });
    });

    it("names the __Secure- prefix on plain HTTP, and a hub on another site", () => {
        const http = classify(
            facts({ hub: new URL("http://app.test/.well-known/mercure"), pageOrigin: "http://app.test", probe: answered(401, { challenge: challenge(null) }), metadata: metadata({ resource: "http://app.test/.well-known/mercure", mercure_cookie: "__Secure-mercure_access_token" }) }),
        );
        expect(http?.message).toContain('browsers refuse the "__Secure-mercure_access_token" cookie over plain HTTP');
        const crossSite = classify(facts({ pageOrigin: "https://app.other.com", probe: answered(401, { challenge: challenge(null), cors: "allowed" }), metadata: metadata() }));
        expect(crossSite).toMatchObject({ code: "cookie_missing" });
        expect(crossSite?.message).toContain("the cookie set for app.other.com cannot reach a hub on example.com");
    });

    it("names the hub's cookie and path when no other reason shows", () => {
        expect(classify(facts({ probe: answered(401, { challenge: challenge(null) }), metadata: metadata() }))?.message).toBe(
            `No access token reached the hub (HTTP 401 without error): check that Laravel's MERCURE_COOKIE_NAME is "mercure_access_token", the hub's cookie_name, and that the SameSite=Strict cookie with path /.well-known/mercure is sent to the hub (same site as the page).`,
        );
    });

    it("gives Node.js advice outside a page (no page origin): the fetch that keeps the cookie, not SameSite (issue 30)", () => {
        const message = classify(facts({ pageOrigin: null, probe: answered(401, { challenge: challenge(null) }), metadata: metadata() }))?.message ?? "";
        expect(message).toContain("outside a browser, that the fetch you pass keeps the cookie the auth request set and that the EventSource sends it");
        expect(message).not.toMatch(/SameSite|same site as the page/);
    });

    it("still names what it can when a browser hid the challenge of a cross-origin 401", () => {
        const hidden = (overrides: Partial<DiagnosisFacts>) => classify(facts({ pageOrigin: "https://app.example.com", probe: answered(401, { cors: "allowed", headersHidden: true }), ...overrides }));
        expect(hidden({ metadata: metadata({ resource: "https://hub.internal/.well-known/mercure" }) })?.message).toContain('the hub expects the audience "https://hub.internal/.well-known/mercure"');
        expect(hidden({ metadata: metadata(), appCookie: "other" })).toMatchObject({ code: "cookie_missing" });
        const neither = hidden({ metadata: metadata() });
        expect(neither).toMatchObject({ code: "invalid_token", retry: false });
        expect(neither?.message).toContain('(its reason is hidden cross-origin): check that the cookie "mercure_access_token" reaches it');
        // A hidden challenge and no metadata: a 0.x hub (a 1.0 hub that refuses tokens serves its metadata).
        expect(hidden({ metadata: { kind: "absent", url: "https://example.com/.well-known/oauth-protected-resource/.well-known/mercure", status: 404 } })).toEqual({
            code: "hub_outdated",
            message:
                "The hub at https://example.com/.well-known/mercure answers HTTP 401 and serves no protected-resource metadata at https://example.com/.well-known/oauth-protected-resource/.well-known/mercure, as Mercure 0.x hubs do: upgrade the hub to Mercure 1.0 (this connector speaks only the 1.0 protocol); if it is a 1.0 hub, route that URL to it.",
            status: 401,
            retry: false,
        });
        // Metadata that could not be fetched (a CORS refusal, a 5xx) proves nothing.
        expect(hidden({ metadata: { kind: "unavailable", url: "x", reason: "Failed to fetch" } })?.code).toBe("invalid_token");
    });

    it("names insufficient scope, a URL that is no hub, and other refusals", () => {
        expect(classify(facts({ probe: answered(403, { challenge: challenge("insufficient_scope") }) }))).toMatchObject({ code: "insufficient_scope", status: 403, retry: false });
        expect(classify(facts({ probe: answered(404) }))).toEqual({
            code: "hub_not_found",
            message: `${HUB} answered HTTP 404, so it is not a Mercure hub: set the connector's host and Laravel's MERCURE_PUBLIC_URL to the hub URL (usually ending in "/.well-known/mercure").`,
            status: 404,
            retry: false,
        });
        expect(classify(facts({ probe: answered(502, { body: "Bad gateway" }) }))).toMatchObject({ code: "hub_refused", status: 502, retry: true });
        expect(classify(facts({ probe: answered(401, { challenge: challenge("invalid_request") }) }))).toMatchObject({ code: "hub_refused", status: 401 });
    });

    it("names a whisper refused for its origin, naming the page origin", () => {
        expect(classify(facts({ failure: { kind: "whisper_post", status: 400 }, probe: null, pageOrigin: "https://app.example.com" }))).toEqual({
            code: "publish_origin_refused",
            message:
                "The hub refused a whisper with HTTP 400, as it does when the page origin is not in its publish_origins: add https://app.example.com to the hub's publish_origins (needed for whispers).",
            status: 400,
            retry: false,
        });
        expect(classify(facts({ failure: { kind: "whisper_post", status: 400 }, probe: null, pageOrigin: null }))?.message).toContain("send an Origin the hub lists in its publish_origins");
        expect(classify(facts({ failure: { kind: "whisper_post", status: 403 }, probe: null }))).toMatchObject({ code: "insufficient_scope" });
    });

    it("names different publisher and subscriber keys when a whisper gets 401 but the stream is accepted", () => {
        expect(classify(facts({ failure: { kind: "whisper_post", status: 401 }, probe: answered(200) }))).toEqual({
            code: "invalid_token",
            message:
                "The hub accepts the cookie for subscribing but refused it for a whisper (HTTP 401): give the hub Laravel's MERCURE_JWT_SECRET as its publisher key too (one key for both roles).",
            status: 401,
            retry: false,
        });
    });
});
