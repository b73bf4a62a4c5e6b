import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import { DEFAULT_AUTH_TIMEOUT } from "../../../src/connector/options";
import { ANSWER_GRACE_MS } from "../../../src/share/tab-link";
import { ShareClient } from "../../../src/share/virtual-source";
import type { AuthResult } from "../../../src/auth/auth-client";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { settleLoads } from "../../fakes/connector-harness";
import type { FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openTab } from "../../fakes/tab-world";
import { FakeBrowser } from "../../fakes/fake-tabs";

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
