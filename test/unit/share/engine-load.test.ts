import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import { DEFAULT_AUTH_TIMEOUT } from "../../../src/connector/options";
import { ANSWER_GRACE_MS } from "../../../src/share/tab-link";
import { ShareClient } from "../../../src/share/virtual-source";
import type { AuthResult } from "../../../src/auth/auth-client";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { envelope, settleLoads, topic } from "../../fakes/connector-harness";
import type { FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openTab, ringLink } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";

/** How many of the next engine chunk loads fail (a flaky network, a deploy that removed the chunk). */
const chunk = vi.hoisted(() => ({ failures: 0, loads: 0 }));

vi.mock("../../../src/share/load", async (importOriginal) => ({
    ...(await importOriginal<typeof import("../../../src/share/load")>()),
    loadEngine: async () => {
        chunk.loads++;
        if (chunk.failures-- > 0) throw new TypeError("Failed to fetch dynamically imported module");
        return import("../../../src/share/leadership");
    },
}));

let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
    chunk.loads = 0;
});

afterEach(() => {
    leaveTabWorld(connectors);
});

/** A tab's connector joining `private-a`, recording its errors. */
function join(): { connector: MercureConnector; errors: string[] } {
    const { connector } = openTab({ browser, ES, auth }, connectors);
    const errors: string[] = [];
    connector.privateChannel("a").error((error: MercureError) => errors.push(error.code));
    return { connector, errors };
}

describe("tab sharing: the engine chunk that fails to load (issue 29)", () => {
    it("retries a failed load: the join goes through after two failures", async () => {
        chunk.failures = 2;
        const { connector, errors } = join();
        await settleLoads(1, 10); // It leads alone, on its own stream, without its engine.
        expect(chunk.loads).toBe(0);
        ringLink(browser); // Another tab opens: now it needs its engine.
        await settleLoads(100, 60); // 6 s: the retries wait 1 s, then 3 s.
        for (const source of ES.live()) source.emitOpen();
        await settleLoads(1, 10);
        expect(chunk.loads).toBe(3);
        expect(errors).toEqual([]);
        expect(connector.connectionStatus()).toBe("connected");
        expect(auth.requests).toHaveLength(1);
    });

    it("reports a load that keeps failing on the channel, then tries again, without a loop", async () => {
        chunk.failures = Infinity;
        const { errors } = join();
        await settleLoads(1, 10); // It leads alone, on its own stream, without its engine.
        ringLink(browser); // Another tab opens: now it needs its engine.
        await vi.advanceTimersByTimeAsync(4_500);
        await settleLoads(1, 10);
        // One try: the first load and two retries (after 1 s, then 3 s), then the error on the channel.
        expect(chunk.loads).toBe(3);
        expect(errors.length).toBeGreaterThan(0);
        expect(auth.requests).toHaveLength(0);
        // Each later try comes from the connector's own retry (its backoff), and is reported again: no loop of loads.
        await settleLoads(1_000, 20);
        expect(errors.length).toBeLessThan(10);
        expect(chunk.loads).toBeGreaterThanOrEqual(3 * errors.length);
        expect(chunk.loads).toBeLessThanOrEqual(3 * errors.length + 3); // A try may be under way.
        chunk.failures = 0;
        await settleLoads(1_000, 120); // The connector retries with its backoff; the chunk loads now.
        for (const source of ES.live()) source.emitOpen();
        await settleLoads(1, 10);
        expect(auth.requests.length).toBeGreaterThan(0);
    });
});

