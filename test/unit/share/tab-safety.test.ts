import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import type { LockManagerLike } from "../../../src/share/tab-link";
import { PROBE_MS } from "../../../src/share/leadership";
import { FakeAuthServer, grant } from "../../fakes/fake-auth-server";
import { envelope, settleLoads, topic } from "../../fakes/connector-harness";
import { type FakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";
// The lazy chunks these connectors may load mid-test (the share client, a refused stream's diagnosis, whispers, the
// unheard-event warning, isolation, credentials), loaded up front: their dynamic import() then settles from the module cache within the
// settle rounds below, however slowly a loaded machine would transform them on first use.
import "../../../src/share/share-platform";
import "../../../src/discovery/diagnose";
import "../../../src/whisper/index";
import "../../../src/channel/unheard-event";
import "../../../src/auth/isolation";
import "../../../src/auth/credentials";

/*
 * Tab sharing under what browsers do to tabs (issues 28 and 29): data only to the tabs that joined its channels, a tab's
 * set that follows its leaves, a silent tab dropped, Web Locks that refuse.
 */

let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

/** An AES-256 key (issue 28: it must reach the tab that joined its encrypted channel only). */
const KEY = "S2V5T2ZUYWJBT25seS1ub3QtZm9yLXRhYi1CLTEyMzQ";

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
});

afterEach(() => {
    leaveTabWorld(connectors);
});

/** Open a tab with its connector (`env`: another environment for that tab, e.g. other Web Locks). */
function open(options: MercureConnectorOptions = {}, tab?: FakeTab): { tab: FakeTab; connector: MercureConnector } {
    return openTab({ browser, ES, auth }, connectors, options, tab);
}

/** Let tasks and microtasks run (messages between tabs, lock grants, the engine chunk's import). */
const settle = settleTabs;

/** Open every real stream still connecting, and let replaced streams drain out. */
async function openAll(): Promise<void> {
    await openAllStreams(ES);
}

/**
 * Let `ms` pass as a hub would serve the tabs: a real stream opens within 100 ms of its request. (Left connecting for
 * seconds, a replacement misses its 4 s open deadline, and the engine gives the streams up: their connectors then
 * authorize again after a backoff with random jitter, and how many streams are open at the end is chance.)
 */
async function serve(ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 100) {
        await vi.dynamicImportSettled();
        await vi.advanceTimersByTimeAsync(100);
        for (const source of ES.live()) if (source.readyState === 0) source.emitOpen();
    }
    await settle();
}

/** The one open real main stream (a `match` of a channel topic). */
function main(): FakeEventSource {
    const live = ES.live().filter((source) => source.matches().some((match) => match.includes("/channel/")));
    expect(live, live.map((source) => source.url).join("\n")).toHaveLength(1);
    return live[0]!;
}

