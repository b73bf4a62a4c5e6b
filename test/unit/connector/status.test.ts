import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import { loadDiscovery } from "../../../src/discovery/load";
import type { MercureError } from "../../../src/errors";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createHarness, useScopedFakeTimers } from "../../fakes/connector-harness";
import { createFakeEventSource } from "../../fakes/fake-event-source";

// A connector without `host` locates its hub in the discovery chunk (import()); loaded once here, it resolves in microtasks.
beforeAll(async () => {
    await loadDiscovery();
});
beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
});

describe("the connection status", () => {
    it("moves connecting → connected → reconnecting → connected → disconnected, notifying each change once", async () => {
        const h = createHarness();
        const seen: string[] = [];
        h.connector.onConnectionChange((status) => seen.push(status));
        h.connector.channel("a");
        await h.flush();
        expect(h.connector.connectionStatus()).toBe("connecting");
        h.stream().emitOpen();
        h.stream().emitError(false);
        h.stream().emitError(false);
        h.stream().emitOpen();
        h.connector.leaveChannel("a");
        await h.flush();
        expect(seen).toEqual(["connecting", "connected", "reconnecting", "connected", "disconnected"]);
    });

    it("stops notifying after the unsubscribe function is called", async () => {
        const h = createHarness();
        const seen: string[] = [];
        const unsubscribe = h.connector.onConnectionChange((status) => seen.push(status));
        h.connector.channel("a");
        await h.flush();
        unsubscribe();
        h.stream().emitOpen();
        expect(seen).toEqual(["connecting"]);
    });

    it("is disconnected after disconnect()", async () => {
        const h = createHarness();
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        h.connector.disconnect();
        expect(h.connector.connectionStatus()).toBe("disconnected");
        expect(h.EventSource.live()).toHaveLength(0);
    });
});

describe("a missing platform piece", () => {
    function collect(connector: MercureConnector, name = "news"): MercureError[] {
        const errors: MercureError[] = [];
        connector.channel(name).error((error: MercureError) => errors.push(error));
        return errors;
    }

    it("fails at first subscription, not at construction, when there is no EventSource", async () => {
        vi.stubGlobal("EventSource", undefined);
        const auth = new FakeAuthServer();
        const connector = new MercureConnector({ host: "https://a.test/hub", fetch: auth.fetch });
        const errors = collect(connector);
        await vi.advanceTimersByTimeAsync(0);
        expect(errors.map((error) => [error.code, error.channel])).toEqual([["missing_platform", "news"]]);
        expect(errors[0]!.message).toContain("`eventSource`");
        expect(connector.connectionStatus()).toBe("failed");
        expect(auth.requests).toHaveLength(0);
        await vi.advanceTimersByTimeAsync(120_000);
        expect(auth.requests).toHaveLength(0); // retrying is pointless
    });

    it("needs a host outside a browser, and says so", async () => {
        vi.stubGlobal("location", undefined);
        const connector = new MercureConnector({ eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch });
        const errors = collect(connector);
        await vi.advanceTimersByTimeAsync(0);
        expect(errors[0]!.code).toBe("missing_platform");
        expect(errors[0]!.message).toContain("`host` option is required outside a browser");
    });

    it("reports an invalid host as an option error", async () => {
        const connector = new MercureConnector({ host: "http://[bad", eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch });
        const errors = collect(connector);
        await vi.advanceTimersByTimeAsync(0);
        expect(errors[0]!.code).toBe("invalid_option");
        expect(errors[0]!.message).toContain('"http://[bad"');
        expect(connector.connectionStatus()).toBe("failed");
    });

    it("defaults the hub to /.well-known/mercure on the page origin, and resolves relative hosts", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        new MercureConnector({ eventSource: EventSource, fetch: auth.fetch }).channel("a");
        new MercureConnector({ host: "/hub/", eventSource: EventSource, fetch: auth.fetch }).channel("a");
        await vi.advanceTimersByTimeAsync(0);
        // The first locates its hub in the discovery chunk, so it may open second.
        expect(EventSource.instances.map((source) => source.url.split("?")[0]).sort()).toEqual([
            "https://app.test/.well-known/mercure",
            "https://app.test/hub/",
        ]);
    });

    it("uses globalThis.EventSource and globalThis.fetch by default", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        vi.stubGlobal("EventSource", EventSource);
        vi.stubGlobal("fetch", auth.fetch);
        new MercureConnector({}).channel("a");
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.requests).toHaveLength(1);
        expect(EventSource.instances).toHaveLength(1);
    });

    it("clears the query of the host URL when subscribing", async () => {
        const h = createHarness({ host: "https://hub.test/.well-known/mercure?match=evil&x=1#frag" });
        h.connector.channel("a");
        await h.flush();
        expect([...new URL(h.stream().url).searchParams.keys()]).toEqual(["match"]);
        expect(h.stream().url).not.toContain("#");
    });
});

describe("an implementation that throws", () => {
    it("reports an EventSource constructor that throws on every channel and retries, without an unhandled rejection", async () => {
        let attempts = 0;
        const Throwing = class {
            static readonly CLOSED = 2;
            constructor() {
                attempts++;
                throw new Error("polyfill exploded");
            }
        };
        const auth = new FakeAuthServer();
        const connector = new MercureConnector({ host: "https://a.test/hub", eventSource: Throwing as never, fetch: auth.fetch });
        const errors: MercureError[] = [];
        connector.channel("news").error((error: MercureError) => errors.push(error));
        await vi.advanceTimersByTimeAsync(0);
        expect(errors.map((error) => error.code)).toEqual(["stream_error"]);
        expect(errors[0]!.message).toContain("polyfill exploded");
        expect(connector.connectionStatus()).toBe("reconnecting");
        await vi.advanceTimersByTimeAsync(1_300);
        expect(attempts).toBe(2);
        connector.disconnect();
    });
});