describe("a tab whose engine chunk failed stays electable (issue 49 point 4)", () => {
    /** A tab's connector on `private-<name>`, recording what it hears and the codes of its errors. */
    function listen(name: string): { tab: FakeTab; connector: MercureConnector; got: unknown[]; errors: string[] } {
        const { tab, connector } = openTab({ browser, ES, auth }, connectors);
        const got: unknown[] = [];
        const errors: string[] = [];
        connector
            .privateChannel(name)
            .listen(".said", (payload: unknown) => got.push(payload))
            .error((error: MercureError) => errors.push(error.code));
        return { tab, connector, got, errors };
    }

    /** Let about `ms` pass (at least 100 ms) in steps of 10 ms, opening the streams that connect every 100 ms. */
    async function pass(ms: number): Promise<void> {
        for (let at = 0; at < ms; at += 100) {
            await vi.dynamicImportSettled();
            await vi.advanceTimersByTimeAsync(100);
            for (const source of ES.live()) if (source.readyState === 0) source.emitOpen();
        }
        await settleLoads(1, 10);
    }

    it("leads when the next leader is discarded: its channel is served again, not left connected and deaf", async () => {
        chunk.failures = 3; // The first tab's first try (a load, and retries after 1 s and 3 s more) fails.
        const b = listen("b");
        await pass(1_500);
        // Another tab opens meanwhile: it waits for the lock (its ping would take it from B after 3 s), gets it when B's
        // try has failed, loads its engine, and B follows it.
        const a = listen("a");
        await pass(4_000);
        expect(chunk.failures).toBeLessThanOrEqual(0); // B's try failed three times, A's loaded.
        expect(browser.holder()).toBe(a.tab);
        expect(b.connector.connectionStatus()).toBe("connected");
        const before = ES.instances.length;
        a.tab.close(false); // Discarded (routine on mobile): no pagehide, no `down`; its streams die with it.
        await pass(1_000);
        expect(browser.holder()).toBe(b.tab);
        const served = ES.live().filter((source) => ES.instances.indexOf(source) >= before && source.matches().includes(topic("private-b")));
        expect(served).toHaveLength(1);
        served[0]!.emitMessage(envelope(["private-b"], "said", { n: 1 }), "id-1");
        await pass(100);
        expect(b.got).toEqual([{ n: 1 }]);
        expect(b.connector.connectionStatus()).toBe("connected");
    });

    it("a tab that pings while the leading tab's engine chunk is retried waits for it instead of stealing the lock: one leading tab, one stream", async () => {
        chunk.failures = 2; // B's load fails twice: it loads on its second retry, 4 s after the first try.
        const b = listen("b");
        await pass(500);
        const a = listen("a");
        await pass(6_000);
        // Before: A's ping got no answer within 3 s, A stole the lock while B's engine was still loading, and B's engine
        // came up beside A's own lead: two leading tabs, each with a main stream.
        expect(browser.holder()).toBe(b.tab);
        const mains = ES.live().filter((source) => source.matches().some((match) => match.includes("/channel/")));
        expect(mains).toHaveLength(1);
        expect(mains[0]!.matches()).toEqual(expect.arrayContaining([topic("private-a"), topic("private-b")]));
        expect(a.errors).toEqual([]);
        expect(b.errors).toEqual([]);
        expect([a.connector.connectionStatus(), b.connector.connectionStatus()]).toEqual(["connected", "connected"]);
    });

    it("is never connected and deaf while its engine cannot load: it reports, retries with backoff, and serves once the chunk loads", async () => {
        const a = listen("a");
        const b = listen("b");
        await pass(3_000);
        expect(browser.holder()).toBe(a.tab);
        expect(b.connector.connectionStatus()).toBe("connected");
        const errors = b.errors.length;
        chunk.failures = Infinity;
        const loads = chunk.loads;
        const before = ES.instances.length;
        a.tab.close(false);
        await pass(60_000);
        expect(browser.holder()).toBe(b.tab);
        expect(b.connector.connectionStatus()).not.toBe("connected");
        expect(b.errors.length).toBeGreaterThan(errors);
        // Retried with backoff, not in a loop: a round (a load and two retries) at most every few seconds.
        expect(chunk.loads - loads).toBeGreaterThanOrEqual(6);
        expect(chunk.loads - loads).toBeLessThanOrEqual(45);
        chunk.failures = 0;
        await pass(70_000);
        expect(b.connector.connectionStatus()).toBe("connected");
        const served = ES.live().filter((source) => ES.instances.indexOf(source) >= before && source.matches().includes(topic("private-b")));
        expect(served).toHaveLength(1);
        served[0]!.emitMessage(envelope(["private-b"], "said", { n: 2 }), "id-2");
        await pass(100);
        expect(b.got).toEqual([{ n: 2 }]);
    });
});

describe("ShareClient: every auth request has a deadline", () => {
    it("fails a request the engine never answers once its deadline passes", async () => {
        const client = new ShareClient({ post: () => undefined, deadline: () => DEFAULT_AUTH_TIMEOUT + ANSWER_GRACE_MS });
        let result: AuthResult | null = null;
        void client.authorize(["private-a"], new AbortController().signal).then((answer) => (result = answer));
        await vi.advanceTimersByTimeAsync(DEFAULT_AUTH_TIMEOUT + ANSWER_GRACE_MS - 1);
        expect(result).toBeNull();
        await vi.advanceTimersByTimeAsync(1);
        expect(result).toMatchObject({ kind: "error", status: null });
        expect(client.waiting()).toBe(false);
    });
});
