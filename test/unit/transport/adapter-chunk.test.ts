import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import type { EventSourceConstructor, EventSourceInitLike } from "../../../src/transport/platform";
import { HUB, settleLoads, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

/*
 * The `EventSource` adapter (src/transport/event-source-adapter.ts) is a chunk the connector loads before resolving its
 * platform, only with the `eventSource`, `fetch` or `hubToken` option or a global `EventSource` that is not the
 * browser's (src/transport/platform.ts `needsAdapter`). Here its module fails to load as often as `chunk.failures`
 * says, then loads; every load is counted. Each test has a page of its own (fresh modules: the loader keeps what it
 * loaded for the page's life).
 */
const chunk = { failures: 0, loads: 0 };

let Connector: typeof MercureConnector;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
/** The init dict of each stream opened. */
let inits: Array<EventSourceInitLike | undefined>;
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    useScopedFakeTimers();
    vi.resetModules();
    vi.doMock("../../../src/transport/event-source-adapter", async (importOriginal) => {
        chunk.loads++;
        if (chunk.failures > 0) {
            chunk.failures--;
            throw new TypeError("Failed to fetch dynamically imported module");
        }
        return importOriginal();
    });
    chunk.failures = 0;
    chunk.loads = 0;
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    auth = new FakeAuthServer();
    const Fake = createFakeEventSource();
    inits = [];
    ES = class extends Fake {
        constructor(url: string, init?: EventSourceInitLike) {
            super(url, init);
            inits.push(init);
        }
    } as FakeEventSourceClass;
    vi.stubGlobal("fetch", auth.fetch);
});

afterEach(() => {
    for (const connector of connectors.splice(0)) connector.disconnect();
    vi.unstubAllGlobals();
    vi.useRealTimers();
});

/**
 * The browser's own `EventSource` as the connector sees it: a bound function prints `[native code]`, as the engine's
 * own constructors do (and constructs the fake).
 */
function nativeLooking(Impl: FakeEventSourceClass): EventSourceConstructor {
    const Native = Impl.bind(null) as unknown as EventSourceConstructor;
    expect(Function.prototype.toString.call(Native)).toContain("[native code]");
    return Native;
}

/** A connector on the hub (`shareAcrossTabs: false`: happy-dom has no Web Locks anyway). */
function connector(options: MercureConnectorOptions = {}): MercureConnector {
    const made = new Connector({ host: HUB, shareAcrossTabs: false, ...options });
    connectors.push(made);
    return made;
}

/** Let the loads and zero-delay timers run until `done()` holds (see {@link settleLoadsUntil}). */
const settle = (done?: () => boolean): Promise<void> => settleLoadsUntil(done);

describe("the EventSource adapter chunk", () => {
    it("is never imported on a page whose own EventSource serves, without the eventSource, fetch or hubToken option", async () => {
        vi.stubGlobal("EventSource", nativeLooking(ES));
        const made = connector();
        made.channel("news");
        await settle(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(inits).toEqual([{ withCredentials: true }]);
        expect(chunk.loads).toBe(0);
    });

    it("is loaded for the eventSource option, and from construction on: the stream then gets the fetch option", async () => {
        const made = connector({ eventSource: ES, fetch: auth.fetch });
        for (let round = 0; round < 20 && chunk.loads === 0; round++) await settleLoads();
        expect(chunk.loads).toBe(1); // Before any join.
        made.channel("news");
        await settle(() => ES.live().length > 0);
        expect(inits).toHaveLength(1);
        expect(typeof inits[0]?.fetch).toBe("function");
        expect(auth.requests).toHaveLength(1);
        expect(chunk.loads).toBe(1);
    });

    it("is loaded for a global EventSource that is not the browser's own (a polyfill put on window)", async () => {
        vi.stubGlobal("EventSource", ES);
        connector().channel("news");
        await settle(() => ES.live().length > 0);
        expect(chunk.loads).toBe(1);
        expect(ES.live()).toHaveLength(1);
    });

    it("failing to load gives each joined channel load_failed, goes reconnecting, and the retry with backoff downloads it again", async () => {
        chunk.failures = 1;
        const made = connector({ eventSource: ES, fetch: auth.fetch });
        const errors: MercureError[] = [];
        made.privateChannel("orders.1").error((error: MercureError) => errors.push(error));
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length >= 2);
        expect(errors.map((error) => [error.code, error.channel])).toEqual([
            ["load_failed", "private-orders.1"],
            ["load_failed", "news"],
        ]);
        expect(errors[0]!.message).toContain("EventSource adapter");
        expect(made.connectionStatus()).toBe("reconnecting");
        expect(auth.requests).toHaveLength(0);
        // The first backoff is 1 s ± 20 %: the retry downloads the chunk again, then authorizes both channels in one request.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle(() => ES.live().length > 0);
        expect(chunk.loads).toBe(2);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "news"]]);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(errors).toHaveLength(2);
    });
});
