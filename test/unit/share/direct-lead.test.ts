import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import { envelope, HUB, settleLoadsUntil, topic } from "../../fakes/connector-harness";
import { grant, type FakeAuthServer } from "../../fakes/fake-auth-server";
import type { FakeEventSource, FakeEventSourceClass } from "../../fakes/fake-event-source";
import type { FakeBrowser, FakeTab } from "../../fakes/fake-tabs";
import { enterTabWorld, leaveTabWorld, ringLink } from "../../fakes/tab-world";
import { STREAM_ERROR_HOLD_MS } from "../../../src/connector/stream-events";

/*
 * Issue 31: a page's first join with tab sharing. A connector whose tabs share claims the link's Web Lock as soon as it
 * is created (src/share/load.ts, claimLead). When no tab holds it, the connector leads: it authorizes and opens its
 * stream on its own, without waiting for the share client chunk; the chunk, once loaded, leads with that lock, and the
 * connector moves to the engine when another client uses it. When another tab holds the lock, nothing leaves before
 * the share client has loaded: only the leading tab authorizes (the browser has one cookie for the hub).
 *
 * The share client's module is held here until `arrive()` (a download under way); each test has a page of its own
 * (fresh modules). The connectors take the fake hub's EventSource and the fake auth endpoint's fetch, which need the
 * platform set-up chunk: it is loaded up front, as a page whose connectors need it has it by its first join.
 */
const chunk: { shareArrives: Promise<void> | null; requested: number } = { shareArrives: null, requested: 0 };

let Connector: typeof MercureConnector;
let linkName: typeof import("../../../src/share/load").linkName;
let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];
let arrive: () => void = () => undefined;

beforeEach(async () => {
    vi.resetModules();
    chunk.shareArrives = new Promise((resolve) => (arrive = resolve));
    chunk.requested = 0;
    vi.doMock("../../../src/share/share-platform", async (importOriginal) => {
        chunk.requested++;
        await chunk.shareArrives;
        return importOriginal();
    });
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    ({ linkName } = await import("../../../src/share/load"));
    await (await import("../../../src/transport/platform")).loadSetup();
    ({ browser, ES, auth } = enterTabWorld());
});

afterEach(async () => {
    // A share client still downloading arrives now, in this test's module registry, not in the next test's.
    arrive();
    await settle();
    leaveTabWorld(connectors);
});

/** A connector of `tab` sharing with the fake browser's tabs. */
function connector(tab: FakeTab, options: MercureConnectorOptions = {}): MercureConnector {
    const made = new Connector({ host: HUB, eventSource: ES, fetch: auth.fetch, shareEnvironment: tab.env, ...options });
    connectors.push(made);
    return made;
}

/** The name of the link (and of its lock) the test's connectors share. */
function link(): string {
    return linkName({ hub: new URL(HUB), authEndpoint: "/broadcasting/auth" }, {});
}

/** The key of the link's lead mark in `localStorage`: the link's name without the headers' fingerprint (issue 50). */
function mark(): string {
    return link().slice(0, link().lastIndexOf(" ")) + " lead";
}

/**
 * The deadline of the two tests that run the most rounds of fake time with mocked imports (about 3 s each on the
 * 2-core machine, more while the Chromium lane runs beside them): the default 5 s would fail them by load alone.
 */
const SLOW_MS = 15_000;

/** Let the loads, the tabs' messages and lock grants (1 ms timers) run until `done()` holds. */
const settle = (done?: () => boolean): Promise<void> => settleLoadsUntil(done, 1, 20);

/** Open every real stream still connecting, and let the ones replaced drain out. */
async function openAll(): Promise<void> {
    for (let round = 0; round < 3; round++) {
        for (const source of ES.live()) if (source.readyState === 0) source.emitOpen();
        await settle();
        await vi.advanceTimersByTimeAsync(2_000);
    }
}

/** Another tab steals the link's lock and keeps it (its engine never answers). */
async function steal(): Promise<void> {
    const thief = browser.tab();
    void thief.env.locks.request(link(), { steal: true }, () => new Promise<void>(() => undefined));
    await settle(() => browser.holder(link()) === thief);
}

