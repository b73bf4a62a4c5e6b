import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import { PING_TIMEOUT_MS } from "../../../src/share/tab-link";
import { FakeAuthServer, grant } from "../../fakes/fake-auth-server";
import { HUB, envelope, topic } from "../../fakes/connector-harness";
import { type FakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";
import { fakeFetch, type FakeAnswer } from "../discovery/fake-hub";
import { loadDiagnostics } from "../../../src/discovery/load";

/** Tabs of one fake browser, each with its connector, on one fake hub and auth endpoint. */
let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
});

afterEach(() => {
    leaveTabWorld(connectors);
});

/** Open a tab with its connector. */
function open(options: MercureConnectorOptions = {}): { tab: FakeTab; connector: MercureConnector; errors: Array<{ channel: string; error: MercureError }> } {
    return { ...openTab({ browser, ES, auth }, connectors, options), errors: [] };
}

/** Let tasks and microtasks run (messages between tabs, lock grants, the engine chunk's import). */
const settle = settleTabs;

/**
 * Two tabs with their connectors, A (the leader: it opened first) on `private-orders.1` and B on `private-chat.1`,
 * each recording its channel's events (`.placed`, `.said`), the real stream open.
 */
async function twoTabs(): Promise<{ a: ReturnType<typeof open>; b: ReturnType<typeof open>; gotA: unknown[]; gotB: unknown[] }> {
    const a = open();
    const b = open();
    const gotA: unknown[] = [];
    const gotB: unknown[] = [];
    a.connector.privateChannel("orders.1").listen(".placed", (payload: unknown) => gotA.push(payload));
    b.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => gotB.push(payload));
    await settle();
    await openAll();
    return { a, b, gotA, gotB };
}

/** The messages the leading tab posted to other tabs' inboxes, out of their batches, in order, with the inbox's tab. */
function inboxed(): Array<{ tab: string; message: { t: string; id: string; data: string; c?: string; result?: unknown } }> {
    return browser.log.flatMap(({ name, message }) => {
        const posted = message as { t: string; m?: Array<{ t: string; id: string; data: string }> };
        return posted.t === "batch" ? posted.m!.map((one) => ({ tab: name.slice(name.lastIndexOf(" ") + 1), message: one })) : [];
    });
}

/** The events the leading tab posted to other tabs, out of their batches, in order. */
function postedEvents(): Array<{ id: string; data: string }> {
    return inboxed().flatMap(({ message }) => (message.t === "event" ? [message] : []));
}

/** The real (engine-held) main streams still open: the ones with a `match` of a channel topic. */
function realMain(): FakeEventSource[] {
    return ES.live().filter((source) => source.matches().some((match) => match.includes("/channel/")));
}

/** The one open real main stream. */
function main(): FakeEventSource {
    const live = realMain();
    expect(live, live.map((source) => source.url).join("\n")).toHaveLength(1);
    return live[0]!;
}

/**
 * Open every real stream that is still connecting, and let replaced streams drain out (DRAIN_MS, twice: a
 * leave narrows the real stream once the leaving tab's own virtual stream has drained).
 */
async function openAll(): Promise<void> {
    await openAllStreams(ES);
}

