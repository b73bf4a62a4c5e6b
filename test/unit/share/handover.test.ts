import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { envelope, topic } from "../../fakes/connector-harness";
import type { FakeEventSource, FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";
// The chunks these connectors load mid-test, loaded up front (see tab-safety.test.ts).
import "../../../src/share/share-platform";

// Issue 49 point 8: what the leading tab's going away costs the other tabs. Where the leading tab can still run (its
// connector's `disconnect()`, a leave of its last channel, a change of its credentials), nothing is handed over: the
// engine serves on and reopens the shared stream make-before-break, so a hub without history loses nothing. Where it
// cannot (closed, discarded, frozen), the next tab resumes from the last event id the tabs saw.

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

/** A tab's connector on `private-<name>`, what it hears there, and the codes its `error()` callback got. */
function listen(name: string, options: MercureConnectorOptions = {}): { tab: FakeTab; connector: MercureConnector; got: unknown[]; errors: string[] } {
    const { tab, connector } = openTab({ browser, ES, auth }, connectors, options);
    const got: unknown[] = [];
    const errors: string[] = [];
    connector
        .privateChannel(name)
        .listen(".said", (payload: { n: number }) => got.push(payload.n))
        .error((error: { code: string }) => errors.push(error.code));
    return { tab, connector, got, errors };
}

/** The live real streams carrying `private-<name>`. */
function carrying(name: string): FakeEventSource[] {
    return ES.live().filter((source) => source.matches().includes(topic("private-" + name)));
}

/** Publish `{n}` on `private-<name>` as the hub would: to every live stream carrying it, with id `id-<n>`. */
function publish(name: string, n: number): void {
    for (const source of carrying(name)) if (source.readyState === 1) source.emitMessage(envelope(["private-" + name], "said", { n }), `id-${n}`);
}

describe("the leading tab that can still run hands nothing over (issue 49 point 8)", () => {
    const cases: Array<[string, (leader: MercureConnector) => void]> = [
        ["its connector's disconnect()", (leader) => leader.disconnect()],
        ["a leave of its last channel", (leader) => leader.leaveChannel("private-a")],
        ["a change of its bearer token", (leader) => {
            (leader.options as { auth: { headers: Record<string, string> } }).auth.headers["Authorization"] = "Bearer someone-else";
            leader.privateChannel("elsewhere");
        }],
    ];
    for (const [what, act] of cases) {
        it(`after ${what}: the other tab's stream is reopened make-before-break, and every event published meanwhile arrives once`, async () => {
            const a = listen("a", { auth: { headers: { Authorization: "Bearer one" } } });
            const b = listen("b", { auth: { headers: { Authorization: "Bearer one" } } });
            await settleTabs();
            await openAllStreams(ES);
            const leader = browser.holder();
            expect(leader).toBe(a.tab);
            const [before] = carrying("b");
            publish("b", 1);
            act(a.connector);
            publish("b", 2); // The moment the leading tab's connector went: the old stream still reads.
            await settleTabs();
            publish("b", 3);
            // The replacement (without A's channel) opens; the old stream closes only after it.
            expect(before!.closed).toBe(false);
            await openAllStreams(ES);
            publish("b", 4);
            await settleTabs();
            expect(b.got).toEqual([1, 2, 3, 4]);
            expect(before!.closed).toBe(true);
            expect(carrying("b").map((source) => source.matches())).toEqual([[topic("private-b")]]);
            expect(browser.holder()).toBe(a.tab);
            expect(b.connector.connectionStatus()).toBe("connected");
        });
    }
});

describe("the leading tab that goes away abruptly (issue 49 point 8)", () => {
    /** Three tabs, A leading; B's channel last heard `id-1`, C's `id-2`; then A goes (`hide`: with `pagehide`). */
    async function leaderGone(hide: boolean): Promise<{ b: ReturnType<typeof listen>; c: ReturnType<typeof listen>; union: FakeEventSource }> {
        const a = listen("a");
        const b = listen("b");
        const c = listen("c");
        await settleTabs();
        await openAllStreams(ES);
        expect(browser.holder()).toBe(a.tab);
        publish("b", 1);
        publish("c", 2);
        await settleTabs();
        const before = ES.instances.length;
        a.tab.close(hide);
        await settleTabs();
        await openAllStreams(ES);
        expect(browser.holder()).toBe(b.tab);
        const next = ES.instances.slice(before).filter((source) => !source.closed && source.matches().length === 2);
        expect(next.map((source) => source.matches().sort())).toEqual([[topic("private-b"), topic("private-c")]]);
        return { b, c, union: next[0]! };
    }

    it("closes (pagehide): the next tab resumes from the last event the leading tab forwarded, which its `down` told every tab", async () => {
        const { b, c, union } = await leaderGone(true);
        // [spec] laravel-mercure §8: from the last event any tab saw, not from the new leader's own (id-1).
        expect(union.param("last_event_id")).toBe("id-2");
        // What a hub with history replays from there (published while no stream was open), then live.
        union.emitMessage(envelope(["private-b"], "said", { n: 3 }), "id-3");
        union.emitMessage(envelope(["private-c"], "said", { n: 4 }), "id-4");
        publish("b", 5);
        await settleTabs();
        expect(b.got).toEqual([1, 3, 5]);
        expect(c.got).toEqual([2, 4]);
        // The user closed another tab: no failure of the hub, and the next engine reopened at once. No error() says so.
        expect([b.errors, c.errors]).toEqual([[], []]);
        expect([b.connector.connectionStatus(), c.connector.connectionStatus()]).toEqual(["connected", "connected"]);
    });

    it("tells the other tabs' channels of a hand-over once, as stream_error, only when no stream opened in time", async () => {
        const a = listen("a");
        const b = listen("b");
        const c = listen("c");
        await settleTabs();
        await openAllStreams(ES);
        a.tab.close(true);
        await settleTabs(); // B leads; its engine's stream stays connecting (a hub that takes its time).
        expect([b.connector.connectionStatus(), c.connector.connectionStatus()]).toEqual(["reconnecting", "reconnecting"]);
        await settleTabs(3_900);
        expect([b.errors, c.errors]).toEqual([[], []]);
        await settleTabs(1_200); // The engine's stream missed its open deadline (4 s), and the hold's (5 s) passed.
        expect([b.errors, c.errors]).toEqual([["stream_error"], ["stream_error"]]);
        await openAllStreams(ES);
        expect([b.errors, c.errors]).toEqual([["stream_error"], ["stream_error"]]);
        expect([b.connector.connectionStatus(), c.connector.connectionStatus()]).toEqual(["connected", "connected"]);
    });

    it("is discarded (no pagehide): the next tab resumes from the oldest last event id the tabs resubscribe with; nothing arrives twice", async () => {
        const { b, c, union } = await leaderGone(false);
        // No `down`: each tab resumes from its own last event (B id-1, C id-2); the shared stream from the oldest known.
        expect(union.param("last_event_id")).toBe("id-1");
        for (const n of [2, 3, 4]) union.emitMessage(envelope([n === 3 ? "private-b" : "private-c"], "said", { n }), `id-${n}`);
        // C's cursor is none the new engine forwarded: C has a catch-up stream from id-2, which holds back what the
        // shared stream forwards C until the hub replays it there too (id-4), and then lets it through.
        const catchUp = carrying("c").find((source) => source.param("last_event_id") === "id-2")!;
        expect(catchUp.matches()).toEqual([topic("private-c")]);
        await settleTabs();
        expect(c.got).toEqual([2]);
        catchUp.emitMessage(envelope(["private-c"], "said", { n: 4 }), "id-4");
        publish("b", 5);
        await settleTabs();
        expect(b.got).toEqual([1, 3, 5]);
        expect(c.got).toEqual([2, 4]);
        expect(catchUp.closed).toBe(true);
        expect([b.errors, c.errors]).toEqual([[], []]);
    });
});
