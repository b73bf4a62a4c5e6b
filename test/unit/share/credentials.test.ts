import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import { fingerprint } from "../../../src/share/load";
import { PING_TIMEOUT_MS } from "../../../src/share/tab-link";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { HUB, envelope, topic } from "../../fakes/connector-harness";
import { type FakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";

// Issue 28 (medium): tabs of one browser share a hub connection only when they would authorize identically, and a
// stray or forged message on the tabs' bus cannot leave a tab deaf.

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
function open(options: MercureConnectorOptions = {}, tab?: FakeTab): { tab: FakeTab; connector: MercureConnector } {
    return openTab({ browser, ES, auth }, connectors, options, tab);
}

/** Let tasks and microtasks run (messages between tabs, lock grants, the engine chunk's import). */
const settle = settleTabs;

/** Open every real stream still connecting, and let replaced streams drain out. */
async function openAll(): Promise<void> {
    await openAllStreams(ES);
}

/** The open real main streams carrying `channel`. */
function carrying(channel: string): FakeEventSource[] {
    return ES.live().filter((source) => source.matches().includes(topic(channel)));
}

/** Post `message` on every bus of the browser as another script of the origin would (its own BroadcastChannel). */
function forge(message: unknown): void {
    const stranger = browser.tab();
    for (const name of new Set(browser.channels.map((channel) => channel.name))) new stranger.env.BroadcastChannel(name).postMessage(message);
}

const ALICE = { auth: { headers: { Authorization: "Bearer alice-secret-token" } } };
const BOB = { auth: { headers: { Authorization: "Bearer bob-secret-token" } } };

describe("tab sharing keyed by credentials", () => {
    it("authorizes each tab's channels with its own headers: tabs with other credentials form their own group", async () => {
        const alice = open(ALICE);
        const bob = open(BOB);
        alice.connector.privateChannel("App.Models.User.1");
        bob.connector.privateChannel("App.Models.User.2");
        await settle();
        await openAll();
        const sent = auth.requests.map((request) => [request.headers["Authorization"], request.channelNames]);
        expect(sent).toContainEqual(["Bearer alice-secret-token", ["private-App.Models.User.1"]]);
        expect(sent).toContainEqual(["Bearer bob-secret-token", ["private-App.Models.User.2"]]);
        // No request ever carried one identity's header with the other's channel.
        expect(sent.filter(([header, names]) => header === "Bearer alice-secret-token" && (names as string[]).includes("private-App.Models.User.2"))).toEqual([]);
        expect(sent.filter(([header, names]) => header === "Bearer bob-secret-token" && (names as string[]).includes("private-App.Models.User.1"))).toEqual([]);
        // Two groups, two leaders, and no secret in any lock's or bus's name or message.
        const names = [...new Set(browser.channels.map((channel) => channel.name).filter((name) => !name.includes(" inbox ")))];
        expect(names).toHaveLength(2);
        expect(browser.holder(names[0])).toBe(alice.tab);
        expect(browser.holder(names[1])).toBe(bob.tab);
        expect(JSON.stringify({ names: browser.channels.map((channel) => channel.name), posted: browser.posted })).not.toMatch(/secret-token/);
        // Alice's event on Bob's stream never reaches Bob's tab (his stream does not carry her channel).
        expect(carrying("private-App.Models.User.1").every((source) => !source.matches().includes(topic("private-App.Models.User.2")))).toBe(true);
    });

    it("still shares between tabs with the same headers, in any order or case of the header names", async () => {
        const a = open({ auth: { headers: { "X-CSRF-TOKEN": "t", Authorization: "Bearer same" } } });
        const b = open({ auth: { headers: { authorization: "Bearer same", "x-csrf-token": "t" } } });
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settle();
        await openAll();
        expect(new Set(browser.channels.map((channel) => channel.name).filter((name) => !name.includes(" inbox "))).size).toBe(1);
        expect(auth.lastNames()).toEqual(["private-orders.1", "private-chat.1"]);
    });

    it("fingerprints headers without the secret and tells apart values that differ in one character", () => {
        const one = fingerprint({ Authorization: "Bearer abc" });
        expect(one).toMatch(/^[0-9a-z]+\.[0-9a-z]+$/);
        expect(one).not.toContain("abc");
        expect(fingerprint({ Authorization: "Bearer abd" })).not.toBe(one);
        expect(fingerprint({ authorization: "Bearer abc" })).toBe(one);
        expect(fingerprint({})).not.toBe(one);
    });

    it("moves a tab whose headers changed to its new group before its next auth request: the old group forgets its channels", async () => {
        const bob = open(BOB); // Bob's tab leads its group.
        const alice = open(ALICE);
        bob.connector.privateChannel("chat.1");
        alice.connector.privateChannel("orders.1");
        await settle();
        await openAll();
        // Bob's tab logs in as Carol (Echo writes the new bearer header into the connector's options), and joins on.
        (bob.connector.options as { auth: { headers: Record<string, string> } }).auth.headers["Authorization"] = "Bearer carol-secret-token";
        bob.connector.privateChannel("chat.2");
        await settle();
        await openAll();
        const last = auth.requests[auth.requests.length - 1]!;
        expect([last.headers["Authorization"], last.channelNames]).toEqual(["Bearer carol-secret-token", ["private-chat.1", "private-chat.2"]]);
        // Neither Bob's credentials nor Alice's ever authorized Carol's channels, nor Carol's Alice's.
        for (const request of auth.requests) {
            if (request.channelNames.includes("private-chat.2")) expect(request.headers["Authorization"]).toBe("Bearer carol-secret-token");
            if (request.channelNames.includes("private-orders.1")) expect(request.headers["Authorization"]).toBe("Bearer alice-secret-token");
        }
        // Bob's group, left empty, closed its stream: one stream carries Carol's channels, another Alice's.
        expect(carrying("private-chat.1").map((source) => source.matches())).toEqual([[topic("private-chat.1"), topic("private-chat.2")]]);
        expect(carrying("private-orders.1").map((source) => source.matches())).toEqual([[topic("private-orders.1")]]);
        expect(bob.connector.connectionStatus()).toBe("connected");
    });
});

describe("nothing of the headers on disk (issue 50 point 5)", () => {
    /** Every key and value of the browser's `localStorage` once a tab with `headers` led and joined. */
    async function stored(headers: Record<string, string>): Promise<string[]> {
        const tab = browser.tab(true);
        const { connector } = open({ auth: { headers } }, tab);
        connector.privateChannel("orders.1");
        await settle();
        await openAll();
        expect(browser.holder()).toBe(tab);
        return [...browser.storage].flat();
    }

    it("marks the lead in localStorage without the fingerprint of the headers: two users leave the same keys", async () => {
        const weak = await stored({ Authorization: "abcd" });
        expect(weak).toHaveLength(2);
        const name = browser.channels.find((channel) => !channel.name.includes(" inbox "))!.name;
        const print = name.slice(name.lastIndexOf(" ") + 1);
        expect(print).toBe(fingerprint({ Authorization: "abcd" }));
        expect(weak.join("\n")).not.toContain(print);
        leaveTabWorld(connectors);
        ({ browser, ES, auth } = enterTabWorld());
        const other = await stored({ Authorization: "abce" });
        expect(other[0]).toBe(weak[0]);
    });

    it("removes the lead marks an earlier build left on disk with the fingerprint in their key", async () => {
        const old = `laravel-echo-mercure 2 ${HUB} https://app.test/broadcasting/auth 1x2y3z.4a5b6c lead`;
        browser.storage.set(old, "crashed-tab");
        browser.storage.set("the-app's own key", "kept");
        await stored({});
        expect(browser.storage.has(old)).toBe(false);
        expect(browser.storage.get("the-app's own key")).toBe("kept");
    });
});

describe("stray and forged messages on the tabs' bus", () => {
    /** Two tabs on one group, each listening on its channel, the real stream open. */
    async function twoTabs(): Promise<{ gotA: unknown[]; gotB: unknown[]; a: ReturnType<typeof open>; b: ReturnType<typeof open> }> {
        const a = open();
        const b = open();
        const gotA: unknown[] = [];
        const gotB: unknown[] = [];
        a.connector.privateChannel("orders.1").listen(".placed", (payload: unknown) => gotA.push(payload));
        b.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => gotB.push(payload));
        await settle();
        await openAll();
        return { gotA, gotB, a, b };
    }

    /** Publish one event on each tab's channel through the one real stream. */
    function publish(n: number): void {
        const [real] = carrying("private-orders.1");
        real!.emitMessage(envelope(["private-orders.1"], "placed", { n }), `a-${n}`);
        real!.emitMessage(envelope(["private-chat.1"], "said", { n }), `b-${n}`);
    }

    it("drops malformed messages without throwing, and a bare or forged `up` leaves neither the leader nor a follower deaf", async () => {
        const { gotA, gotB, a } = await twoTabs();
        for (const junk of [null, 1, "up", [], { t: "up" }, { t: "events", e: "x", events: 5 }, { t: "events", e: "x", events: [{ t: "event" }] }, { t: "granted", e: "x", c: "c", r: 1, result: null }, { t: "open", c: "c", s: "other/1", url: HUB, w: false }, { t: "open", c: "x", s: "x/1", url: "not a url", w: false }, { t: "auth", c: "x", r: 1, names: [1] }, { t: "hello", c: "x", names: null }, { t: "state", e: "x", s: "s", state: 7 }]) {
            forge(junk);
        }
        await settle();
        forge({ t: "up", e: "forged-epoch" });
        await settle(PING_TIMEOUT_MS);
        await openAll();
        publish(1);
        await settle();
        expect(gotA).toEqual([{ n: 1 }]);
        expect(gotB).toEqual([{ n: 1 }]);
        expect(browser.holder()).toBe(a.tab);
    });

    it("a forged `down` with the engine's epoch makes a follower ping, not steal the lead; it re-registers and hears on", async () => {
        const { gotA, gotB, a } = await twoTabs();
        const epoch = (browser.posted as Array<{ t: string; e?: string }>).find((message) => message.t === "pong" || message.t === "events" || message.t === "granted")?.e;
        expect(epoch).toBeTypeOf("string");
        forge({ t: "down", e: epoch });
        await settle(PING_TIMEOUT_MS * 2);
        await openAll();
        expect(browser.holder()).toBe(a.tab);
        publish(2);
        await settle();
        expect(gotA).toEqual([{ n: 2 }]);
        expect(gotB).toEqual([{ n: 2 }]);
    });
});
