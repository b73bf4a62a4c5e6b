import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import { FakeAuthServer, grant } from "../../fakes/fake-auth-server";
import { topic } from "../../fakes/connector-harness";
import type { FakeEventSource, FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser } from "../../fakes/fake-tabs";
// The chunks these connectors load mid-test, loaded up front (see tab-safety.test.ts).
import "../../../src/share/share-platform";
import "../../../src/connector/batch-isolation";
import "../../../src/auth/isolation";

// Issue 49 point 2: with tabs sharing one connection, one tab's batch isolation (issue 30: the channel whose auth fails
// alone is found by halving the batch, then retried alone) must not change what the engine records as that tab's
// channels: another tab's requests never carry the failing channel, and never fail because of it.

let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

/** The channel Laravel answers 5xx for, whenever a batch holds it (a `private-encrypted-` channel without a key, say). */
const BROKEN = "private-broken";

/** The channels the browser's hub cookie grants: the last successful answer's. */
let cookie = new Set<string>();

/** Each real stream with the cookie's grants when it was opened. */
let opened: Array<{ source: FakeEventSource; grants: ReadonlySet<string> }> = [];

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
    cookie = new Set();
    opened = [];
    auth.handler = (names) => {
        if (names.includes(BROKEN)) return { status: 500, body: { message: "Server Error" } };
        cookie = new Set(names);
        return grant(names);
    };
    const push = ES.instances.push.bind(ES.instances);
    ES.instances.push = (...sources) => {
        for (const source of sources) opened.push({ source, grants: new Set(cookie) });
        return push(...sources);
    };
});

afterEach(() => {
    leaveTabWorld(connectors);
});

/** A tab with its connector, and the codes of the errors its channels report. */
function tab(): { connector: MercureConnector; errors: string[] } {
    const { connector } = openTab({ browser, ES, auth }, connectors);
    return { connector, errors: [] };
}

/** Join `name` (full private name) in `who`'s tab, recording its errors. */
function join(who: { connector: MercureConnector; errors: string[] }, name: string): void {
    who.connector.privateChannel(name.replace(/^private-/, "")).error((error: MercureError) => who.errors.push(`${name} ${error.code}`));
}

/** Let `ms` pass in steps of a second, opening what connects. */
async function pass(ms: number): Promise<void> {
    for (let at = 0; at < ms; at += 1_000) {
        await settleTabs(1_000);
        await openAllStreams(ES);
    }
}

describe("batch isolation with tabs sharing (issue 49 point 2)", () => {
    it("a tab's probes and lone retries leave its set in the union as it is: the other tab never gets an error, nor a stream the cookie does not cover", async () => {
        const b = tab();
        const a = tab();
        join(b, "private-b.1");
        await pass(1_000);
        join(a, "private-a.1");
        join(a, BROKEN);
        // A's batch fails twice (A backs off in between), its isolation finds the channel, and it is retried alone with
        // its backoff (5 s, then 10 s, 20 s): a minute holds several of A's lone retries.
        await pass(60_000);
        expect(a.errors.filter((error) => !error.startsWith(BROKEN))).toEqual(["private-a.1 auth_failed"]);
        expect(a.errors.filter((error) => error.startsWith(BROKEN)).length).toBeGreaterThanOrEqual(2);
        const retries = auth.requests.filter((request) => request.channelNames.join() === BROKEN);
        expect(retries.length).toBeGreaterThanOrEqual(3);

        // B joins on after A's lone retries: B's request (the union) holds B's and A's channels, not A's failing one.
        join(b, "private-b.2");
        await pass(2_000);
        expect(b.errors).toEqual([]);
        const withB = auth.requests.filter((request) => request.channelNames.includes("private-b.1"));
        expect(withB.at(-1)!.channelNames.sort()).toEqual(["private-a.1", "private-b.1", "private-b.2"]);
        const live = ES.live();
        expect(live.map((source) => source.matches().sort())).toEqual([["private-a.1", "private-b.1", "private-b.2"].map(topic)]);
        // Every real stream was opened with the cookie of a grant covering its channels: a probe's answer (the cookie of
        // its part alone) never reopened the stream.
        for (const { source, grants } of opened) expect(source.matches().filter((match) => ![...grants].map(topic).includes(match))).toEqual([]);
        expect([a.connector, b.connector].map((connector) => connector.connectionStatus())).toEqual(["connected", "connected"]);
    });

    it("a tab whose request meets another tab's failing channel in the same union is answered without it, and both go on", async () => {
        const a = tab();
        const b = tab();
        join(a, "private-a.1");
        await pass(1_000);
        // A's new channel and B's first one reach the leading tab's engine together (A's request is still in flight).
        auth.hold();
        join(a, BROKEN);
        await settleTabs();
        join(b, "private-b.1");
        await settleTabs();
        auth.release();
        await pass(30_000);
        expect(b.errors).toEqual([]);
        expect(a.errors.filter((error) => error.startsWith(BROKEN)).length).toBeGreaterThanOrEqual(2);
        // The union without A's failing channel was granted (A's own channel stayed in it), and the stream carries it.
        expect(ES.live().map((source) => source.matches().sort())).toEqual([["private-a.1", "private-b.1"].map(topic)]);
        for (const { source, grants } of opened) expect(source.matches().filter((match) => ![...grants].map(topic).includes(match))).toEqual([]);
        // No request holding B's channel ever held A's failing one: the union that failed was sent before B's request came,
        // and the split asks for each set alone, then for each of the failing set's channels alone.
        const mixed = auth.requests.filter((request) => request.channelNames.includes("private-b.1") && request.channelNames.includes(BROKEN));
        expect(mixed).toEqual([]);
        expect([a.connector, b.connector].map((connector) => connector.connectionStatus())).toEqual(["connected", "connected"]);
    });

    it("a channel granted before whose authorization starts failing fails its own tab only: the other tab's join is answered without it", async () => {
        const failing = new Set<string>();
        auth.handler = (names) => {
            if (names.some((name) => failing.has(name))) return { status: 500, body: { message: "Server Error" } };
            cookie = new Set(names);
            return grant(names);
        };
        const a = tab();
        const b = tab();
        join(a, "private-a.1");
        join(b, "private-b.1");
        await pass(1_000);
        // A's channel was granted; now the server throws for it (the model behind it was deleted, say).
        failing.add("private-a.1");
        const from = auth.requests.length;
        join(b, "private-b.2");
        await pass(30_000);
        // One union held A's failing channel beside B's: the split then left it out, and A's own retries ask for A's set
        // alone (one request each), so no later request of B's fails for it.
        const later = auth.requests.slice(from).map((request) => request.channelNames);
        expect(later.filter((names) => names.includes("private-a.1") && names.some((name) => name.startsWith("private-b.")))).toHaveLength(1);
        // Before: every union held A's channel and failed, and no set stood out (each had been granted): B's join failed
        // with auth_failed (its new channel was taken for the culprit without a question), while A never asked.
        expect(b.errors).toEqual([]);
        const last = later.filter((names) => names.some((name) => name.startsWith("private-b."))).at(-1)!;
        expect(last).toEqual(expect.arrayContaining(["private-b.1", "private-b.2"]));
        expect(last).not.toContain("private-a.1");
        expect(b.connector.connectionStatus()).toBe("connected");
        // A did not ask: the engine ended its stream, as the hub ends a refused one, so that it asks again and hears why
        // (its own set alone, one request each time).
        expect(a.errors).toContain("private-a.1 auth_failed");
        expect(later.filter((names) => names.length === 1 && names[0] === "private-a.1").length).toBeGreaterThan(1);
    });
});
