import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { importChannelKey } from "../../src/crypto/jwe";
import { runDoctor } from "../../src/dev/doctor";
import { discoverHub } from "../../src/discovery/discover";
import type { MercureError } from "../../src/errors";
import type { FetchLike } from "../../src/transport/platform";
import { createHarness, envelope, useScopedFakeTimers, type Harness } from "../fakes/connector-harness";
import { grant } from "../fakes/fake-auth-server";

// Issue 28: hostile input (huge, deeply nested, prototype keys, invalid UTF-8) from a hub, an auth endpoint, a JWK or
// an HTML page: no crash, no hang past a bound, and a clear error on the channels concerned. Bounds are counted in
// CPU time or in steps the fake timers take, never in a machine's wall-clock luck.

const MB = 1 << 20;
/** Deep enough to overflow a recursive parser's stack. */
const DEEP = 200_000;
const deepArray = "[".repeat(DEEP) + "]".repeat(DEEP);
const deepObject = '{"a":'.repeat(DEEP) + "1" + "}".repeat(DEEP);
/** Lone surrogates and replacement characters: what invalid UTF-8 becomes once decoded, and what a JSON escape can hold. */
const BAD_TEXT = '{"channels":["private-orders.1"],"event":"\uFFFD\\ud800","payload":{"t":"\\udc00\uFFFD"}}';
const PROTO = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"channels":["private-orders.1"],"event":"placed","payload":{"__proto__":{"polluted":true}}}';

/** The CPU time (ms) `task` takes: not counting the waits a machine loaded by other processes adds. */
async function cpuTime(task: () => Promise<unknown> | unknown): Promise<number> {
    const start = process.cpuUsage();
    await task();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1_000;
}

afterEach(() => {
    vi.useRealTimers();
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
});

describe("hostile hub frames", () => {
    beforeEach(() => useScopedFakeTimers());

    /** A connector on private-orders.1 with its stream open, recording events and errors. */
    async function connected(): Promise<{ h: Harness; got: unknown[] }> {
        const h = createHarness();
        const got: unknown[] = [];
        h.track(h.connector.privateChannel("orders.1")).listen(".placed", (payload: unknown) => got.push(payload));
        await h.flush();
        h.stream().emitOpen();
        await h.flush();
        return { h, got };
    }

    it.each([
        ["huge (8 MB)", "[" + "1,".repeat(4 * MB) + "1]"],
        ["a huge string in a valid envelope", JSON.stringify(envelope(["private-orders.1"], "other", { s: "x".repeat(8 * MB) }))],
        ["deeply nested arrays", deepArray],
        ["deeply nested objects", deepObject],
        ["prototype keys", PROTO],
        ["invalid UTF-8, decoded", BAD_TEXT],
        ["not JSON", "{nope"],
        ["channels that are not a list", '{"channels":{"length":1e9},"event":"placed"}'],
        ["a non-string event", '{"channels":["private-orders.1"],"event":{"toString":1}}'],
        ["empty", ""],
    ])("drops %s without a crash, in bounded time, and delivers the next event", async (_label, data) => {
        const { h, got } = await connected();
        const used = await cpuTime(() => h.stream().emitMessage(data, "id-1"));
        expect(used).toBeLessThan(5_000); // Parsing 8 MB takes well under a second of CPU; a hang would not end.
        h.stream().emitMessage(envelope(["private-orders.1"], "placed", { n: 2 }), "id-2");
        await h.flush();
        // A prototype-keyed event is delivered as plain data (its payload's own __proto__ key), nothing polluted.
        expect(got.at(-1)).toEqual({ n: 2 });
        expect(h.errors).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });
});