/** The one real stream open now. */
function only(): FakeEventSource {
    expect(ES.live(), ES.live().map((source) => source.url).join("\n")).toHaveLength(1);
    return ES.live()[0]!;
}

/** The tab links' buses and inboxes open now (a lone leader's own listeners are not: see `listenForTabs`). */
function inboxes(): number {
    return browser.channels.filter((entry) => entry.name.includes(" inbox ") && !entry.name.endsWith(" inbox engine lone")).length;
}

/** A connector of `tab` that leads alone: it joined `private-orders.1` (with `listener` on `.shipped`), its own stream open. */
async function leadAlone(tab: FakeTab = browser.tab(), listener?: (payload: unknown) => void): Promise<MercureConnector> {
    const made = connector(tab);
    const channel = made.privateChannel("orders.1");
    if (listener !== undefined) channel.listen(".shipped", listener);
    await settle(() => ES.live().length > 0);
    only().emitOpen();
    await settle();
    return made;
}

/** Another tab rings the link naming `names` (`ringTabs`: the ping of a tab that found the lead taken). */
function ringWith(names: readonly unknown[]): void {
    const bus = new (browser.tab().env.BroadcastChannel)(link() + " inbox engine lone");
    bus.postMessage({ t: "ping", c: "", k: "", n: names });
    bus.close();
}

/** Another tab pings the link, and the share client that this asks for arrives: settles once the tab link is up. */
async function shareArrives(): Promise<void> {
    ringLink(browser);
    arrive();
    await settle(() => inboxes() > 0);
}

