import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import type { EventSourceConstructor, EventSourceInitLike } from "../../../src/transport/platform";
import { HUB, settleLoads, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { mockFlakyChunk, type FlakyChunk } from "../../fakes/flaky-chunk";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

/*
 * The platform set-up (src/transport/platform-setup.ts: the checks, the hub token, the `EventSource` adapter) is one
 * chunk the connector loads before resolving its platform, only where its options are not the common page's
 * (src/transport/platform.ts `needsSetup`): outside an http(s) page, without an `EventSource` or a `fetch`, a `host`
 * that does not parse, the `eventSource`, `fetch` or `hubToken` option, a global `EventSource` that is not the
 * browser's own. Here its module fails to load as often as `chunk.failures` says, then loads; every load is counted.
 * Each test has a page of its own (fresh modules: the loader keeps what it loaded for the page's life).
 */
let chunk: FlakyChunk;

let Connector: typeof MercureConnector;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
/** The init dict of each stream opened. */
let inits: Array<EventSourceInitLike | undefined>;
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    useScopedFakeTimers();
    vi.resetModules();
    chunk = mockFlakyChunk("../../../src/transport/platform-setup");
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
    // The common page: the browser's own EventSource and the page's fetch.
    vi.stubGlobal("EventSource", nativeLooking(ES));
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

/** An unsigned JWT-shaped token living ten minutes (the connector never verifies it). */
function jwt(): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256" })}.${part({ exp: Math.floor(Date.now() / 1_000) + 600 })}.c2lnbmF0dXJl`;
}

/** Each case that needs the set-up: how it is made, and what a failed download of the chunk names. */
const RARE_CASES: Array<{ title: string; arrange: () => MercureConnectorOptions; part: string }> = [
    { title: "outside a page (Node.js, server-side rendering)", arrange: () => (vi.stubGlobal("location", undefined), {}), part: "connection set-up" },
    { title: "with the eventSource option", arrange: () => ({ eventSource: ES }), part: "EventSource adapter" },
    { title: "with the fetch option", arrange: () => ({ fetch: auth.fetch }), part: "EventSource adapter" },
    { title: "with a global EventSource that is not the browser's own (a polyfill put on window)", arrange: () => (vi.stubGlobal("EventSource", ES), {}), part: "EventSource adapter" },
    { title: "with the hubToken option", arrange: () => ({ eventSource: ES, hubToken: () => jwt() }), part: "`hubToken`" },
    { title: "with the hubToken option outside a page", arrange: () => (vi.stubGlobal("location", undefined), { eventSource: ES, hubToken: () => jwt() }), part: "`hubToken`" },
];

describe("the platform set-up chunk", () => {
    it("is never imported on the common page: a relative host and the auth endpoint resolve against the page, the browser's EventSource is used as it is", async () => {
        const made = connector({ host: "/.well-known/mercure" });
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(new URL(ES.live()[0]!.url).origin + new URL(ES.live()[0]!.url).pathname).toBe(HUB);
        expect(inits).toEqual([{ withCredentials: true }]);
        expect(auth.requests.map((request) => request.url)).toEqual(["https://app.test/broadcasting/auth"]);
        expect(chunk.loads).toBe(0);
    });

    it("is never imported on the common page after a disconnect and a new join either", async () => {
        const made = connector();
        made.channel("news");
        await settle(() => ES.live().length > 0);
        made.disconnect();
        made.connect();
        made.channel("news");
        await settle(() => ES.live().length > 0);
        expect(auth.requests).toHaveLength(2);
        expect(chunk.loads).toBe(0);
    });

    for (const { title, arrange } of RARE_CASES) {
        it(`is loaded once ${title}, and the channel connects`, async () => {
            const made = connector(arrange());
            made.privateChannel("orders.1");
            made.channel("news");
            await settle(() => ES.live().length > 0);
            ES.live()[0]!.emitOpen();
            await settle();
            expect(made.connectionStatus()).toBe("connected");
            expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "news"]]);
            expect(chunk.loads).toBe(1);
        });
    }

    it("is loaded from construction on for the eventSource option: the stream then gets the fetch option", async () => {
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

    it("outside a page resolves the auth endpoint against the hub", async () => {
        vi.stubGlobal("location", undefined);
        connector().channel("news");
        await settle(() => ES.live().length > 0);
        expect(auth.requests.map((request) => request.url)).toEqual(["https://app.test/broadcasting/auth"]);
    });

    it("is loaded for a host that does not parse, and says so with invalid_option", async () => {
        const made = connector({ host: "http://[::1" });
        const errors: MercureError[] = [];
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length > 0);
        expect(chunk.loads).toBe(1);
        expect([errors[0]!.code, errors[0]!.channel]).toEqual(["invalid_option", "news"]);
        expect(errors[0]!.message).toContain('The `host` option "http://[::1" is not a valid URL');
        expect(auth.requests).toHaveLength(0);
    });

    it("is loaded where the page has no EventSource, and says so with missing_platform", async () => {
        vi.stubGlobal("EventSource", undefined);
        const made = connector();
        const errors: MercureError[] = [];
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length > 0);
        expect(chunk.loads).toBe(1);
        expect([errors[0]!.code, errors[0]!.channel]).toEqual(["missing_platform", "news"]);
        expect(errors[0]!.message).toContain("No EventSource implementation is available");
    });

    it("is asked for beside the discovery chunk, which imports it (a connector without host), not after it arrived", async () => {
        let release = (): void => undefined;
        const arrived = new Promise<void>((resolve) => (release = resolve));
        vi.doMock("../../../src/discovery/discover", async (importOriginal) => {
            await arrived;
            return importOriginal();
        });
        const { loadDiscovery } = await import("../../../src/discovery/load");
        const loading = loadDiscovery();
        // The discovery chunk is still downloading: the set-up chunk is asked for already.
        await vi.waitFor(() => expect(chunk.loads).toBe(1), { timeout: 3_000 });
        release();
        expect(typeof (await loading).connectorHub).toBe("function");
        expect(chunk.loads).toBe(1);
    });

    for (const { title, arrange, part } of RARE_CASES) {
        it(`failing to load ${title} gives each joined channel load_failed naming the ${part}, goes reconnecting, and the retry with backoff downloads it again`, async () => {
            chunk.failures = 1;
            const made = connector(arrange());
            const errors: MercureError[] = [];
            made.privateChannel("orders.1").error((error: MercureError) => errors.push(error));
            made.channel("news").error((error: MercureError) => errors.push(error));
            await settle(() => errors.length >= 2);
            expect(errors.map((error) => [error.code, error.channel])).toEqual([
                ["load_failed", "private-orders.1"],
                ["load_failed", "news"],
            ]);
            expect(errors[0]!.message).toContain(`The ${part} code for channel "private-orders.1" could not be downloaded`);
            expect(errors[0]!.cause).toBeInstanceOf(Error);
            expect(made.connectionStatus()).toBe("reconnecting");
            expect(auth.requests).toHaveLength(0);
            expect(ES.live()).toHaveLength(0);
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
    }
});
