import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import { HUB, settleLoads, settleLoadsUntil } from "../../fakes/connector-harness";
import type { FakeAuthServer } from "../../fakes/fake-auth-server";
import type { FakeEventSourceClass } from "../../fakes/fake-event-source";
import type { FakeBrowser } from "../../fakes/fake-tabs";
import { enterTabWorld, leaveTabWorld, ringLink } from "../../fakes/tab-world";

/*
 * The share client (src/share/share-platform.ts with the tab link, the virtual sources and the protocol) is a chunk the
 * connector loads before resolving its platform, only where tabs share (src/share/load.ts), starting at construction.
 * Here the chunk's module and the engine's fail to load as often as `chunk` says (what a browser sees when the download
 * fails: offline, a deploy in between), then load; every load is counted. The loaders keep what they loaded for the
 * page's life (module state): each test has a page of its own (fresh modules).
 */
const chunk: { shareFailures: number; shareLoads: number; engineLoads: number; shareArrives: Promise<void> | null } = { shareFailures: 0, shareLoads: 0, engineLoads: 0, shareArrives: null };

/** Mock the two chunks' modules afresh (a new page: nothing loaded yet), counting their loads. */
function mockChunks(): void {
    vi.doMock("../../../src/share/share-platform", async (importOriginal) => {
        chunk.shareLoads++;
        await chunk.shareArrives;
        if (chunk.shareFailures > 0) {
            chunk.shareFailures--;
            throw new TypeError("Failed to fetch dynamically imported module");
        }
        return importOriginal();
    });
    vi.doMock("../../../src/share/leadership", async (importOriginal) => {
        chunk.engineLoads++;
        return importOriginal();
    });
}

let Connector: typeof MercureConnector;
let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    vi.resetModules();
    mockChunks();
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    ({ browser, ES, auth } = enterTabWorld());
    chunk.shareFailures = 0;
    chunk.shareLoads = 0;
    chunk.engineLoads = 0;
    chunk.shareArrives = null;
});

afterEach(() => {
    leaveTabWorld(connectors);
});

/** A tab's connector (sharing with the fake browser's tabs unless `options` say otherwise). */
function connector(options: MercureConnectorOptions = {}): MercureConnector {
    const made = new Connector({ host: HUB, eventSource: ES, fetch: auth.fetch, shareEnvironment: browser.tab().env, ...options });
    connectors.push(made);
    return made;
}

/** Let the loads, the tabs' messages and lock grants (1 ms timers) run until `done()` holds (see {@link settleLoadsUntil}). */
const settle = (done?: () => boolean): Promise<void> => settleLoadsUntil(done, 1, 10);

describe("the share client chunk", () => {
    it("starts loading at construction with the engine chunk beside it, not after it, before any join", async () => {
        let arrive = (): void => undefined;
        chunk.shareArrives = new Promise((resolve) => (arrive = resolve));
        connector();
        expect(chunk.shareLoads + chunk.engineLoads).toBe(0); // Loads settle in later ticks: nothing is imported synchronously.
        // The share client's download is still under way (no tab link yet) when the engine's has started.
        for (let round = 0; round < 20 && chunk.engineLoads === 0; round++) await settleLoads(1, 1);
        expect([chunk.shareLoads, chunk.engineLoads]).toEqual([1, 1]);
        expect(browser.channels).toHaveLength(0);
        arrive();
        await settle(() => browser.channels.length > 0);
        expect(browser.channels.length).toBeGreaterThan(0);
        expect([chunk.shareLoads, chunk.engineLoads]).toEqual([1, 1]);
        expect(auth.requests).toHaveLength(0);
    });

    it("lets a join made in the same tick as the construction cost one auth request and reach subscribed()", async () => {
        const subscribed: string[] = [];
        connector().privateChannel("orders.1").subscribed(() => subscribed.push("private-orders.1"));
        await settle(() => ES.live().length > 0);
        for (const source of ES.live()) source.emitOpen();
        await settle(() => subscribed.length > 0);
        expect(subscribed).toEqual(["private-orders.1"]);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        expect(chunk.shareLoads).toBe(1);
    });

    it("failing to load gives each joined channel load_failed, goes reconnecting, and the retry with backoff downloads it again", async () => {
        chunk.shareFailures = 1;
        const made = connector();
        const errors: MercureError[] = [];
        const subscribed: string[] = [];
        made.privateChannel("orders.1").error((error: MercureError) => errors.push(error)).subscribed(() => subscribed.push("private-orders.1"));
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length >= 2);
        expect(errors.map((error) => [error.code, error.channel])).toEqual([
            ["load_failed", "private-orders.1"],
            ["load_failed", "news"],
        ]);
        expect(errors[0]!.message).toContain("tab sharing");
        expect(errors[0]!.cause).toBeInstanceOf(Error);
        expect(made.connectionStatus()).toBe("reconnecting");
        expect(auth.requests).toHaveLength(0);
        expect(ES.instances).toHaveLength(0);
        // The first backoff is 1 s ± 20 %. The platform set-up has loaded meanwhile, so the retry claims the tabs' lead: it
        // wins it, authorizes both channels in one request and opens its stream on its own; a tab that leads alone needs no
        // share client (issue 53): it downloads again once another tab pings the link.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle(() => ES.live().length > 0);
        expect(chunk.shareLoads).toBe(1);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "news"]]);
        for (const source of ES.live()) source.emitOpen();
        await settle(() => subscribed.length > 0);
        expect(made.connectionStatus()).toBe("connected");
        expect(chunk.shareLoads).toBe(1);
        ringLink(browser);
        await settle(() => chunk.shareLoads > 1);
        expect(chunk.shareLoads).toBe(2);
        expect(made.connectionStatus()).toBe("connected");
        expect(errors).toHaveLength(2);
    });

    it("is never imported by a connector that does not share: shareAcrossTabs false, a hubToken, or a page without Web Locks", async () => {
        const unshared = connector({ shareAcrossTabs: false });
        unshared.channel("news");
        const noLocks = connector({ shareEnvironment: undefined }); // happy-dom: navigator.locks is null.
        noLocks.channel("news");
        const headerAuth = connector({ hubToken: "a-hub-token" });
        headerAuth.channel("news");
        await settle(() => ES.live().length >= 3);
        for (const source of ES.live()) source.emitOpen();
        await settle();
        expect([unshared, noLocks, headerAuth].map((made) => made.connectionStatus())).toEqual(["connected", "connected", "connected"]);
        expect(auth.requests).toHaveLength(3);
        expect([chunk.shareLoads, chunk.engineLoads]).toEqual([0, 0]);
    });
});