describe("a page's first join with tab sharing (issue 31)", () => {
    it("a tab that wins the lead authorizes and opens its stream before the share client has loaded, which then leads with its lock, adding no request or stream", async () => {
        const tab = browser.tab();
        const got: unknown[] = [];
        const subscribed: string[] = [];
        connector(tab)
            .privateChannel("orders.1")
            .listen(".shipped", (payload: unknown) => got.push(payload))
            .subscribed(() => subscribed.push("private-orders.1"));
        await settle(() => ES.live().length > 0);
        // The share client has not loaded: no link, only the lone leader's ears on the bus and on its inbox; the lock is this tab's.
        expect(browser.channels.map((entry) => entry.name)).toEqual([link(), link() + " inbox engine lone"]);
        expect(browser.holder(link())).toBe(tab);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        const own = only();
        expect(own.matches()).toEqual([topic("private-orders.1")]);
        own.emitOpen();
        await settle(() => subscribed.length > 0);
        expect(subscribed).toEqual(["private-orders.1"]);
        expect(chunk.requested).toBe(0);

        await shareArrives();
        await openAll();
        // The link leads with the claimed lock; the connector keeps its request's grant and its stream.
        expect(browser.holder(link())).toBe(tab);
        expect(auth.requests).toHaveLength(1);
        expect(only()).toBe(own);
        own.emitMessage(envelope(["private-orders.1"], "shipped", { n: 1 }), "id-1");
        await settle();
        expect(got).toEqual([{ n: 1 }]);
    });

    /**
     * A first tab whose connector leads on its own stream, open, with `private-orders.1` joined and its shipped events
     * given to `listener`, once the share client has arrived; resolves with that stream.
     */
    async function leadingAlone(listener: (payload: unknown) => void): Promise<ReturnType<typeof only>> {
        connector(browser.tab()).privateChannel("orders.1").listen(".shipped", listener);
        await settle(() => ES.live().length > 0);
        const own = only();
        own.emitOpen();
        await shareArrives();
        await openAll();
        return own;
    }

    it("another tab's join moves the leading connector to the engine: one request for both tabs' channels, one stream at the end, nothing lost", async () => {
        const got: Array<[string, unknown]> = [];
        const own = await leadingAlone((payload) => got.push(["first", payload]));
        expect(auth.requests).toHaveLength(1);

        // The share client is loaded now: the second tab follows the first's engine.
        connector(browser.tab())
            .privateChannel("chat.1")
            .listen(".said", (payload: unknown) => got.push(["second", payload]));
        await settle(() => auth.requests.length > 1);
        // One request for the union, the leading tab's channel first.
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"]]);
        // Until the engine's stream serves it, the first tab's own stream still does.
        own.emitMessage(envelope(["private-orders.1"], "shipped", { n: 1 }), "id-1");
        await settle();
        await openAll();
        expect(auth.requests).toHaveLength(2);
        const shared = only();
        expect(shared).not.toBe(own);
        expect(own.closed).toBe(true);
        expect(shared.matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        shared.emitMessage(envelope(["private-orders.1"], "shipped", { n: 2 }), "id-2");
        shared.emitMessage(envelope(["private-chat.1"], "said", { n: 3 }), "id-3");
        await settle(() => got.length >= 3);
        expect(got).toEqual([
            ["first", { n: 1 }],
            ["first", { n: 2 }],
            ["second", { n: 3 }],
        ]);
    });

    it("a move to the engine while the connector's own stream reconnects by itself (hub down) closes that stream: one stream at the end, the engine's", async () => {
        const got: unknown[] = [];
        const own = await leadingAlone((payload) => got.push(payload));
        // The hub went down: the browser reconnects the stream by itself.
        own.emitError();
        await settle();
        expect(own.closed).toBe(false);

        connector(browser.tab()).privateChannel("chat.1");
        await settle(() => auth.requests.length > 1);
        expect(own.closed).toBe(true);
        // The hub is back: only the engine's stream opens, for both tabs' channels.
        await openAll();
        const shared = only();
        expect(shared).not.toBe(own);
        expect(shared.matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        shared.emitMessage(envelope(["private-orders.1"], "shipped", { n: 1 }), "id-1");
        await settle(() => got.length > 0);
        expect(got).toEqual([{ n: 1 }]);
    });

    it("a tab that leads alone never asks for the share client (issue 53): not when its stream opens, nor while it does not, nor a minute later", async () => {
        const made = connector(browser.tab());
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        await vi.advanceTimersByTimeAsync(5_000);
        await settle();
        expect(chunk.requested).toBe(0);
        only().emitOpen();
        await settle();
        await vi.advanceTimersByTimeAsync(60_000);
        await settle();
        expect(chunk.requested).toBe(0);
        expect(auth.requests).toHaveLength(1);
        expect(made.connectionStatus()).toBe("connected");
    });

    it("a tab that leads alone asks for the share client at its first change, and waits for it instead of sending a request: its engine answers joins and leaves from the grant (issues 13 and 53)", async () => {
        const made = connector(browser.tab());
        const subscribed: string[] = [];
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await settle();
        expect(chunk.requested).toBe(0);
        made.channel("news").subscribed(() => subscribed.push("news"));
        await settle(() => chunk.requested > 0);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(auth.requests).toHaveLength(1);
        arrive();
        await settle(() => inboxes() > 0);
        await openAll();
        expect(subscribed).toEqual(["news"]);
        made.channel("sports");
        made.leaveChannel("news");
        await settle();
        await openAll();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        expect(only().matches()).toEqual([topic("private-orders.1"), topic("sports")]);
        expect(made.connectionStatus()).toBe("connected");
    });

    it("a tab that leads alone whose share client does not download at its first change sends that change's request itself", async () => {
        vi.doMock("../../../src/share/share-platform", async () => {
            chunk.requested++;
            throw new TypeError("Failed to fetch dynamically imported module");
        });
        const made = connector(browser.tab());
        const errors: string[] = [];
        made.privateChannel("orders.1").error((error: { code: string }) => errors.push(error.code));
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await settle();
        made.privateChannel("chat.1");
        await settle(() => auth.requests.length > 1);
        await openAll();
        expect(chunk.requested).toBe(1);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"]]);
        expect(only().matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        expect(errors).toEqual([]);
        // Not asked for again at the next change: one download per lead (another tab's ping takes the lead after its timeout).
        made.leaveChannel("chat.1");
        await settle(() => auth.requests.length > 2);
        expect(chunk.requested).toBe(1);
    }, SLOW_MS);

    it("asks for the share client at another tab's first ping, and tells it to wait while it downloads: that tab steals nothing", async () => {
        const leader = browser.tab();
        connector(leader).privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await settle();
        // A tab that waits for the engine hears the lone leader's answer on the bus.
        const heard: unknown[] = [];
        const other = new (browser.tab().env.BroadcastChannel)(link());
        other.onmessage = (event) => heard.push(event.data);
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle(() => heard.length > 0);
        expect(chunk.requested).toBe(1);
        expect(heard).toEqual([{ t: "wait", e: "loading" }]);
        // Each ping while the download is under way gets its wait; none asks for it again.
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle(() => heard.length > 1);
        expect(chunk.requested).toBe(1);
        // Arrived: the tab link leads with the lock, and the engine answers the next ping itself.
        arrive();
        await settle(() => inboxes() > 0);
        await settle();
        heard.length = 0;
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle(() => heard.length > 0);
        expect(heard).toEqual([expect.objectContaining({ t: "pong" })]);
        expect(browser.holder(link())).toBe(leader);
        other.close();
    });

    it("another tab's ring that names its channels: the leading tab authorizes them beside its own while its share client downloads, and its engine answers that tab from that grant (issue 53)", async () => {
        const got: Array<[string, unknown]> = [];
        await leadAlone(browser.tab(), (payload) => got.push(["first", payload]));
        // What a tab that finds the lead taken sends (claimLead → ringTabs; in this test's one page the claim would be
        // the page's own second claim, which rings no one).
        ringWith(["private-chat.1"]);
        // The union leaves before the share client has arrived: the request the engine would send once loaded.
        await settle(() => auth.requests.length > 1);
        expect(chunk.requested).toBe(1);
        expect(inboxes()).toBe(0);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"]]);
        arrive();
        await settle(() => inboxes() > 0);
        connector(browser.tab())
            .privateChannel("chat.1")
            .listen(".said", (payload: unknown) => got.push(["second", payload]));
        await openAll();
        // The engine answered the second tab from that grant: no third request; one stream carries both tabs.
        expect(auth.requests).toHaveLength(2);
        const shared = only();
        expect(shared.matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        shared.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        shared.emitMessage(envelope(["private-orders.1"], "shipped", { n: 2 }), "id-2");
        await settle(() => got.length >= 2);
        // Each tab gets its own (the leading tab's listener runs in the engine's tab, the other's a message later).
        expect([...got].sort()).toEqual([
            ["first", { n: 2 }],
            ["second", { n: 1 }],
        ]);
    });

    it("a union authorized for another tab's ring that fails leaves the engine on the leading tab's own grant: the other tab's request goes to Laravel, and both tabs connect", async () => {
        const got: string[] = [];
        await leadAlone(browser.tab(), () => got.push("first"));
        auth.handler = (names) => (auth.requests.length === 2 ? { status: 500, body: {} } : grant(names));
        ringWith(["private-chat.1"]);
        await settle(() => auth.requests.length > 1);
        arrive();
        await settle(() => inboxes() > 0);
        connector(browser.tab()).privateChannel("chat.1").listen(".said", () => got.push("second"));
        await settle(() => auth.requests.length > 2);
        await openAll();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"], ["private-orders.1", "private-chat.1"]]);
        const shared = only();
        expect(shared.matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        shared.emitMessage(envelope(["private-chat.1"], "said", {}), "id-1");
        shared.emitMessage(envelope(["private-orders.1"], "shipped", {}), "id-2");
        await settle(() => got.length >= 2);
        expect([...got].sort()).toEqual(["first", "second"]);
    });

    it("a union authorized for another tab's ring while the leading tab renews its cookie on its own is not the engine's grant: the renewal was sent after it, its answer may be the cookie's", async () => {
        // The leading tab's first grant expires soon (its renewal comes within seconds); the union's request is held.
        let releaseUnion = (): void => undefined;
        const union = new Promise<void>((resolve) => (releaseUnion = resolve));
        auth.handler = (names) => (auth.requests.length === 1 ? grant(names, { expires_in: 20 }) : names.length > 1 && auth.requests.length === 2 ? union.then(() => grant(names)) : grant(names));
        await leadAlone();
        ringWith(["private-chat.1"]);
        await settle(() => auth.requests.length > 1);
        // The renewal leaves while the union's request is in flight, with the tab's own channel.
        for (let second = 0; second < 30 && auth.requests.length < 3; second++) await vi.advanceTimersByTimeAsync(1_000);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"], ["private-orders.1"]]);
        await settle();
        releaseUnion();
        arrive();
        await settle(() => inboxes() > 0);
        // The engine starts from the renewal's grant: the other tab's channel goes to Laravel again, with the union.
        connector(browser.tab()).privateChannel("chat.1");
        await settle(() => auth.requests.length > 3);
        expect(auth.requests[3]?.channelNames).toEqual(["private-orders.1", "private-chat.1"]);
    });

    it("a ring that names only public channels, or channels the leading tab holds, sends no request: the engine answers from the leading tab's grant", async () => {
        await leadAlone();
        ringWith(["news", "private-orders.1", 42]);
        await settle(() => chunk.requested > 0);
        await settle();
        expect(auth.requests).toHaveLength(1);
    });

    it("a tab that leads alone and disconnects, then connects again, leaves no freeze or resume listener behind", async () => {
        const tab = browser.tab();
        const made = await leadAlone(tab);
        const listening = tab.lifecycleListeners();
        expect(listening).toBe(2);
        for (let round = 0; round < 3; round++) {
            made.disconnect();
            await settle();
            expect(tab.lifecycleListeners()).toBe(0);
            made.connect();
            made.privateChannel("orders.1");
            await settle(() => ES.live().length > 0);
            only().emitOpen();
            await settle();
            expect(tab.lifecycleListeners()).toBe(listening);
        }
        expect(chunk.requested).toBe(0);
    });

    it("a frozen tab that leads alone does not answer another tab's ping: that tab steals the lock after its timeout, as from a frozen leader", async () => {
        const leader = browser.tab();
        await leadAlone(leader);
        leader.freeze();
        const heard: unknown[] = [];
        const other = new (browser.tab().env.BroadcastChannel)(link());
        other.onmessage = (event) => heard.push(event.data);
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle();
        await vi.advanceTimersByTimeAsync(1_000);
        expect(heard).toEqual([]);
        expect(chunk.requested).toBe(0);
        other.close();
    });

    it("a download of the share client that failed is not waited for: the next ping gets no answer", async () => {
        vi.doMock("../../../src/share/share-platform", async () => {
            chunk.requested++;
            throw new TypeError("Failed to fetch dynamically imported module");
        });
        connector(browser.tab()).privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        const heard: unknown[] = [];
        const other = new (browser.tab().env.BroadcastChannel)(link());
        other.onmessage = (event) => heard.push(event.data);
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle(() => heard.length > 0);
        await settle();
        expect(chunk.requested).toBe(1);
        heard.length = 0;
        other.postMessage({ t: "ping", c: "", k: "" });
        await settle();
        expect(heard).toEqual([]);
        expect(chunk.requested).toBe(1);
        other.close();
    });

    it("a tab that leads alone asks for no share client once it has disconnected before its deferral ran out", async () => {
        const made = connector(browser.tab());
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        made.disconnect();
        await vi.advanceTimersByTimeAsync(5_000);
        await settle();
        expect(chunk.requested).toBe(0);
        expect(ES.live()).toHaveLength(0);
    });

    it("a tab that finds the lead taken sends nothing before the share client has loaded", async () => {
        // Another tab leads (its lock held).
        const leader = browser.tab();
        void leader.env.locks.request(link(), {}, () => new Promise<void>(() => undefined));
        await settle(() => browser.holder(link()) === leader);
        connector(browser.tab()).privateChannel("orders.1");
        await settle();
        await vi.advanceTimersByTimeAsync(1_000);
        await settle();
        expect(auth.requests).toHaveLength(0);
        expect(ES.instances).toHaveLength(0);
    });

    it("a lead stolen before the share client has loaded stops the tab's own requests: the next waits for the share client", async () => {
        const tab = browser.tab();
        const made = connector(tab);
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await settle();
        expect(auth.requests).toHaveLength(1);
        // Another tab steals the lock (it heard nothing from this one's engine, which is still downloading).
        await steal();
        made.privateChannel("chat.1");
        await settle();
        await vi.advanceTimersByTimeAsync(1_000);
        await settle();
        expect(auth.requests).toHaveLength(1);
    });

    it("a lead stolen while the tab's own auth request is in flight opens no stream with its answer: the next request waits for the share client", async () => {
        const tab = browser.tab();
        auth.hold();
        connector(tab).privateChannel("orders.1");
        await settle(() => auth.requests.length > 0);
        // Another tab steals the lock while the request is unanswered (it heard nothing from this one's engine).
        await steal();
        auth.release();
        await settle();
        await vi.advanceTimersByTimeAsync(1_000);
        await settle();
        // The answer came for a platform the tab no longer has: no stream of its own opens with it, and the refresh
        // that runs again waits for the share client (the thief leads).
        expect(ES.instances).toHaveLength(0);
        expect(auth.requests).toHaveLength(1);
        expect(chunk.requested).toBe(1);
    });

    it("a tab that led alone and disconnected before its share client was asked for leads alone again on connect(): no phantom second claim of the page", async () => {
        const tab = browser.tab();
        const made = connector(tab);
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        made.disconnect();
        await settle(() => browser.holder(link()) === null);
        made.connect();
        await settle(() => ES.live().length > 0);
        expect(browser.holder(link())).toBe(tab);
        expect(auth.requests).toHaveLength(2);
        expect(chunk.requested).toBe(0);
    });

    it("the share client takes the connector over once its own request is answered: the engine's first request comes after it (the cookie is the last answer's)", async () => {
        const first = browser.tab();
        auth.hold();
        connector(first).privateChannel("orders.1");
        await settle(() => auth.requests.length > 0);
        arrive();
        // Another tab joins while the first tab's own request is unanswered: its ping makes the first tab load its share
        // client, whose engine does not send its request yet.
        connector(browser.tab()).privateChannel("chat.1");
        await settle(() => chunk.requested > 0);
        await settle();
        await vi.advanceTimersByTimeAsync(500);
        await settle();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        auth.release();
        await settle(() => auth.requests.length > 1);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"]]);
    });

    it("after the take-over, the engine answers a public join and a leave from the connector's own grant, without a request (issue 13)", async () => {
        const made = connector(browser.tab());
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await shareArrives();
        await openAll();
        made.channel("news");
        await settle();
        await openAll();
        made.leaveChannel("news");
        await settle();
        await openAll();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        expect(only().matches()).toEqual([topic("private-orders.1")]);
        expect(made.connectionStatus()).toBe("connected");
    });

    it("a tab that leads alone keeps its own stream when it joins after the share client has loaded: the engine opens none until another tab joins", async () => {
        const { StreamMux } = await import("../../../src/share/stream-mux");
        const opened = vi.spyOn(StreamMux.prototype, "open");
        const first = browser.tab();
        const made = connector(first);
        // Echo created at boot: the claim and the share client (another tab pinged) settle before the first join.
        await shareArrives();
        await vi.advanceTimersByTimeAsync(100);
        await settle();
        const got: unknown[] = [];
        made.privateChannel("orders.1").listen(".shipped", (payload: unknown) => got.push(payload));
        await settle(() => ES.live().length > 0);
        await openAll();
        // Authorized through the engine (its grant serves the other tabs), read on the tab's own stream.
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        expect(opened).not.toHaveBeenCalled();
        only().emitMessage(envelope(["private-orders.1"], "shipped", { n: 1 }), "id-1");
        await settle(() => got.length > 0);
        expect(got).toEqual([{ n: 1 }]);

        connector(browser.tab()).privateChannel("chat.1");
        await settle(() => auth.requests.length > 1);
        await openAll();
        expect(opened).toHaveBeenCalled();
        expect(only().matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        only().emitMessage(envelope(["private-orders.1"], "shipped", { n: 2 }), "id-2");
        await settle(() => got.length > 1);
        expect(got).toEqual([{ n: 1 }, { n: 2 }]);
    }, SLOW_MS);

    it("a join made once the share client has loaded, while the claim waits for its lock, goes through the share client, which gets the lock at once", async () => {
        const tab = browser.tab();
        const made = connector(tab);
        // The share client arrives before the lock does (the lock is granted in a task: the fake timers have not run).
        arrive();
        await import("../../../src/share/share-platform");
        for (let turn = 0; turn < 50; turn++) await Promise.resolve();
        made.privateChannel("orders.1");
        await vi.advanceTimersByTimeAsync(200);
        await settle(() => ES.live().length > 0);
        // The claim that came too late released its lock to the share client's link: it leads, well before a watchdog would steal.
        expect(browser.holder(link())).toBe(tab);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        await openAll();
        expect(made.connectionStatus()).toBe("connected");
    });

    it("a tab whose own stream was refused for good (HTTP 400) opens none again when the share client arrives during the diagnosis", async () => {
        // The probe that names the cause is still downloading: the connector has not stopped yet.
        vi.doMock("../../../src/connector/stream-diagnosis", () => new Promise(() => undefined));
        const made = connector(browser.tab());
        const errors: string[] = [];
        made.privateChannel("orders.1").error((error: { code: string }) => errors.push(error.code));
        await settle(() => ES.live().length > 0);
        only().emitError(true, 400);
        // The stream_error waits for the probe's cause, at most STREAM_ERROR_HOLD_MS (issue 51).
        await vi.advanceTimersByTimeAsync(STREAM_ERROR_HOLD_MS);
        await settle(() => errors.length > 0);
        await shareArrives();
        await vi.advanceTimersByTimeAsync(500);
        await settle();
        expect(auth.requests).toHaveLength(1);
        expect(ES.instances).toHaveLength(1);
        expect(errors).toEqual(["stream_error"]);
    });

    it("two connectors of the page joining in the creation's tick both wait for the share client: one request", async () => {
        const tab = browser.tab();
        connector(tab).privateChannel("orders.1");
        connector(tab).privateChannel("chat.1");
        await settle();
        expect(auth.requests).toHaveLength(0);
        arrive();
        await settle(() => auth.requests.length > 0);
        await openAll();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "private-chat.1"]]);
        expect(only().matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
    });
});

/*
 * Issue 31: the hoped lead. A tab that leads marks it in the origin's `localStorage` (`markLead` in src/share/load.ts)
 * while it holds the lock. A page that finds no mark hopes to lead: its first join authorizes at once, without
 * waiting for the lock's answer, and opens its stream once the answer came. When another tab leads after all (one
 * that marks nothing, or marked it in between), the page opens no stream of its own, and its request goes through the
 * leading tab's engine to Laravel (not from the engine's last grant), since its own auth answer replaced the cookie.
 */
describe("the hoped lead: no tab marked the lead (issue 31)", () => {
    /** Let the microtasks run, not the timers: the fake lock's answer is a task, so it has not come. */
    async function microtasks(): Promise<void> {
        for (let turn = 0; turn < 100; turn++) await Promise.resolve();
    }

    /** A connector of `tab` that joins `names` and leads the tabs: its own stream open, then its share client's engine running. */
    async function lead(tab: FakeTab, ...names: string[]): Promise<MercureConnector> {
        const made = connector(tab);
        for (const name of names) made.privateChannel(name);
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await shareArrives();
        await openAll();
        return made;
    }

    it("sends the first join's auth request before the lock has answered, opens the stream once it has, and marks the lead until the tab leaves", async () => {
        const tab = browser.tab(true);
        const subscribed: string[] = [];
        connector(tab)
            .privateChannel("orders.1")
            .subscribed(() => subscribed.push("private-orders.1"));
        await microtasks();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"]]);
        expect(ES.instances).toHaveLength(0);
        expect([...browser.storage.keys()]).toEqual([mark()]);

        await settle(() => ES.live().length > 0);
        expect(browser.holder(link())).toBe(tab);
        only().emitOpen();
        await settle(() => subscribed.length > 0);
        expect(auth.requests).toHaveLength(1);

        await shareArrives();
        await openAll();
        expect(browser.storage.size).toBe(1);
        tab.close();
        await settle();
        expect(browser.storage.size).toBe(0);
    });

    it("marks the lead of the next tab that leads, and unmarks it when that tab leaves too", async () => {
        const first = browser.tab(true);
        await lead(first, "orders.1");
        const second = browser.tab(true);
        connector(second).privateChannel("chat.1");
        await settle(() => auth.requests.length > 1);
        await openAll();
        expect(browser.holder(link())).toBe(first);

        first.close();
        await settle(() => browser.holder(link()) === second);
        await openAll();
        expect([...browser.storage.keys()]).toEqual([mark()]);
        second.close();
        await settle();
        expect(browser.storage.size).toBe(0);
    });

    it("waits for the lock's answer where another tab marked the lead: only the leading tab authorizes", async () => {
        const leader = browser.tab(true);
        connector(leader).privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        only().emitOpen();
        await settle();
        expect(auth.requests).toHaveLength(1);
        expect(browser.storage.size).toBe(1);

        connector(browser.tab(true)).privateChannel("chat.1");
        await microtasks();
        await settle();
        await vi.advanceTimersByTimeAsync(500);
        await settle();
        // The second tab asked for nothing itself (it would ask for its channel alone): its ring named its channel, and
        // the leading tab authorized it beside its own while its share client downloads (issue 53).
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-orders.1", "private-chat.1"]]);
    });

    it("where another tab leads after all, opens no stream of its own, and its join goes through that tab's engine to Laravel: the union's grants are the cookie's again", async () => {
        // A leading tab that marks nothing (an older build), with its engine running and both channels granted.
        const made = await lead(browser.tab(), "orders.1", "chat.1");
        made.channel("news"); // The engine serves it from its grant: the share client leads.
        await settle();
        await openAll();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "private-chat.1"]]);

        // How many real streams there were when each auth request was sent.
        const streamsAt: number[] = auth.requests.map(() => Number.NaN);
        const record = auth.requests.push.bind(auth.requests);
        auth.requests.push = (...requests) => (streamsAt.push(ES.instances.length), record(...requests));

        // A new page (its own modules: no share client yet) that finds no mark: it hopes to lead.
        vi.resetModules();
        ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
        await (await import("../../../src/transport/platform")).loadSetup();
        const got: unknown[] = [];
        connector(browser.tab(true))
            .privateChannel("chat.1")
            .listen(".said", (payload: unknown) => got.push(payload));
        await microtasks();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "private-chat.1"], ["private-chat.1"]]);
        // The lock is another tab's: the page follows it, and its request reaches Laravel, not the engine's last grant
        // (which covers chat.1): the cookie holds chat.1's grant alone now. Laravel grants the union again.
        await settle(() => auth.requests.length > 2);
        expect(auth.requests.map((request) => request.channelNames)[2]).toEqual(["private-orders.1", "private-chat.1", "news"]);
        // No stream opened between the page's own request and Laravel's new grant of the union (the leading tab's stream
        // moves to the engine when the page joins it: not on the engine's last grant, which the cookie no longer holds).
        expect(streamsAt[2]).toBe(streamsAt[1]);
        await openAll();
        expect(auth.requests).toHaveLength(3);
        const shared = only();
        expect(shared.matches()).toEqual([topic("private-orders.1"), topic("private-chat.1"), topic("news")]);
        // Every stream was the leading tab's engine's: none matched the hoping page's channel alone.
        expect(ES.instances.filter((source) => !source.matches().includes(topic("private-orders.1")))).toEqual([]);
        shared.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-9");
        await settle(() => got.length > 0);
        expect(got).toEqual([{ n: 1 }]);
    });
});
