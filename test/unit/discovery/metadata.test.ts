import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchMetadata, MERCURE_DETAIL_TYPE, metadataUrlFor, validateMetadata } from "../../../src/discovery/metadata";
import { fakeFetch, metadataDocument } from "./fake-hub";

const HUB = "https://example.com/.well-known/mercure";

afterEach(() => {
    vi.useRealTimers();
});

describe("metadataUrlFor()", () => {
    it("inserts the well-known prefix between the origin and the hub path", () => {
        expect(metadataUrlFor(HUB).href).toBe("https://example.com/.well-known/oauth-protected-resource/.well-known/mercure");
        expect(metadataUrlFor("http://127.0.0.1:3000/hub/?match=x#f").href).toBe("http://127.0.0.1:3000/.well-known/oauth-protected-resource/hub/");
        expect(metadataUrlFor("https://hub.example.com/").href).toBe("https://hub.example.com/.well-known/oauth-protected-resource");
    });
});

describe("validateMetadata()", () => {
    it("accepts the document a 1.0 hub serves and reads every member", () => {
        const result = validateMetadata({ ...JSON.parse(metadataDocument(HUB)), authorization_servers: ["https://auth.example.com"] }, HUB);
        expect(result.problems).toEqual([]);
        expect(result.resourceMatches).toBe(true);
        expect(result.metadata).toEqual({
            resource: HUB,
            authorizationServers: ["https://auth.example.com"],
            bearerMethodsSupported: ["header"],
            authorizationDetailsTypesSupported: [MERCURE_DETAIL_TYPE],
            mercureCookie: "mercure_access_token",
            mercureSubscriptions: true,
        });
    });

    it("accepts a minimal document with only resource (the other members are optional)", () => {
        const result = validateMetadata({ resource: HUB }, HUB);
        expect(result.problems).toEqual([]);
        expect(result.metadata?.mercureCookie).toBeNull();
    });

    it("reports a resource naming another URL than the hub's, comparing parsed URLs", () => {
        expect(validateMetadata({ resource: "https://other.example.com/.well-known/mercure" }, HUB).resourceMatches).toBe(false);
        expect(validateMetadata({ resource: "HTTPS://EXAMPLE.com:443/.well-known/mercure" }, HUB).resourceMatches).toBe(true);
    });

    it("refuses a document without a usable resource", () => {
        expect(validateMetadata({}, HUB)).toEqual({ metadata: null, problems: ["resource is missing"], resourceMatches: false });
        expect(validateMetadata({ resource: "/.well-known/mercure" }, HUB).problems).toEqual(["resource is not an absolute http(s) URL"]);
        expect(validateMetadata([], HUB).problems).toEqual(["the document is not a JSON object"]);
        expect(validateMetadata("x", HUB).metadata).toBeNull();
    });

    it("lists each malformed member", () => {
        const result = validateMetadata(
            {
                resource: HUB,
                authorization_servers: ["not a url"],
                bearer_methods_supported: "header",
                authorization_details_types_supported: ["urn:other"],
                mercure_cookie: "bad name",
                mercure_subscriptions: "yes",
            },
            HUB,
        );
        expect(result.problems).toEqual([
            "authorization_servers is not a list of absolute http(s) URLs",
            "bearer_methods_supported is not an array of strings",
            `authorization_details_types_supported does not list ${MERCURE_DETAIL_TYPE}`,
            "mercure_cookie is not a cookie name",
            "mercure_subscriptions is not a boolean",
        ]);
        expect(result.metadata).toMatchObject({ resource: HUB, mercureCookie: null, mercureSubscriptions: null, authorizationServers: null });
    });

    it("refuses a hub that says it reads tokens from the query string", () => {
        expect(validateMetadata({ resource: HUB, bearer_methods_supported: ["header", "query"] }, HUB).problems).toEqual([
            'bearer_methods_supported lists "query", but Mercure never accepts a token in the URL',
        ]);
    });
});

describe("fetchMetadata()", () => {
    it("fetches the well-known URL without credentials and validates the document", async () => {
        const hub = fakeFetch(() => ({ status: 200, body: metadataDocument(HUB) }));
        const outcome = await fetchMetadata(HUB, { fetch: hub.fetch });
        expect(hub.calls.map((call) => [call.url, call.init.credentials])).toEqual([[metadataUrlFor(HUB).href, "omit"]]);
        expect(outcome).toMatchObject({ kind: "found", validation: { problems: [], resourceMatches: true } });
    });

    it("uses the URL a challenge named", async () => {
        const hub = fakeFetch(() => ({ status: 200, body: metadataDocument(HUB) }));
        await fetchMetadata(HUB, { fetch: hub.fetch, url: "https://example.com/meta" });
        expect(hub.calls[0]!.url).toBe("https://example.com/meta");
    });

    it("classifies 404 as absent, other statuses and network errors as unavailable, and bad JSON as a problem", async () => {
        const answers = [{ status: 404 }, { status: 503 }, new TypeError("Failed to fetch"), { status: 200, body: "<html>" }];
        const hub = fakeFetch(() => answers.shift()!);
        expect(await fetchMetadata(HUB, { fetch: hub.fetch })).toMatchObject({ kind: "absent", status: 404 });
        expect(await fetchMetadata(HUB, { fetch: hub.fetch })).toMatchObject({ kind: "unavailable", reason: "HTTP 503" });
        expect(await fetchMetadata(HUB, { fetch: hub.fetch })).toMatchObject({ kind: "unavailable", reason: "Failed to fetch" });
        expect(await fetchMetadata(HUB, { fetch: hub.fetch })).toMatchObject({ kind: "found", validation: { metadata: null, problems: ["the document is not JSON"] } });
    });

    it("gives up at its deadline even when the fetch never answers", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const hub = fakeFetch(() => new Promise(() => undefined));
        const outcome = fetchMetadata(HUB, { fetch: hub.fetch, timeout: 500 });
        await vi.advanceTimersByTimeAsync(500);
        await expect(outcome).resolves.toMatchObject({ kind: "unavailable", reason: "no answer in time" });
        expect(hub.calls[0]!.init.signal?.aborted).toBe(true);
    });
});
