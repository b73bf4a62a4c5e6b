import { afterEach, describe, expect, it, vi } from "vitest";
import { countMatchers, probe, PROBE_TOPIC, probeUrl } from "../../../src/discovery/probe";
import { fakeFetch } from "./fake-hub";

const HUB = "https://hub.example.com/.well-known/mercure";
const PAGE = "https://app.example.com";

afterEach(() => {
    vi.useRealTimers();
});

describe("probeUrl() and countMatchers()", () => {
    it("subscribes to the probe topic only, as many times as the failed request had matchers", () => {
        expect(probeUrl(HUB + "?match=x#f")).toBe(`${HUB}?match=${encodeURIComponent(PROBE_TOPIC)}`);
        const url = new URL(probeUrl(HUB, 3));
        expect(url.searchParams.getAll("match")).toEqual([`${PROBE_TOPIC}:1`, `${PROBE_TOPIC}:2`, `${PROBE_TOPIC}:3`]);
    });

    it("counts every match… parameter of a subscribe URL", () => {
        expect(countMatchers(`${HUB}?match=a&match=b&match_urlpattern=%2Fx&last_event_id=1`)).toBe(3);
        expect(countMatchers("not a url")).toBe(0);
    });
});

describe("probe()", () => {
    it("sends credentials and reads the status, the challenge and the error body of a same-origin answer", async () => {
        const hub = fakeFetch(() => ({
            status: 401,
            headers: { "WWW-Authenticate": 'Bearer error="invalid_token"', "Content-Type": "text/plain; charset=utf-8" },
            body: "The access token is invalid.\n",
        }));
        const outcome = await probe({ url: probeUrl(HUB), fetch: hub.fetch, pageOrigin: "https://hub.example.com" });
        expect(outcome).toEqual({
            kind: "answered",
            status: 401,
            challenge: { error: "invalid_token", errorDescription: null, resourceMetadata: null, scope: null },
            body: "The access token is invalid.\n",
            contentType: "text/plain; charset=utf-8",
            cors: "same_origin",
            headersHidden: false,
            lastEventId: null,
        });
        expect(hub.calls[0]!.init.credentials).toBe("include");
        expect(hub.calls[0]!.headers["origin"]).toBeUndefined();
    });

    it("reads only the headers of an accepted stream and cancels its body", async () => {
        const hub = fakeFetch(() => ({ status: 200, headers: { "Content-Type": "text/event-stream", "Mercure-Last-Event-ID": "earliest" } }));
        const outcome = await probe({ url: probeUrl(HUB), fetch: hub.fetch, pageOrigin: null });
        expect(outcome).toMatchObject({ kind: "answered", status: 200, cors: "not_applicable", contentType: "text/event-stream", lastEventId: "earliest" });
        expect(hub.responses[0]!.cancelled).toBe(true);
        expect(hub.responses[0]!.read).toBe(false);
    });

    it("trusts a cross-origin answer a browser handed over (type cors), whose challenge it hides", async () => {
        const hub = fakeFetch(() => ({ status: 401, type: "cors" }));
        expect(await probe({ url: probeUrl(HUB), fetch: hub.fetch, pageOrigin: PAGE })).toMatchObject({ cors: "allowed", headersHidden: true, challenge: null });
    });

    it("checks the CORS headers itself where fetch does not enforce CORS, sending the page origin", async () => {
        const allowed = fakeFetch(() => ({ status: 401, headers: { "Access-Control-Allow-Origin": PAGE, "Access-Control-Allow-Credentials": "true" } }));
        expect(await probe({ url: probeUrl(HUB), fetch: allowed.fetch, pageOrigin: PAGE })).toMatchObject({ cors: "allowed", headersHidden: false });
        expect(allowed.calls[0]!.headers["origin"]).toBe(PAGE);
        const refusals: Record<string, string>[] = [{}, { "Access-Control-Allow-Origin": PAGE }, { "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": "true" }];
        for (const headers of refusals) {
            const refused = fakeFetch(() => ({ status: 401, headers }));
            expect(await probe({ url: probeUrl(HUB), fetch: refused.fetch, pageOrigin: PAGE })).toMatchObject({ cors: "refused" });
        }
    });

    it("tells a CORS refusal (a no-cors request gets an opaque answer) from a hub that is down", async () => {
        const blocked = fakeFetch((call) => (call.init.mode === "no-cors" ? { status: 0, type: "opaque" } : new TypeError("Failed to fetch")));
        expect(await probe({ url: probeUrl(HUB), fetch: blocked.fetch, pageOrigin: PAGE })).toEqual({ kind: "cors_blocked" });
        expect(blocked.calls.map((call) => call.init.mode)).toEqual([undefined, "no-cors"]);

        const down = fakeFetch(() => new TypeError("Failed to fetch"));
        expect(await probe({ url: probeUrl(HUB), fetch: down.fetch, pageOrigin: PAGE })).toEqual({ kind: "unreachable", reason: "Failed to fetch" });
    });

    it("does not retry without CORS when page and hub share an origin, or when there is no page", async () => {
        const down = fakeFetch(() => new TypeError("fetch failed"));
        expect(await probe({ url: probeUrl(HUB), fetch: down.fetch, pageOrigin: null })).toEqual({ kind: "unreachable", reason: "fetch failed" });
        expect(await probe({ url: probeUrl(HUB), fetch: down.fetch, pageOrigin: "https://hub.example.com" })).toMatchObject({ kind: "unreachable" });
        expect(down.calls).toHaveLength(2);
    });

    it("counts a readable no-cors answer after a failure as unreachable (no CORS there to blame)", async () => {
        const flaky = fakeFetch((call) => (call.init.mode === "no-cors" ? { status: 200, type: "basic" } : new TypeError("fetch failed")));
        expect(await probe({ url: probeUrl(HUB), fetch: flaky.fetch, pageOrigin: PAGE })).toMatchObject({ kind: "unreachable" });
    });

    it("ends at its deadline when no headers arrive, aborting the request", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const hub = fakeFetch(() => new Promise(() => undefined));
        const outcome = probe({ url: probeUrl(HUB), fetch: hub.fetch, pageOrigin: null, timeout: 2_000 });
        await vi.advanceTimersByTimeAsync(2_000);
        await expect(outcome).resolves.toEqual({ kind: "timeout", ms: 2_000 });
        expect(hub.calls[0]!.init.signal?.aborted).toBe(true);
    });

    it("reports an abort as aborted", async () => {
        const controller = new AbortController();
        const hub = fakeFetch(() => new Promise(() => undefined));
        const outcome = probe({ url: probeUrl(HUB), fetch: hub.fetch, pageOrigin: PAGE, signal: controller.signal });
        controller.abort();
        await expect(outcome).resolves.toEqual({ kind: "aborted" });
    });

    it("sends the method, body and headers it is given", async () => {
        const hub = fakeFetch(() => ({ status: 400, body: "x" }));
        await probe({ url: HUB, fetch: hub.fetch, pageOrigin: null, method: "POST", body: "", headers: { Cookie: "a=b" } });
        expect(hub.calls[0]!.init.method).toBe("POST");
        expect(hub.calls[0]!.init.body).toBe("");
        expect(hub.calls[0]!.headers["cookie"]).toBe("a=b");
    });
});
