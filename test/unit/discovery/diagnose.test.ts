import { describe, expect, it } from "vitest";
import { diagnose, diagnosisError } from "../../../src/discovery/diagnose";
import { loadDiagnostics, loadDiscovery } from "../../../src/discovery/load";
import { PROBE_TOPIC } from "../../../src/discovery/probe";
import { MercureError } from "../../../src/errors";
import { fakeFetch, metadataDocument, unsignedToken } from "./fake-hub";

// The unit project's page is https://app.test/dashboard.
const HUB = "https://app.test/.well-known/mercure";
const METADATA = "https://app.test/.well-known/oauth-protected-resource/.well-known/mercure";
const PRESENCE_URL =
    HUB +
    "?match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1&match_urlpattern=%2F.well-known%2Fmercure%2Fsubscriptions%2F%3Amatch_type%2Fx%2F%3Asubscriber&match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fprivate-a&last_event_id=urn%3Auuid%3A1";

describe("diagnose()", () => {
    it("probes once with as many matchers as the failed stream, but never its topics", async () => {
        const hub = fakeFetch(() => ({ status: 200 }));
        expect(await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "stream" }, subscribeUrl: PRESENCE_URL })).toBeNull();
        expect(hub.calls).toHaveLength(1);
        const probed = new URL(hub.calls[0]!.url);
        expect(probed.origin + probed.pathname).toBe(HUB);
        expect([...probed.searchParams.entries()]).toEqual([1, 2, 3].map((i) => ["match", `${PROBE_TOPIC}:${i}`]));
        expect(hub.calls[0]!.init.credentials).toBe("include");
    });

    it("fetches the metadata only for a 401, from the challenge's URL on the hub's origin", async () => {
        const hub = fakeFetch((call) =>
            call.url.startsWith(HUB)
                ? { status: 401, headers: { "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${METADATA}?v=2"` } }
                : { status: 200, body: metadataDocument("https://hub.internal/.well-known/mercure") },
        );
        const result = await diagnose({ hub: HUB + "?match=ignored", fetch: hub.fetch, failure: { kind: "stream" } });
        expect(hub.calls.map((call) => call.url.split("?")[0])).toEqual([HUB, METADATA]);
        expect(hub.calls[1]!.url).toBe(`${METADATA}?v=2`);
        expect(result?.code).toBe("invalid_token");
        expect(result?.message).toContain('the hub expects the audience "https://hub.internal/.well-known/mercure" but is reached at "https://app.test/.well-known/mercure"');
    });

    it("ignores a resource_metadata URL on another origin and uses the well-known one", async () => {
        const hub = fakeFetch((call) => (call.url.startsWith(HUB) ? { status: 401, headers: { "WWW-Authenticate": 'Bearer resource_metadata="https://evil.test/m"' } } : { status: 404 }));
        await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "stream" } });
        expect(hub.calls[1]!.url).toBe(METADATA);
    });

    it("does not fetch the metadata for other answers", async () => {
        const hub = fakeFetch(() => ({ status: 400, body: 'Missing "topic" parameter.' }));
        expect((await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "stream" } }))?.code).toBe("hub_outdated");
        expect(hub.calls).toHaveLength(1);
    });

    it("names a whisper refused with 400 without any request", async () => {
        const hub = fakeFetch(() => ({ status: 500 }));
        const result = await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "whisper_post", status: 400 } });
        expect(result?.code).toBe("publish_origin_refused");
        // The page origin defaults to location.origin.
        expect(result?.message).toContain("add https://app.test to the hub's publish_origins");
        expect(hub.calls).toHaveLength(0);
    });

    it("probes a whisper's 401 to tell different keys from a refused token", async () => {
        const hub = fakeFetch(() => ({ status: 200 }));
        expect((await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "whisper_post", status: 401 } }))?.message).toContain("publisher key");
    });

    it("sends a given token or cookie outside a browser and reads its claims", async () => {
        const token = unsignedToken({ aud: "https://elsewhere.test/.well-known/mercure", exp: 4_000_000_000 });
        const hub = fakeFetch((call) => (call.url.startsWith(HUB) ? { status: 401, headers: { "WWW-Authenticate": 'Bearer error="invalid_token"' } } : { status: 200, body: metadataDocument(HUB) }));
        const result = await diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "stream" }, pageOrigin: null, token });
        expect(hub.calls[0]!.headers["authorization"]).toBe(`Bearer ${token}`);
        expect(result?.message).toContain('because its aud is "https://elsewhere.test/.well-known/mercure"');

        const withCookie = fakeFetch((call) => (call.url.startsWith(HUB) ? { status: 401, headers: { "WWW-Authenticate": "Bearer" } } : { status: 200, body: metadataDocument(HUB) }));
        const missing = await diagnose({ hub: HUB, fetch: withCookie.fetch, failure: { kind: "stream" }, pageOrigin: null, cookie: { name: "app_cookie", value: token } });
        expect(withCookie.calls[0]!.headers["cookie"]).toBe(`app_cookie=${token}`);
        expect(missing?.message).toContain('Laravel sets "app_cookie" (MERCURE_COOKIE_NAME) but the hub reads "mercure_access_token"');
    });

    it("resolves null when aborted", async () => {
        const controller = new AbortController();
        const hub = fakeFetch(() => new Promise(() => undefined));
        const result = diagnose({ hub: HUB, fetch: hub.fetch, failure: { kind: "stream" }, signal: controller.signal });
        controller.abort();
        await expect(result).resolves.toBeNull();
    });
});

describe("diagnosisError()", () => {
    it("is a MercureError with the diagnosis' code, message and status, addressed to the channel", () => {
        const error = diagnosisError({ code: "cors_refused", message: "The hub …", status: 401, retry: false }, "private-orders.1");
        expect(error).toBeInstanceOf(MercureError);
        expect([error.code, error.message, error.status, error.channel]).toEqual(["cors_refused", "The hub …", 401, "private-orders.1"]);
    });
});

describe("the lazy loaders", () => {
    it("load each chunk once and share the promise", async () => {
        expect(loadDiagnostics()).toBe(loadDiagnostics());
        expect(typeof (await loadDiagnostics()).diagnose).toBe("function");
        expect(loadDiscovery()).toBe(loadDiscovery());
        expect(typeof (await loadDiscovery()).locateHub).toBe("function");
    });
});