describe("sharing one hub connection between tabs", () => {
    it("coalesces the connectors of one tab joining in one tick into one auth request and one real stream", async () => {
        const tab = browser.tab();
        const make = () => {
            const connector = new MercureConnector({ host: HUB, eventSource: ES, fetch: auth.fetch, shareEnvironment: tab.env });
            connectors.push(connector);
            return connector;
        };
        const [a, b, c] = [make(), make(), make()];
        a.privateChannel("orders.1");
        b.privateChannel("chat.1");
        c.presenceChannel("room.1");
        await settle();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "private-chat.1", "presence-room.1"]]);
        await openAll();
        expect(main().matches()).toEqual([topic("private-orders.1"), topic("private-chat.1"), topic("presence-room.1")]);
        for (const connector of [a, b, c]) expect(connector.connectionStatus()).toBe("connected");
    });

    it("queues for the lead when created with host, before any join, opening no connection; a later join then needs no election", async () => {
        const a = open();
        await settle();
        expect(browser.holder()).toBe(a.tab);
        expect(auth.requests).toHaveLength(0);
        expect(ES.instances).toHaveLength(0);
        const b = open();
        await settle();
        expect(browser.holder()).toBe(a.tab);
        b.connector.privateChannel("chat.1");
        await settle();
        expect(auth.lastNames()).toEqual(["private-chat.1"]);
        await openAll();
        expect(b.connector.connectionStatus()).toBe("connected");
    });

    it("elects one leader; another tab's channels join the union: one request in flight, one trailing, then one stream", async () => {
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settle();
        expect(browser.holder()).toBe(a.tab);
        expect(auth.requests.length).toBeLessThanOrEqual(2);
        expect(auth.lastNames()).toEqual(["private-orders.1", "private-chat.1"]);
        await openAll();
        expect(main().matches()).toEqual([topic("private-orders.1"), topic("private-chat.1")]);
        expect(a.connector.connectionStatus()).toBe("connected");
        expect(b.connector.connectionStatus()).toBe("connected");
    });

    it("delivers each event once to every tab that joined its channel, across a make-before-break drain", async () => {
        const { b, gotA, gotB } = await twoTabs();
        const first = main();
        first.emitMessage(envelope(["private-orders.1"], "placed", { n: 1 }), "id-1");
        // A join reopens the real stream; the old one drains: an id on both is forwarded once.
        b.connector.channel("news");
        await settle();
        const second = realMain().find((source) => source !== first)!;
        expect(second.param("last_event_id")).toBe("id-1");
        second.emitOpen();
        await settle();
        first.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        second.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        await settle();
        expect(first.closed).toBe(true); // The drain caught up by id.
        second.emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        await settle();
        expect(gotA).toEqual([{ n: 1 }, { n: 3 }]);
        expect(gotB).toEqual([{ n: 2 }]);
        // The engine forwarded id-2 once, although both real streams delivered it.
        expect(postedEvents().filter((event) => event.id === "id-2")).toHaveLength(1);
    });

    it("hands the leading tab's own connector an event that arrives in the same task as its stream's open, after the open", async () => {
        const a = open();
        const got: unknown[] = [];
        a.connector.privateChannel("orders.1").listen(".placed", (payload: unknown) => got.push(payload));
        await settle();
        const [real] = realMain();
        // The open's state message waits for a microtask; the event, handed over at once, must not overtake it (a
        // virtual stream that is not open yet drops what it gets).
        real!.emitOpen();
        real!.emitMessage(envelope(["private-orders.1"], "placed", { n: 1 }), "id-1");
        await settle();
        expect(got).toEqual([{ n: 1 }]);
    });

    it("posts events on the bus only while another tab's client is registered: a lone tab clones nothing per event", async () => {
        const events = () => postedEvents().length;
        const a = open();
        const gotA: unknown[] = [];
        a.connector.privateChannel("orders.1").listen(".placed", (payload: unknown) => gotA.push(payload));
        await settle();
        await openAll();
        main().emitMessage(envelope(["private-orders.1"], "placed", { n: 1 }), "id-1");
        await settle();
        expect(gotA).toEqual([{ n: 1 }]);
        expect(events()).toBe(0);
        const b = open();
        const gotB: unknown[] = [];
        b.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => gotB.push(payload));
        await settle();
        await openAll();
        main().emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        await settle();
        expect(gotB).toEqual([{ n: 2 }]);
        expect(events()).toBe(1);
        b.connector.disconnect(); // Its bye: the lone tab stops posting events again.
        await settle();
        await openAll();
        main().emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        await settle();
        expect(gotA).toEqual([{ n: 1 }, { n: 3 }]);
        expect(events()).toBe(1);
    });

    it("posts the events of one task in one bus message, before a state change of the same task", async () => {
        const { b, gotB } = await twoTabs();
        expect(b.connector.connectionStatus()).toBe("connected");
        const batches = () => browser.posted.filter((message) => (message as { t: string }).t === "batch") as Array<{ m: Array<{ t: string }> }>;
        const before = batches().length;
        // One network chunk: three events, then the stream drops. The drop's state message must not overtake the
        // events waiting for their hop (the other tab's virtual stream would no longer be open to take them).
        const real = main();
        for (let n = 1; n <= 3; n++) real.emitMessage(envelope(["private-chat.1"], "said", { n }), `id-${n}`);
        real.emitError();
        await settle();
        // One inbox message: the three events, then the stream's state.
        expect(batches().slice(before).map((batch) => batch.m.map((message) => message.t))).toEqual([["event", "event", "event", "state"]]);
        expect(gotB).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        expect(b.connector.connectionStatus()).toBe("reconnecting");
    });

    it("a navigation that leaves one channel and joins another reopens the real stream once, then carries only the new set", async () => {
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settle();
        await openAll();
        const created = ES.instances.length;
        a.connector.leaveChannel("private-orders.1");
        a.connector.privateChannel("orders.2");
        await settle();
        await openAll();
        expect(ES.instances.length - created).toBe(1);
        expect([...main().matches()].sort()).toEqual([topic("private-chat.1"), topic("private-orders.2")]);
    });

    it("answers each tab for its own names: keys and denials only to the tab that joined them", async () => {
        auth.handler = (names) => {
            const answer = grant(names, {}, ["private-secret.1"]);
            const body = answer.body as { channel_names: Array<Record<string, unknown>> };
            for (const entry of body.channel_names) if (entry["name"] === "private-encrypted-vault.1") entry["jwk"] = { kty: "oct", k: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" };
            return answer;
        };
        const a = open();
        const b = open();
        const errorsA: string[] = [];
        const errorsB: string[] = [];
        a.connector.privateChannel("orders.1").error((error: MercureError) => errorsA.push(error.code));
        b.connector.privateChannel("secret.1").error((error: MercureError) => errorsB.push(error.code));
        await settle();
        await openAll();
        expect(errorsA).toEqual([]);
        expect(errorsB).toEqual(["auth_denied"]);
        expect(Object.keys(b.connector.channels)).toEqual([]);
        expect(Object.keys(a.connector.channels)).toEqual(["private-orders.1"]);
        expect(main().matches()).toEqual([topic("private-orders.1")]);
        // Each tab's answer names only its own channels: the key only to A, the denial only to B.
        const asked = new Map<string, string[]>();
        for (const message of browser.posted as Array<{ t: string; c: string; names?: string[]; result?: { kind: string; response?: { channels: Map<string, unknown> } } }>) {
            if (message.t === "auth") asked.set(message.c, message.names ?? []);
            if (message.t === "granted" && message.result?.kind === "ok") expect([...message.result.response!.channels.keys()].every((name) => asked.get(message.c)?.includes(name))).toBe(true);
        }
    });

    it("counts the 100-channel limit on the union and names each channel past it in its own tab", async () => {
        const a = open();
        const b = open();
        const limited: string[] = [];
        for (let i = 0; i < 60; i++) a.connector.privateChannel(`a.${i}`);
        for (let i = 0; i < 60; i++) b.connector.privateChannel(`b.${i}`).error((error: MercureError) => limited.push(`${error.code} ${error.channel}`));
        await settle();
        expect(auth.lastNames()).toHaveLength(100);
        expect(limited).toEqual(Array.from({ length: 20 }, (_, i) => `channel_limit private-b.${40 + i}`));
    });

    it("issue 13: a leave and a fresh public join cost no auth request; a guarded join one; near expiry a real one", async () => {
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        a.connector.privateChannel("orders.2");
        await settle();
        await openAll();
        const before = auth.requests.length;
        a.connector.leaveChannel("private-orders.2");
        await settle();
        expect(auth.requests).toHaveLength(before);
        await openAll();
        expect([...main().matches()].sort()).toEqual([topic("private-chat.1"), topic("private-orders.1")]);
        b.connector.channel("news");
        await settle();
        expect(auth.requests).toHaveLength(before);
        await openAll();
        b.connector.privateChannel("chat.2");
        await settle();
        expect(auth.requests).toHaveLength(before + 1);
        expect(auth.lastNames()).toEqual(["private-orders.1", "private-chat.1", "news", "private-chat.2"]);
        await openAll();
        // expires_in 300: the renewal moment is 0.9 × (0.8 × 300 s − 5 s) = 211.5 s after the request.
        vi.setSystemTime(Date.now() + 212_000);
        a.connector.channel("weather");
        await settle();
        expect(auth.requests).toHaveLength(before + 2);
    });

    it("an answer from the last grant tells the tab the cookie's remaining expires_in, not the full one (laravel-mercure §2.5)", async () => {
        const a = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        vi.setSystemTime(Date.now() + 30_000);
        const b = open();
        b.connector.channel("news");
        await settle();
        expect(auth.requests).toHaveLength(1); // A public join on a fresh cookie: from the grant.
        // A's answers stayed in its tab; B's went to B's inbox alone (B may re-send its request once it hears the engine).
        const granted = inboxed().filter(({ message }) => message.t === "granted");
        expect(new Set(granted.map(({ tab }) => tab)).size).toBe(1);
        expect(browser.posted.filter((message) => (message as { t: string }).t === "granted")).toEqual([]);
        const answers = granted.map(({ message }) => message) as unknown as Array<{
            c: string;
            result: { kind: string; response?: { channels: Map<string, unknown>; expiresIn: number | null; fromGrant?: true } };
        }>;
        expect(answers.length).toBeGreaterThan(0);
        for (const { result } of answers) {
            expect(result.kind).toBe("ok");
            expect([...result.response!.channels.entries()]).toEqual([["news", { name: "news", denied: false, jwk: null }]]);
            expect(result.response!.fromGrant).toBe(true);
            // expires_in 300 at the request; 30 s later plus the 4 s the fake clock spent opening streams.
            expect(result.response!.expiresIn).toBeGreaterThan(260);
            expect(result.response!.expiresIn).toBeLessThanOrEqual(270);
        }
    });

    it("a request late in the grant's life goes to the server: an answer from the grant never moves the tab's renewal past the hub's close of its stream", async () => {
        const a = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        const granted = Date.now();
        expect(auth.requests).toHaveLength(1);
        // 150 s on, a public join (or a renewal of a new engine's client): from the grant, the tab's next renewal would
        // come 0.9 × (0.8 × 150 s − 5 s) = 103.5 s later, at 253.5 s, after the hub may end the stream (235 s).
        await settle(granted + 150_000 - Date.now());
        expect(auth.requests).toHaveLength(1);
        a.connector.channel("news");
        const asked = Date.now();
        await settle();
        expect(auth.requests).toHaveLength(2);
        await openAll();
        const reopened = main();
        // The new cookie's stream: the renewal comes 211.5 s after the request, before the hub may end it (235 s).
        await settle(asked + 213_000 - Date.now());
        expect(auth.requests).toHaveLength(3);
        await openAll();
        expect(main()).not.toBe(reopened);
    });

    it("a client's renewal timer renews the cookie at the server and reopens the real stream with it, even for a client that waited for another's request", async () => {
        auth.hold();
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        await settle();
        b.connector.privateChannel("chat.1"); // Waits behind A's request in flight: its own request time is earlier than the trailing one's.
        await settle(500);
        auth.release();
        await settle();
        await openAll();
        const before = auth.requests.length;
        const stream = main();
        // expires_in 300: each connector renews 211.5 s after its request.
        await settle(212_000);
        expect(auth.requests.length).toBeGreaterThan(before);
        expect(auth.requests.length).toBeLessThanOrEqual(before + 2);
        await openAll();
        expect(main()).not.toBe(stream);
    });

    it("a tab opened after the engine is up follows it through the ping's pong; its guarded join costs one request and one real reopen", async () => {
        const a = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        const requests = auth.requests.length;
        const created = ES.instances.length;
        const b = open();
        const got: unknown[] = [];
        b.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => got.push(payload));
        await settle();
        await openAll();
        expect(auth.requests.length - requests).toBe(1);
        expect(ES.instances.length - created).toBe(1);
        expect(b.connector.connectionStatus()).toBe("connected");
        main().emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-5");
        await settle();
        expect(got).toEqual([{ n: 1 }]);
    });

    it("issue 13: after the hub refuses a stream opened on the shared grant, the next request goes to the server at once, not the cache", async () => {
        const a = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        a.connector.channel("news");
        await settle();
        expect(auth.requests).toHaveLength(1);
        await openAll();
        main().emitError(true);
        await settle(); // 90 ms: no backoff (the first waits at least 1 s).
        expect(auth.requests).toHaveLength(2);
        await openAll();
        // That answer came from Laravel: a second refusal backs off as usual.
        main().emitError(true);
        await settle();
        expect(auth.requests).toHaveLength(2);
        await settle(30_000);
        expect(auth.requests).toHaveLength(3);
    });

    it("issue 13 and issue 27: a tab's first stream on the shared grant, refused by a 0.x hub, re-authorizes only after the probe, which stops it", async () => {
        // The probe's chunks, loaded once here, resolve in microtasks (their first import may outlast the settle rounds).
        await Promise.all([loadDiagnostics(), import("../../../src/connector/stream-diagnosis")]);
        let answer: (value: FakeAnswer) => void = () => undefined;
        const hub = fakeFetch(() => new Promise<FakeAnswer>((resolve) => (answer = resolve)));
        auth.probeHandler = (url, init) => hub.fetch(url, init);
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        b.connector.channel("news").error((error: MercureError) => b.errors.push({ channel: "news", error }));
        await settle();
        expect(auth.requests).toHaveLength(1); // B's public join rode on the tabs' grant.
        // A's lone stream moved to the tabs' engine when B came: that stream opens; the union's (B's first) is refused
        // before it opened: A's virtual stream serves on, B's is closed and diagnosed.
        for (const source of realMain()) if (source.readyState === 0 && !source.matches().includes(topic("news"))) source.emitOpen();
        await settle();
        const union = realMain().filter((source) => source.readyState === 0 && source.matches().includes(topic("news")));
        expect(union).toHaveLength(1);
        union[0]!.emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        // The probe has not answered: B does not re-authorize yet.
        expect(auth.requests).toHaveLength(1);
        answer({ status: 400, body: 'Missing "topic" parameter.' });
        await settle(30_000);
        expect(b.errors.map(({ error }) => error.code)).toEqual(["hub_outdated"]);
        expect(b.connector.connectionStatus()).toBe("failed");
        expect(auth.requests).toHaveLength(1);
    });

    it("renews a real whisper stream make-before-break at its cookie's renewal point: each whisper reaches the tab once", async () => {
        const a = open();
        const b = open();
        a.connector.privateChannel("orders.1");
        const heard: unknown[] = [];
        b.connector.privateChannel("chat.1").listenForWhisper("typing", (payload: unknown) => heard.push(payload));
        await settle();
        await openAll();
        const whisperStreams = () => ES.live().filter((source) => source.matches().some((match) => match.includes("/whisper/")));
        const first = whisperStreams();
        expect(first).toHaveLength(1);
        const typing = (n: number) => ({ channels: ["private-chat.1"], event: "client-typing", payload: { n }, socket: "peer.socket" });
        first[0]!.emitMessage(typing(1), "w-1");
        await settle();
        const requests = auth.requests.length;
        // 300 s cookies: the renewals (at 211.5 s) ask Laravel; the new cookie carries the replacement, from the cursor.
        await settle(212_000);
        expect(auth.requests.length).toBeGreaterThan(requests);
        const [old, next] = whisperStreams();
        expect(old).toBe(first[0]);
        expect(next!.param("last_event_id")).toBe("w-1");
        old!.emitMessage(typing(2), "w-2");
        next!.emitOpen();
        await settle();
        expect(old!.closed).toBe(true);
        next!.emitMessage(typing(2), "w-2"); // the hub's replay from w-1
        next!.emitMessage(typing(3), "w-3");
        await settle();
        expect(heard).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        await openAll(); // The main stream's own renewal.
        expect(whisperStreams()).toEqual([next]);
        expect(b.connector.connectionStatus()).toBe("connected");
    });

    it("shares a whisper stream between tabs by reference count", async () => {
        const a = open();
        const b = open();
        const chatA = a.connector.privateChannel("chat.1");
        const chatB = b.connector.privateChannel("chat.1");
        const heard: string[] = [];
        chatA.listenForWhisper("typing", () => heard.push("a"));
        chatB.listenForWhisper("typing", () => heard.push("b"));
        await settle();
        await openAll();
        await settle();
        const whisperStreams = () => ES.live().filter((source) => source.matches().some((match) => match.includes("/whisper/")));
        expect(whisperStreams()).toHaveLength(1);
        a.connector.leaveChannel("private-chat.1");
        await settle();
        expect(whisperStreams()).toHaveLength(1);
        b.connector.leaveChannel("private-chat.1");
        await settle();
        expect(whisperStreams()).toHaveLength(0);
    });

    it("disconnect() in one tab leaves the others connected; the union narrows", async () => {
        const { a, b, gotB } = await twoTabs();
        a.connector.disconnect();
        await settle();
        await openAll();
        expect(main().matches()).toEqual([topic("private-chat.1")]);
        main().emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-9");
        await settle();
        expect(gotB).toEqual([{ n: 1 }]);
        expect(b.connector.connectionStatus()).toBe("connected");
    });

    it("hands over when the leading tab closes: the next tab leads and resumes from the cursor", async () => {
        const { a, b, gotB } = await twoTabs();
        const leaderStream = main();
        leaderStream.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        await settle();
        a.tab.close();
        await settle();
        expect(leaderStream.closed).toBe(true); // pagehide: the leader closed its real streams and released the lock.
        expect(browser.holder()).toBe(b.tab);
        const next = main();
        expect(next.param("last_event_id")).toBe("id-1");
        expect(next.matches()).toEqual([topic("private-chat.1")]);
        next.emitOpen();
        await settle();
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        await settle();
        expect(gotB).toEqual([{ n: 1 }, { n: 2 }]);
    });

    it("after a handover, an event the next engine's stream replays again reaches a tab once", async () => {
        const { a, gotB } = await twoTabs();
        const leaderStream = main();
        leaderStream.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        leaderStream.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        await settle();
        a.tab.close();
        await settle();
        // The hub replays from an older point than the cursor (an id it holds twice, a polyfill's first cursor).
        const next = main();
        next.emitOpen();
        await settle();
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 3 }), "id-3");
        await settle();
        expect(gotB).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    });

    it("replays to a page back from the back/forward cache what was forwarded while it was away, from its own cursor", async () => {
        const { b, gotB } = await twoTabs();
        const real = main();
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        await settle();
        b.tab.cache();
        await settle();
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        real.emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 4 }), "id-4");
        await settle();
        expect(gotB).toEqual([{ n: 1 }]);
        b.tab.restore();
        await settle();
        // Its channels stayed in the union while it was cached: the same real stream serves it, from its cursor.
        expect(realMain()).toEqual([real]);
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 5 }), "id-5");
        await settle();
        expect(gotB).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }, { n: 5 }]);
    });

    it("a page back from the back/forward cache after more events than the engine keeps gets what it missed from a catch-up stream of its own", async () => {
        const { b, gotA, gotB } = await twoTabs();
        const real = main();
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        await settle();
        b.tab.cache();
        await settle();
        const missed = [2, 600, 1_101];
        for (let n = 2; n <= 1_101; n++) {
            const chat = missed.includes(n);
            real.emitMessage(chat ? envelope(["private-chat.1"], "said", { n }) : envelope(["private-orders.1"], "placed", { n }), `id-${n}`);
        }
        await settle();
        expect(gotA).toHaveLength(1_100 - missed.length);
        b.tab.restore();
        await settle();
        // B's cursor, id-1, is older than the last 1 024 events the engine keeps: a stream of B's channel from there.
        const catchUp = ES.live().find((source) => source !== real)!;
        expect([catchUp.matches(), catchUp.param("last_event_id")]).toEqual([[topic("private-chat.1")], "id-1"]);
        catchUp.emitOpen();
        await settle();
        // The hub replays B's channel from id-1, then publishes id-1102 to both streams.
        for (const n of missed) catchUp.emitMessage(envelope(["private-chat.1"], "said", { n }), `id-${n}`);
        await settle();
        real.emitMessage(envelope(["private-chat.1"], "said", { n: 1_102 }), "id-1102");
        catchUp.emitMessage(envelope(["private-chat.1"], "said", { n: 1_102 }), "id-1102");
        await settle();
        expect(gotB).toEqual([1, ...missed, 1_102].map((n) => ({ n })));
        expect(catchUp.closed).toBe(true);
        expect(realMain()).toEqual([real]);
    });

    it("after a handover, a tab heard late gets its own channels replayed by the hub from its cursor, not from the engine's", async () => {
        const { a, gotB } = await twoTabs();
        const c = open();
        const gotC: unknown[] = [];
        c.connector.privateChannel("chat.2").listen(".said", (payload: unknown) => gotC.push(payload));
        await settle();
        await openAll();
        main().emitMessage(envelope(["private-chat.2"], "said", { n: 1 }), "id-1");
        await settle();
        expect(gotC).toEqual([{ n: 1 }]);
        c.tab.lag = 1_000; // A hidden tab: its bus handler runs a second late.
        a.tab.close();
        await settle();
        // B leads; its engine knows B's channel only, and resumes from B's cursor.
        const first = main();
        expect(first.matches()).toEqual([topic("private-chat.1")]);
        expect(first.param("last_event_id")).toBe("id-1");
        first.emitOpen();
        await settle();
        // The hub published id-2 on C's channel (not carried), then id-3 on B's.
        first.emitMessage(envelope(["private-chat.1"], "said", { n: 3 }), "id-3");
        await settle();
        expect(gotB).toEqual([{ n: 3 }]);
        // C hears the new engine and asks for its channel from its cursor, id-1: the hub must replay from there, to C
        // alone. The shared stream takes C's channel in from the engine's cursor (resumed from id-1, it would replay
        // B's channel's older events to B too), and C gets a catch-up stream of its own from id-1.
        await settle(1_000);
        const second = realMain().find((source) => source !== first)!;
        expect(second.matches()).toEqual([topic("private-chat.1"), topic("private-chat.2")]);
        expect(second.param("last_event_id")).toBe("id-3");
        second.emitOpen();
        await settle();
        const catchUp = realMain().find((source) => source !== first && source !== second)!;
        expect([catchUp.matches(), catchUp.param("last_event_id")]).toEqual([[topic("private-chat.2")], "id-1"]);
        catchUp.emitOpen();
        catchUp.emitMessage(envelope(["private-chat.2"], "said", { n: 2 }), "id-2");
        second.emitMessage(envelope(["private-chat.2"], "said", { n: 4 }), "id-4");
        catchUp.emitMessage(envelope(["private-chat.2"], "said", { n: 4 }), "id-4");
        await settle(1_000);
        expect(gotC).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
        expect(gotB).toEqual([{ n: 3 }]);
        expect(catchUp.closed).toBe(true);
    });

    it("a leader that freezes steps down (a frozen tab still answers pings but gets no stream events): the next tab leads; the frozen one follows it on resume", async () => {
        const { a, b, gotA, gotB } = await twoTabs();
        const leaderStream = main();
        leaderStream.emitMessage(envelope(["private-chat.1"], "said", { n: 1 }), "id-1");
        await settle();
        a.tab.freeze();
        await settle();
        expect(leaderStream.closed).toBe(true); // It closed its real streams and released the lock.
        expect(browser.holder()).toBe(b.tab);
        // The frozen tab's clients stay: its bus handler still runs (as Chromium's does), so they follow the new
        // engine too, and the union keeps its channel.
        await openAll();
        const next = main();
        expect(next.param("last_event_id")).toBe("id-1");
        expect(next.matches()).toEqual(expect.arrayContaining([topic("private-orders.1"), topic("private-chat.1")]));
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        await settle();
        expect(gotB).toEqual([{ n: 1 }, { n: 2 }]);
        // Back from the freeze: tab A queues for the lead again and follows tab B's engine, which keeps leading.
        a.tab.resume();
        await settle();
        await openAll();
        expect(browser.holder()).toBe(b.tab);
        main().emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        await settle();
        expect(gotA).toEqual([{ n: 3 }]);
        expect(a.connector.connectionStatus()).toBe("connected");
    });

    it("a lone leader that freezes keeps its stream (what the hub writes waits for its resume, even without history) and steps down once another tab speaks", async () => {
        const a = open();
        const gotA: unknown[] = [];
        const errorsA: string[] = [];
        a.connector.privateChannel("orders.1").listen(".placed", (payload: unknown) => gotA.push(payload)).error((error: MercureError) => errorsA.push(error.code));
        await settle();
        await openAll();
        const leaderStream = main();
        a.tab.freeze();
        await settle(5_000);
        // Before: it stepped down with nobody to take over, closed its stream, and reopened it on resume: on a hub without
        // history the events of the freeze were lost, and the page heard a stream_error.
        expect(leaderStream.closed).toBe(false);
        expect(browser.holder()).toBe(a.tab);
        leaderStream.emitMessage(envelope(["private-orders.1"], "placed", { n: 1 }), "id-1");
        await settle();
        expect(gotA).toEqual([{ n: 1 }]);
        expect(errorsA).toEqual([]);
        // Another tab opens and joins: its ping reaches the frozen tab's bus handler, which steps down for it.
        const b = open();
        const gotB: unknown[] = [];
        b.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => gotB.push(payload));
        await settle();
        expect(browser.holder()).toBe(b.tab);
        await openAll();
        // The new leader's stream carries both tabs' channels (beside it, the catch-up of tab A's stream from id-1).
        const next = realMain().find((source) => source.matches().includes(topic("private-chat.1")))!;
        expect(next.matches()).toEqual(expect.arrayContaining([topic("private-orders.1"), topic("private-chat.1")]));
        next.emitMessage(envelope(["private-chat.1"], "said", { n: 2 }), "id-2");
        next.emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        // The hub writes id-3 to the catch-up too: what the shared stream forwarded tab A follows what it replays.
        const catchUp = realMain().find((source) => source.param("last_event_id") === "id-1")!;
        catchUp.emitMessage(envelope(["private-orders.1"], "placed", { n: 3 }), "id-3");
        await settle();
        expect(gotB).toEqual([{ n: 2 }]);
        expect(gotA).toEqual([{ n: 1 }, { n: 3 }]);
        a.tab.resume();
        await settle();
        expect(browser.holder()).toBe(b.tab);
    });

    it("steals the lead from a frozen leader that does not answer a ping within the bound", async () => {
        const a = open();
        a.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        const leaderStream = main();
        // Frozen: the leader hears nothing more (no task runs in it).
        browser.channels.filter((entry) => entry.tab === a.tab).forEach((entry) => (entry.instance.onmessage = null));
        const b = open();
        b.connector.privateChannel("chat.1");
        await settle(PING_TIMEOUT_MS + 1_000);
        expect(browser.holder()).toBe(b.tab);
        expect(leaderStream.closed).toBe(true); // The stolen leader closed its real streams.
    });

    it("falls back to one connection per connector with shareAcrossTabs: false", async () => {
        const a = open({ shareAcrossTabs: false });
        const b = open({ shareAcrossTabs: false });
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settle();
        // Both answers arrive before A's is read: the browser's one cookie is B's, so A authorizes again before it opens its
        // stream (BatchAuth.cookieReplaced), which then carries its own grant.
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-chat.1"], ["private-orders.1"]]);
        expect(ES.live()).toHaveLength(2);
        expect(browser.posted).toEqual([]);
    });

    it("falls back to one connection per connector with a hubToken: each tab's streams carry its own header", async () => {
        const part = (json: object) => Buffer.from(JSON.stringify(json)).toString("base64url");
        const hubToken = `${part({ alg: "HS256" })}.${part({ exp: 4_102_444_800 })}.signature`;
        const a = open({ hubToken });
        const b = open({ hubToken });
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settle();
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1"], ["private-chat.1"]]);
        expect(ES.live()).toHaveLength(2);
        expect(browser.posted).toEqual([]);
    });

    it("falls back when the page has no usable Web Locks (happy-dom: navigator.locks is null)", async () => {
        const tab = browser.tab();
        const connector = new MercureConnector({ host: HUB, eventSource: ES, fetch: auth.fetch });
        connectors.push(connector);
        connector.privateChannel("orders.1");
        await settle();
        expect(auth.requests).toHaveLength(1);
        expect(browser.posted).toEqual([]);
        void tab;
    });
});