describe("tab sharing: each tab gets the data of its own channels only (issue 28)", () => {
    it("never delivers another tab's events or keys to a tab, on the bus or its inbox; each tab still gets its own", async () => {
        auth.handler = (names) => {
            const answer = grant(names);
            const body = answer.body as { channel_names: Array<Record<string, unknown>> };
            for (const entry of body.channel_names) if (entry["name"] === "private-encrypted-x") entry["jwk"] = { kty: "oct", k: KEY, alg: "A256GCM" };
            return answer;
        };
        const a = open();
        const b = open();
        const gotA: unknown[] = [];
        const gotB: unknown[] = [];
        a.connector.privateChannel("a").listen(".said", (payload: unknown) => gotA.push(payload));
        a.connector.encryptedPrivateChannel("x");
        b.connector.privateChannel("b").listen(".said", (payload: unknown) => gotB.push(payload));
        // B's page also listens on the link's bus itself, as any script of the origin may (once the share client chunk
        // has loaded and made the link; no tab has heard a message yet: those are timers).
        await settleLoads(0, 1);
        const spied: unknown[] = [];
        const bus = browser.channels.find((channel) => channel.tab === b.tab && !channel.name.includes(" inbox "))!.name;
        new b.tab.env.BroadcastChannel(bus).onmessage = (event) => spied.push(event.data);
        await settle();
        await openAll();
        expect(main().matches().sort()).toEqual([topic("private-a"), topic("private-b"), topic("private-encrypted-x")]);
        const real = main();
        real.emitMessage(envelope(["private-a"], "said", { secret: "for-a" }), "id-1");
        real.emitMessage({ channels: ["private-encrypted-x"], data: "sealed.for.a.only.jwe" }, "id-2");
        real.emitMessage(envelope(["private-b"], "said", { n: 1 }), "id-3");
        await settle();
        expect(gotA).toEqual([{ secret: "for-a" }]);
        expect(gotB).toEqual([{ n: 1 }]);
        const toB = JSON.stringify(browser.heard.filter(({ tab }) => tab === b.tab).map(({ message }) => message), (_key, value: unknown) => (value instanceof Map ? [...value] : value));
        expect(toB).toContain("private-b");
        for (const secret of ["for-a", "sealed.for.a.only.jwe", KEY, "private-a", "private-encrypted-x"]) expect(toB).not.toContain(secret);
        expect(JSON.stringify(spied)).not.toMatch(/for-a|sealed|private-a|private-b"|said/);
    });

    it("a tab that joined none of an event's channels gets nothing of it: no bus message at all", async () => {
        const a = open();
        const b = open();
        a.connector.privateChannel("a");
        b.connector.privateChannel("b");
        await settle();
        await openAll();
        await settle(PROBE_MS); // Let a liveness round pass first: its messages are not what is measured here.
        const before = browser.heard.filter(({ tab }) => tab === b.tab).length;
        for (let n = 1; n <= 5; n++) main().emitMessage(envelope(["private-a"], "said", { n }), `id-${n}`);
        await settle();
        expect(browser.heard.filter(({ tab }) => tab === b.tab).length).toBe(before);
    });
});

describe("tab sharing: a tab's channel set follows its joins and leaves (issue 29)", () => {
    it("a tab that left its 60 channels without disconnect() leaves the union: another tab's 60 joins are all authorized", async () => {
        const a = open();
        const b = open();
        for (let i = 0; i < 60; i++) a.connector.privateChannel(`a.${i}`);
        await settle();
        await openAll();
        for (let i = 0; i < 60; i++) a.connector.leaveChannel(`private-a.${i}`);
        await settle();
        await openAll();
        const limited: string[] = [];
        for (let i = 0; i < 60; i++) b.connector.privateChannel(`b.${i}`).error((error: MercureError) => limited.push(error.code));
        await settle();
        await openAll();
        expect(limited).toEqual([]);
        expect(auth.lastNames()).toEqual(Array.from({ length: 60 }, (_, i) => `private-b.${i}`));
        expect(main().matches()).toHaveLength(60);
    });
});

describe("tab sharing: a follower that dies without pagehide is dropped (issue 29)", () => {
    it("the leader drops a discarded tab's channels and streams within two probe periods; a live hidden tab stays", async () => {
        const a = open();
        const b = open();
        const c = open();
        a.connector.privateChannel("a");
        b.connector.privateChannel("b");
        c.connector.presenceChannel("room");
        await settle();
        await openAll();
        expect(main().matches()).toContain(topic("presence-room"));
        c.tab.lag = 900; // Hidden: its handlers run late, but run.
        b.tab.close(false); // Discarded: no pagehide, no bye; it never answers again.
        await serve(PROBE_MS);
        await openAll();
        expect(main().matches()).toContain(topic("private-b"));
        await serve(PROBE_MS);
        await openAll();
        // The real stream no longer subscribes the dead tab (a presence room would see it leave), and the next renewal
        // authorizes the live tabs' channels only.
        expect(main().matches().sort()).toEqual([topic("presence-room"), topic("private-a")]);
        a.connector.privateChannel("a2");
        await settle();
        expect(auth.lastNames().sort()).toEqual(["presence-room", "private-a", "private-a2"]);
    });

    it("a page restored from the back/forward cache after it was dropped registers again and gets its events", async () => {
        const a = open();
        const b = open();
        const gotB: unknown[] = [];
        a.connector.privateChannel("a");
        b.connector.privateChannel("b").listen(".said", (payload: unknown) => gotB.push(payload));
        await settle();
        await openAll();
        b.tab.cache(); // Deaf and mute past the bound: the leader drops it, as it would an evicted page.
        await serve(2 * PROBE_MS + 1_000);
        await openAll();
        expect(main().matches()).toEqual([topic("private-a")]);
        b.tab.restore();
        await settle();
        await openAll();
        expect(main().matches().sort()).toEqual([topic("private-a"), topic("private-b")]);
        main().emitMessage(envelope(["private-b"], "said", { n: 1 }), "id-1");
        await settle();
        expect(gotB).toEqual([{ n: 1 }]);
    });

    it("a tab dropped while alive (its answers came past the bound) registers again when its answer arrives", async () => {
        const a = open();
        const b = open();
        const c = open();
        const gotB: unknown[] = [];
        a.connector.privateChannel("a");
        b.connector.privateChannel("b").listen(".said", (payload: unknown) => gotB.push(payload));
        c.connector.privateChannel("c");
        await settle();
        await openAll();
        b.tab.lag = 2 * PROBE_MS + 1_000; // A main thread busy for 21 s: everything reaches it that late.
        await serve(2 * PROBE_MS);
        await openAll();
        expect(main().matches().sort()).toEqual([topic("private-a"), topic("private-c")]);
        b.tab.lag = 0;
        await serve(2 * PROBE_MS + 2_000);
        await openAll();
        expect(main().matches().sort()).toEqual([topic("private-a"), topic("private-b"), topic("private-c")]);
        main().emitMessage(envelope(["private-b"], "said", { n: 1 }), "id-1");
        await settle();
        expect(gotB).toEqual([{ n: 1 }]);
    });
});

describe("tab sharing: Web Locks that refuse (issue 29)", () => {
    it("a lock request rejected at once (opaque origin) makes the tab connect on its own, without a request loop", async () => {
        const tab = browser.tab();
        let requests = 0;
        const locks: LockManagerLike = {
            request: () => {
                // A loop re-requesting from a microtask would spin forever: the fake stops answering after 50.
                if (++requests > 50) return new Promise(() => undefined);
                return Promise.reject(new DOMException("The request is not allowed in an opaque origin.", "SecurityError"));
            },
        };
        const got: unknown[] = [];
        const { connector } = open({ shareEnvironment: { ...tab.env, locks } }, tab);
        connector.privateChannel("a").listen(".said", (payload: unknown) => got.push(payload));
        await settle();
        await openAll();
        expect(requests).toBe(1);
        expect(connector.connectionStatus()).toBe("connected");
        main().emitMessage(envelope(["private-a"], "said", { n: 1 }), "id-1");
        await settle();
        expect(got).toEqual([{ n: 1 }]);
        // Unshared: nothing of it on any bus.
        expect(browser.posted).toEqual([]);
    });
});

describe("tab sharing over HTTP/1.1: one connection budget for every tab (issue 29)", () => {
    it("two tabs with three whisper channels each: the main stream connects, the whisper streams stay within what is left, and the rest is reported as limit", async () => {
        const http = "http://app.test/.well-known/mercure";
        const errors: string[] = [];
        const tabs = [open({ host: http }), open({ host: http })];
        for (const [t, { connector }] of tabs.entries()) {
            for (let i = 0; i < 3; i++) {
                const name = `room.${t}.${i}`;
                connector
                    .privateChannel(name)
                    .listenForWhisper("typing", () => undefined)
                    .error((error: MercureError) => errors.push(`${name} ${error.code}: ${error.message.slice(0, 40)}`));
            }
            await settle();
            await openAll();
        }
        await openAll();
        const live = ES.live();
        // The browser's six connections per host, one kept for requests: five streams at most, the main one among them.
        expect(live.length).toBeLessThanOrEqual(5);
        expect(main().readyState).toBe(1);
        const whispers = live.filter((source) => source.matches().some((match) => match.includes("/whisper/")));
        expect(whispers).toHaveLength(4);
        // The two whisper channels past the budget are named, in their own tab.
        expect(errors.filter((error) => error.includes("stream_error: Channel"))).toHaveLength(2);
        expect(tabs.map(({ connector }) => connector.connectionStatus())).toEqual(["connected", "connected"]);
    });

    it("a channel that waited for a whisper stream gets one as soon as a channel of its tab stops listening for whispers", async () => {
        const http = "http://app.test/.well-known/mercure";
        const errors: string[] = [];
        const { connector } = open({ host: http });
        for (let i = 0; i < 6; i++) {
            const name = `room.${i}`;
            connector
                .privateChannel(name)
                .listenForWhisper("typing", () => undefined)
                .error((error: MercureError) => errors.push(`${name} ${error.code}`));
        }
        await settle();
        await openAll();
        const whisperStreams = () => ES.live().filter((source) => source.matches().some((match) => match.includes("/whisper/")));
        expect(whisperStreams()).toHaveLength(4);
        expect(errors).toEqual(["room.4 stream_error", "room.5 stream_error"]);
        const waiting = (name: string) => whisperStreams().some((source) => source.matches().some((match) => match.endsWith(encodeURIComponent(name)) || match.endsWith(name)));
        expect(waiting("private-room.4")).toBe(false);
        // Its connection goes to the first channel that waited, without waiting for the engine's next room count.
        connector.privateChannel("room.0").stopListeningForWhisper("typing");
        await settle();
        await openAll();
        expect(whisperStreams()).toHaveLength(4);
        expect(waiting("private-room.0")).toBe(false);
        expect(waiting("private-room.4")).toBe(true);
    });
});