describe("hostile auth responses", () => {
    beforeEach(() => useScopedFakeTimers());

    const bodies = [
        ["a huge body", "x".repeat(8 * MB)],
        ["deeply nested JSON", deepArray],
        ["prototype keys", '{"__proto__":{"polluted":true},"channel_names":[{"name":"private-orders.1","__proto__":{"denied":false}}]}'],
        ["channel_names that are not a list", '{"channel_names":"private-orders.1"}'],
        ["entries of the wrong types", '{"channel_names":[1,null,"private-orders.1",{"name":{}},{"name":"private-orders.1","denied":"no","jwk":[]}],"expires_in":"soon"}'],
        ["invalid UTF-8, decoded", '{"channel_names":[{"name":"private-orders.1\uFFFD\\ud800"}]}'],
    ] as const;

    /** A connector joining two private channels against an auth endpoint answering `status` with `body`. */
    async function joinedAgainst(status: number, body: string): Promise<Harness> {
        const h = createHarness();
        h.auth.handler = () => ({ status, body });
        h.track(h.connector.privateChannel("orders.1"));
        h.track(h.connector.privateChannel("chat.1"));
        for (let step = 0; step < 20 && h.errors.length < 2 && h.EventSource.live().length === 0; step++) await vi.advanceTimersByTimeAsync(10);
        return h;
    }

    /** The bodies that are not a JSON object: not Laravel's answer (issue 30), so the batch fails. */
    const notAnObject = new Set<string>(["a huge body", "deeply nested JSON"]);

    it.each(bodies.filter(([label]) => notAnObject.has(label)))("a 200 with %s is not Laravel's JSON: one clear error on each joined channel, no crash, no hang", async (_label, body) => {
        const h = await joinedAgainst(200, body);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code, entry.error.status]).sort()).toEqual([
            ["private-chat.1", "auth_rejected", 200],
            ["private-orders.1", "auth_rejected", 200],
        ]);
        for (const { error } of h.errors) expect(error.message.length).toBeLessThan(1_000); // The body is not echoed.
        expect(h.EventSource.live()).toEqual([]);
        h.connector.disconnect();
    });

    it.each(bodies.filter(([label]) => !notAnObject.has(label)))("a 200 with %s reads as its valid part (laravel-mercure §2.5): no crash, no hang, the stream opens", async (_label, body) => {
        const h = await joinedAgainst(200, body);
        // [spec] §2.5: a channel the body does not list as denied is not denied; no grant is forged from prototype keys.
        expect(h.EventSource.live()).toHaveLength(1);
        expect(h.errors).toEqual([]);
        h.connector.disconnect();
    });

    it.each(bodies)("a 500 or a 403 with %s: one clear error on each joined channel, no crash, no hang", async (_label, body) => {
        for (const [status, code] of [[500, "auth_failed"], [403, "auth_rejected"]] as const) {
            const h = await joinedAgainst(status, body);
            expect(h.errors.map((entry) => entry.channel).sort()).toEqual(["private-chat.1", "private-orders.1"]);
            for (const { channel, error } of h.errors) {
                expect(error.code).toBe(code);
                expect(error.message).toContain(String(status));
                expect(error.message.length).toBeLessThan(1_000); // The body is not echoed.
                void channel;
            }
            expect(h.EventSource.live()).toEqual([]);
            h.connector.disconnect();
        }
    });

    it("a denied channel stays denied whatever prototype keys the body has", async () => {
        const h = createHarness();
        h.auth.handler = (names) => {
            const answer = grant(names, {}, ["private-orders.1"]);
            return { status: 200, body: JSON.stringify(answer.body).replace('"denied":true', '"denied":true,"__proto__":{"denied":false}') };
        };
        h.track(h.connector.privateChannel("orders.1"));
        for (let step = 0; step < 20 && h.errors.length < 1; step++) await vi.advanceTimersByTimeAsync(10);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([["private-orders.1", "auth_denied"]]);
    });
});

describe("hostile JWKs", () => {
    it.each([
        ["a huge k", { kty: "oct", k: "A".repeat(8 * MB) }],
        ["a deeply nested member", { kty: "oct", k: "A".repeat(43), alg: JSON.parse(deepArray.slice(0, 2_000) + deepArray.slice(-2_000)) as unknown }],
        ["prototype keys", JSON.parse('{"__proto__":{"kty":"oct","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}') as unknown],
        ["key_ops that are huge", { kty: "oct", k: "A".repeat(43), key_ops: new Array(100_000).fill("sign") }],
        ["a k with invalid UTF-8, decoded", { kty: "oct", k: "\uFFFD\ud800".repeat(21) + "A" }],
    ])("refuses %s quickly", async (_label, jwk) => {
        const used = await cpuTime(() => importChannelKey(jwk).then(() => expect.unreachable(), () => undefined));
        expect(used).toBeLessThan(1_000);
    });
});

describe("hostile HTML and metadata", () => {
    /** A fetch answering every URL with `answer(url)`. */
    const scripted =
        (answer: (url: string) => { status?: number; headers?: Record<string, string>; body?: string }): FetchLike =>
        async (url) => {
            const { status = 200, headers = {}, body = "" } = answer(url);
            return new Response(body, { status, headers });
        };
    const hostileHtml = "<link " + '<base x="'.repeat(MB / 9) + "\uFFFD\ud800";

    it("discoverHub reads a 1 MB hostile page in bounded time and says no hub is announced", async () => {
        const fetch = scripted(() => ({ headers: { "Content-Type": "text/html" }, body: hostileHtml }));
        let error: unknown;
        const used = await cpuTime(async () => (error = await discoverHub("https://app.test/", { fetch }).catch((e: unknown) => e)));
        expect(used).toBeLessThan(2_000);
        expect((error as MercureError).code).toBe("discovery_failed");
    });

    it("doctor survives a hostile page, deeply nested metadata with prototype keys, and invalid UTF-8: a report, no throw", async () => {
        const fetch = scripted((url) =>
            (url.includes("oauth-protected-resource")
                ? { headers: { "Content-Type": "application/json" }, body: '{"__proto__":{"polluted":true},"resource":' + deepArray + "}" }
                : url.endsWith("/.well-known/mercure") || url.includes("/.well-known/mercure?")
                  ? { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="\uFFFD\ud800' + "x".repeat(MB) } }
                  : { headers: { "Content-Type": "text/html" }, body: hostileHtml }) as { status?: number; headers?: Record<string, string>; body?: string },
        );
        let report: Awaited<ReturnType<typeof runDoctor>> | undefined;
        const used = await cpuTime(async () => (report = await runDoctor({ appUrl: "https://app.test/", fetch, token: "t", timeout: 5_000 })));
        expect(used).toBeLessThan(5_000);
        expect(report!.checks.length).toBeGreaterThan(1);
        expect(report!.checks.every((check) => typeof check.detail === "string")).toBe(true);
    });
});
