import { afterEach, describe, expect, it, vi } from "vitest";
import { requestAuthorization } from "../../../src/auth/auth-client";
import { ANSWER_STAMP_KEY, AUTH_STAMP_KEY, readStamp, stampAuth, type StampStorage } from "../../../src/auth/auth-stamp";

// Issue 53's navigation: every auth request writes a new stamp once it has left, and its granted answer carries it.

/** An in-memory storage; `full`: every write throws, as a full `localStorage` does. */
function storage(full = false): StampStorage & { store: Map<string, string> } {
    const store = new Map<string, string>();
    return {
        store,
        getItem: (key) => store.get(key) ?? null,
        setItem: (key, value) => {
            if (full) throw new DOMException("quota", "QuotaExceededError");
            store.set(key, value);
        },
        removeItem: (key) => void store.delete(key),
    };
}

afterEach(() => {
    vi.unstubAllGlobals();
    localStorage.clear();
});

describe("the auth stamp", () => {
    it("writes a new stamp at each request, telling the one it replaced", () => {
        const stamps = storage();
        const first = stampAuth(stamps)!;
        const second = stampAuth(stamps)!;
        expect(first.replaced).toBeNull();
        expect(second.replaced).toBe(first.stamp);
        expect(second.stamp).not.toBe(first.stamp);
        expect(readStamp(stamps, AUTH_STAMP_KEY)).toBe(second.stamp);
    });

    it("removes the older stamp where the new one cannot be written: no page trusts the grant it names", () => {
        const stamps = storage(true);
        stamps.store.set(AUTH_STAMP_KEY, "older");
        expect(stampAuth(stamps)).toBeUndefined();
        expect(readStamp(stamps, AUTH_STAMP_KEY)).toBeNull();
    });

    it("is written once the request has left (fetch was called), and the granted answer carries it", async () => {
        let atSend: string | null | undefined;
        const told: string[] = [];
        const result = await requestAuthorization({
            endpoint: "https://app.test/broadcasting/auth",
            headers: {},
            channelNames: ["private-orders.1"],
            fetch: async () => {
                atSend = localStorage.getItem(AUTH_STAMP_KEY);
                return { status: 200, headers: new Headers({ "content-type": "application/json" }), text: async () => JSON.stringify({ channel_names: [{ name: "private-orders.1" }], expires_in: 300, topic_prefix: "p/" }) };
            },
            signal: new AbortController().signal,
            timeout: 5_000,
            stamped: ({ stamp }) => told.push(stamp),
        });
        expect(atSend).toBeNull(); // Not before the request left.
        expect(result.kind).toBe("ok");
        const stamp = result.kind === "ok" ? result.response.stamp : undefined;
        expect(stamp).toBe(localStorage.getItem(AUTH_STAMP_KEY));
        expect(told).toEqual([stamp]);
    });

    it("writes each granted answer's stamp under a second key as it arrives: answers come in any order, and the last names the cookie", async () => {
        const stamps = storage();
        const answers: Array<(status: number) => void> = [];
        const send = () =>
            requestAuthorization({
                endpoint: "https://app.test/broadcasting/auth",
                headers: {},
                channelNames: ["private-orders.1"],
                fetch: () =>
                    new Promise((resolve) =>
                        answers.push((status) =>
                            resolve({ status, headers: new Headers({ "content-type": "application/json" }), text: async () => JSON.stringify(status === 200 ? { channel_names: [{ name: "private-orders.1" }], expires_in: 300, topic_prefix: "p/" } : {}) }),
                        ),
                    ),
                signal: new AbortController().signal,
                timeout: 5_000,
                stamps,
            });
        const first = send();
        const second = send();
        const sent = stamps.store.get(AUTH_STAMP_KEY);
        expect(readStamp(stamps, ANSWER_STAMP_KEY)).toBeNull(); // No answer yet: the cookie is still the last answer's.
        answers[1]!(200);
        await second;
        expect(readStamp(stamps, ANSWER_STAMP_KEY)).toBe(sent); // The last request sent is the last answered.
        answers[0]!(200);
        const older = await first;
        // The first request's answer came last: the cookie is its, though the second left after it.
        expect(stamps.store.get(ANSWER_STAMP_KEY)).toBe(older.kind === "ok" ? older.response.stamp : "not granted");
        expect(readStamp(stamps, AUTH_STAMP_KEY)).toBe(sent);

        // A refused answer sets no cookie and stamps no answer.
        const third = send();
        answers[2]!(403);
        expect((await third).kind).toBe("rejected");
        expect(stamps.store.get(ANSWER_STAMP_KEY)).toBe(older.kind === "ok" ? older.response.stamp : "not granted");
    });

    it("stamps nothing outside a page (Node.js: its localStorage warns without a storage file)", () => {
        const setItem = vi.spyOn(Storage.prototype, "setItem");
        vi.stubGlobal("document", undefined);
        expect(stampAuth()).toBeUndefined();
        expect(readStamp(undefined, AUTH_STAMP_KEY)).toBeNull();
        expect(setItem).not.toHaveBeenCalled();
        setItem.mockRestore();
    });
});
