import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import { HUB, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { mockFlakyChunk, type FlakyChunk } from "../../fakes/flaky-chunk";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

/*
 * The probe that names a terminal stream failure (src/connector/stream-diagnosis.ts) is a chunk the connector loads at
 * the first failure that needs one, never before. Here its module fails to load as often as `chunk.failures` says,
 * then loads; every load is counted. Each test has a page of its own (fresh modules: the loader keeps what it loaded).
 */
let chunk: FlakyChunk;
/** The diagnostics chunk (src/discovery/diagnose.ts), which the stream diagnosis loads in turn. */
let diagnostics: FlakyChunk;

let Connector: typeof MercureConnector;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    useScopedFakeTimers();
    vi.resetModules();
    chunk = mockFlakyChunk("../../../src/connector/stream-diagnosis");
    diagnostics = mockFlakyChunk("../../../src/discovery/diagnose");
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    auth = new FakeAuthServer();
    // Every probe of the hub answers 503: a diagnosis that runs names it `hub_refused`.
    auth.probeHandler = () => ({ ok: false, status: 503, headers: new Headers(), text: async () => "maintenance", json: async () => null }) as never;
    ES = createFakeEventSource();
});

afterEach(() => {
    for (const connector of connectors.splice(0)) connector.disconnect();
    vi.useRealTimers();
});

/** A connector on the fakes with one joined private channel, and the codes its `error()` callbacks received. */
async function joined(): Promise<{ connector: MercureConnector; codes: () => string[] }> {
    const connector = new Connector({ host: HUB, shareAcrossTabs: false, eventSource: ES, fetch: auth.fetch });
    connectors.push(connector);
    const errors: MercureError[] = [];
    connector.privateChannel("orders.1").error((error) => errors.push(error));
    await settleLoadsUntil(() => ES.live().length > 0);
    return { connector, codes: () => errors.map((error) => error.code) };
}

describe("the stream diagnosis chunk", () => {
    it("is never imported while the streams serve, even through an interruption the EventSource recovers from", async () => {
        const { connector, codes } = await joined();
        ES.live()[0]!.emitOpen();
        ES.live()[0]!.emitError(false);
        ES.live()[0]!.emitOpen();
        await settleLoadsUntil();
        expect(connector.connectionStatus()).toBe("connected");
        expect(codes()).toEqual(["stream_error"]);
        expect(chunk.loads).toBe(0);
    });

    it("is imported at the first terminal failure and names its cause", async () => {
        const { connector, codes } = await joined();
        ES.live()[0]!.emitError(true);
        await settleLoadsUntil(() => codes().length > 0);
        expect(codes()).toEqual(["hub_refused"]); // the stream_error, held meanwhile, gives way to its cause (issue 51)
        expect(connector.connectionStatus()).toBe("reconnecting");
        expect(chunk.loads).toBe(1);
    });

    it("that does not download leaves the stream_error as it stands, retries with backoff, and downloads again at the next failure streak", async () => {
        chunk.failures = 1;
        const { connector, codes } = await joined();
        ES.live()[0]!.emitError(true);
        await settleLoadsUntil();
        expect(codes()).toEqual(["stream_error"]);
        expect(connector.connectionStatus()).toBe("reconnecting");
        expect(chunk.loads).toBe(1);
        // The retry's stream opens (the streak ends); its reconnect refused is not probed (a stale cookie, issue 27), and
        // the next retry's stream refused too starts the streak that is diagnosed.
        await vi.advanceTimersByTimeAsync(1_500);
        await settleLoadsUntil(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        ES.live()[0]!.emitError(true);
        await vi.advanceTimersByTimeAsync(3_000);
        await settleLoadsUntil(() => ES.live().length > 0);
        expect(chunk.loads).toBe(1);
        ES.live()[0]!.emitError(true);
        await settleLoadsUntil(() => codes().includes("hub_refused"));
        expect(codes()).toEqual(["stream_error", "stream_error", "hub_refused"]);
        expect(chunk.loads).toBe(2);
    });

    it("names nothing for a 401 when the diagnostics it loads in turn do not download (no probe ran, so no unsent cookie is claimed)", async () => {
        diagnostics.failures = 1;
        const { connector, codes } = await joined();
        ES.live()[0]!.emitError(true, 401);
        await settleLoadsUntil();
        expect(codes()).toEqual(["stream_error"]);
        expect([chunk.loads, diagnostics.loads]).toEqual([1, 1]);
        expect(auth.probes).toEqual([]);
        expect(connector.connectionStatus()).toBe("reconnecting");
    });

    it("that does not download still stops a fatal refusal (HTTP 400) with status failed", async () => {
        chunk.failures = 1;
        const { connector, codes } = await joined();
        ES.live()[0]!.emitError(true, 400);
        await settleLoadsUntil(() => connector.connectionStatus() === "failed");
        expect(codes()).toEqual(["stream_error"]);
        expect(connector.connectionStatus()).toBe("failed");
        await vi.advanceTimersByTimeAsync(60_000);
        expect(auth.requests).toHaveLength(1);
    });
});
