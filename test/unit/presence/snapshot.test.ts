import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchSnapshot, parseSnapshot, SNAPSHOT_TIMEOUT } from "../../../src/presence/snapshot";
import type { FetchLike } from "../../../src/transport/platform";

const URL_ = "https://app.test/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2";
const TOPIC = "https://laravel.alt/echo/channel/presence-room.2";

/** A subscription document of the snapshot collection. */
function entry(subscriber: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return { id: "…", type: "subscription", subscriber, match: TOPIC, match_type: "exact", active: true, payload: { user_id: subscriber, user_info: subscriber }, ...overrides };
}

/** A fetch answering `status` and `body` (a string, or JSON of anything else), recording calls. */
function answering(status: number, body: unknown): FetchLike & { calls: Array<[string, RequestInit]> } {
    const calls: Array<[string, RequestInit]> = [];
    const fetch = (async (url: string, init: RequestInit) => {
        calls.push([url, init]);
        return { status, text: async () => (typeof body === "string" ? body : JSON.stringify(body)) };
    }) as FetchLike & { calls: typeof calls };
    fetch.calls = calls;
    return fetch;
}

/** A fetch that never settles and ignores its signal. */
const hanging: FetchLike = () => new Promise(() => undefined);

afterEach(() => {
    vi.useRealTimers();
});

describe("fetchSnapshot", () => {
    it("GETs the URL with the cookie and no headers, and returns the members", async () => {
        const fetch = answering(200, { id: "/x", type: "subscriptions", subscriptions: [entry("a"), entry("b")] });
        const result = await fetchSnapshot(URL_, fetch, new AbortController().signal);
        expect(result).toEqual({
            kind: "ok",
            members: [
                { topic: TOPIC, subscriber: "a", active: true, payload: { user_id: "a", user_info: "a" } },
                { topic: TOPIC, subscriber: "b", active: true, payload: { user_id: "b", user_info: "b" } },
            ],
        });
        expect(fetch.calls).toHaveLength(1);
        const [url, init] = fetch.calls[0]!;
        expect(url).toBe(URL_);
        expect(init.credentials).toBe("include");
        expect(init.headers).toBeUndefined();
        expect(init.method ?? "GET").toBe("GET");
        expect(init.body).toBeUndefined();
    });

    it("classifies a non-2xx answer as failed with its status, never as an empty room", async () => {
        for (const status of [401, 403, 404, 500]) {
            expect(await fetchSnapshot(URL_, answering(status, { subscriptions: [] }), new AbortController().signal)).toEqual({
                kind: "failed",
                reason: `HTTP ${status}`,
                status,
            });
        }
    });

    it("classifies a malformed body as failed", async () => {
        for (const body of ["not json", "", "null", "[]", { subscriptions: {} }, { subscriptions: null }, {}]) {
            expect(await fetchSnapshot(URL_, answering(200, body), new AbortController().signal)).toEqual({
                kind: "failed",
                reason: "malformed response",
                status: 200,
            });
        }
    });

    it("classifies a network error as failed with its cause", async () => {
        const cause = new TypeError("Failed to fetch");
        const result = await fetchSnapshot(URL_, () => Promise.reject(cause), new AbortController().signal);
        expect(result).toEqual({ kind: "failed", reason: "Failed to fetch", cause });
    });

    it("times out even when fetch ignores the signal", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const pending = fetchSnapshot(URL_, hanging, new AbortController().signal, 2_000);
        await vi.advanceTimersByTimeAsync(1_999);
        let settled = false;
        void pending.then(() => (settled = true));
        await vi.advanceTimersByTimeAsync(0);
        expect(settled).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
        expect(await pending).toEqual({ kind: "failed", reason: "timed out after 2000 ms" });
        expect(vi.getTimerCount()).toBe(0);
    });

    it("times out a body that never ends, with the default deadline", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const stalled: FetchLike = async () => ({ status: 200, text: () => new Promise<string>(() => undefined) });
        const pending = fetchSnapshot(URL_, stalled, new AbortController().signal);
        await vi.advanceTimersByTimeAsync(SNAPSHOT_TIMEOUT);
        expect(await pending).toEqual({ kind: "failed", reason: `timed out after ${SNAPSHOT_TIMEOUT} ms` });
    });

    it("is aborted, not failed, when the caller's signal aborts, even if fetch ignores it; and aborts its own request", async () => {
        const caller = new AbortController();
        let requestSignal: AbortSignal | undefined;
        const pending = fetchSnapshot(URL_, (_url, init) => ((requestSignal = init.signal ?? undefined), new Promise(() => undefined)), caller.signal);
        caller.abort();
        expect(await pending).toEqual({ kind: "aborted" });
        expect(requestSignal?.aborted).toBe(true);
        expect(await fetchSnapshot(URL_, answering(200, { subscriptions: [] }), caller.signal)).toEqual({ kind: "aborted" });
    });
});

describe("parseSnapshot", () => {
    it("keeps active subscriptions with a payload, exact when the entry says, and ignores id, type and @context", () => {
        const body = {
            "@context": "https://mercure.rocks/",
            id: "/.well-known/mercure/subscriptions/exact/x",
            type: "Subscriptions",
            subscriptions: [
                entry("member"),
                entry("no-type", { match_type: undefined, "@context": "https://mercure.rocks/", type: "Subscription" }),
                entry("phantom", { payload: undefined }),
                entry("null-payload", { payload: null }),
                entry("inactive", { active: false }),
                entry("truthy", { active: "true" }),
                entry("pattern", { match_type: "urlpattern" }),
                { ...entry("x"), subscriber: 3 },
                "junk",
                null,
                entry("raw", { payload: false }),
            ],
        };
        expect(parseSnapshot(JSON.stringify(body))?.map((member) => member.subscriber)).toEqual(["member", "no-type", "raw"]);
    });

    it("reads an empty room as an empty list, and a body without subscriptions as malformed", () => {
        expect(parseSnapshot('{"subscriptions":[]}')).toEqual([]);
        expect(parseSnapshot('{"id":"x","type":"subscriptions"}')).toBeNull();
    });
});
