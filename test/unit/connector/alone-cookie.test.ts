import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ANSWER_STAMP_KEY, AUTH_STAMP_KEY, type StampStorage } from "../../../src/auth/auth-stamp";
import type { MercureError } from "../../../src/errors";
import type { FetchLike } from "../../../src/fetch";
// Loaded here too, so that the connector's dynamic imports of the whisper and credentials chunks find them in the module cache at once.
import "../../../src/whisper";
import "../../../src/auth/credentials";
import "../../../src/connector/presence-capability";
import { createHarness, envelope, topic, useScopedFakeTimers } from "../../fakes/connector-harness";
import type { FakeEventSource } from "../../fakes/fake-event-source";

/*
 * Connectors that run alone (a credential function keeps each tab alone) in several tabs of one browser share the
 * browser's one hub cookie: each auth answer replaces it with that tab's grants. The auth stamp (auth-stamp.ts) tells a
 * connector that another request left after its own; what its streams and whispers then present to the hub is that
 * other cookie. The simulation's known bug `alone-cookie` (fixed here): a native reconnect on it was `connected` and
 * silent on the tab's private channels, and a whisper got 403.
 */

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/**
 * The browser's `localStorage` for the stamps, as every tab of the origin sees it; `otherTab()` writes another tab's
 * stamps (its request left and was granted: the cookie is its), `otherLeft()` only that its request left, and
 * `otherAnswered(stamp)` that the granted answer to request `stamp` arrived.
 */
function browserStorage() {
    const items = new Map<string, string>();
    const storage: StampStorage = {
        getItem: (key) => items.get(key) ?? null,
        setItem: (key, value) => void items.set(key, value),
        removeItem: (key) => void items.delete(key),
    };
    const otherLeft = () => {
        const stamp = "another-tab-" + items.size;
        items.set(AUTH_STAMP_KEY, stamp);
        return stamp;
    };
    return { storage, otherLeft, otherTab: () => items.set(ANSWER_STAMP_KEY, otherLeft()), otherAnswered: (stamp: string) => items.set(ANSWER_STAMP_KEY, stamp) };
}

/** Let the auth answers and the whisper chunk's import settle (the import resolves through the real event loop). */
async function settle(h: ReturnType<typeof createHarness>): Promise<void> {
    for (let round = 0; round < 10; round++) {
        await h.flush();
        await new Promise<void>((resolve) => setImmediate(resolve));
    }
}

/** A tab's connector running alone (a `bearerToken` function) that joined `names` (private), its stream not open yet. */
async function aloneJoined(...names: string[]) {
    const browser = browserStorage();
    const h = createHarness({ bearerToken: () => "token-of-ann", authStamps: browser.storage });
    for (const name of names) h.connector.privateChannel(name);
    await settle(h);
    return { browser, h };
}

/**
 * A tab's connector running alone (a `bearerToken` function) on `private-a`, its stream open, with the browser's stamps;
 * the hub answers whisper POSTs with the statuses in `replies` (200 when empty), recorded in `posts`.
 */
async function aloneTab() {
    const browser = browserStorage();
    const posts: number[] = [];
    const replies: number[] = [];
    const fetch: FetchLike = async (url, init) => {
        if (!url.includes("/.well-known/mercure") || (init.method ?? "GET") === "GET") return h.auth.fetch(url, init);
        const status = replies.shift() ?? 200;
        posts.push(status);
        return { status, text: async () => "urn:uuid:1" };
    };
    const h = createHarness({ bearerToken: () => "token-of-ann", authStamps: browser.storage, fetch });
    const errors: string[] = [];
    const received: unknown[] = [];
    const channel = h.connector.privateChannel("a");
    channel.error((error: MercureError) => errors.push(error.code));
    channel.listen(".said", (payload: unknown) => received.push(payload));
    await settle(h);
    const stream = h.stream();
    stream.emitOpen();
    stream.emitMessage(envelope(["private-a"], "said", { n: 1 }), "urn:1");
    return { h, browser, errors, received, stream, posts, replies };
}

describe("a tab running alone whose hub cookie another tab replaced (alone-cookie)", () => {
    it("authorizes again and reopens from its cursor when its stream reconnects by itself on that cookie, instead of saying `connected`", async () => {
        const { h, browser, stream } = await aloneTab();
        expect(h.auth.requests).toHaveLength(1);
        browser.otherTab();
        stream.emitError(false); // The network dropped: the EventSource reconnects by itself...
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        stream.emitOpen(); // ...with the cookie the browser holds now: the other tab's.
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        await settle(h);
        expect(h.auth.requests).toHaveLength(2);
        expect(stream.readyState).toBe(2); // Closed: it carried nothing of this tab's private channel.
        const next = h.stream();
        expect(next.param("last_event_id")).toBe("urn:1");
        next.emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("authorizes again when its first connection failed and the EventSource's own retry connects on that cookie (the hub was down)", async () => {
        const { browser, h } = await aloneJoined("a");
        const stream = h.stream();
        stream.emitError(false); // The hub is down: the EventSource retries by itself...
        browser.otherTab(); // ...while another tab authorizes...
        stream.emitOpen(); // ...and its retry connects on that tab's cookie.
        await settle(h);
        expect(h.auth.requests).toHaveLength(2);
        expect(stream.readyState).toBe(2);
        h.stream().emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("keeps a stream that connected at once after its own answer, though another tab's request left since: it carried this tab's cookie", async () => {
        const { browser, h } = await aloneJoined("a");
        browser.otherTab();
        h.stream().emitOpen();
        await settle(h);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it.each([
        // Both tabs reconnect after one hub drop: re-authorizing here too would race the other tab's answer (the Chromium
        // test of two alone tabs failed that way, once in a while: each stream opened on the other's cookie).
        ["while another tab's request is still unanswered: the cookie is its own until that answer", true],
        ["on its own cookie", false],
    ])("keeps a stream that reconnects by itself %s: no request, `connected` again", async (_why, otherInFlight) => {
        const { h, browser, stream } = await aloneTab();
        if (otherInFlight) browser.otherLeft();
        stream.emitError(false);
        stream.emitOpen();
        await settle(h);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.stream()).toBe(stream);
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("opens no narrower stream on that cookie when the auth of a leave fails: it carries nothing until the retry's auth (seed 4021)", async () => {
        const { browser, h } = await aloneJoined("a", "b");
        h.stream().emitOpen();
        browser.otherTab();
        h.auth.handler = () => ({ status: 500 });
        h.connector.leaveChannel("private-b");
        await settle(h);
        expect(h.auth.requests).toHaveLength(2);
        // Without the check, a stream for private-a alone opened on the other tab's cookie: connected, and silent.
        expect(h.EventSource.live()).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });

    it("retries a whisper the hub refused with 403 after one re-auth, without an error, and reports a 403 on its own cookie", async () => {
        const tab = await aloneTab();
        const { h, posts, replies } = tab;
        tab.browser.otherTab();
        replies.push(403, 200);
        h.connector.privateChannel("a").whisper("typing", {});
        await settle(h);
        expect(posts).toEqual([403, 200]);
        expect(h.auth.requests).toHaveLength(2);
        expect(tab.errors).toEqual([]);

        // The cookie is this tab's own now: a 403 is the hub's answer to its grants, reported without a re-auth.
        replies.push(403);
        h.connector.privateChannel("a").whisper("typing", {});
        await settle(h);
        expect(posts).toEqual([403, 200, 403]);
        expect(h.auth.requests).toHaveLength(2);
        expect(tab.errors[0]).toBe("whisper_failed");
    });

    it("reopens a whisper stream that reconnected by itself on that cookie, from its cursor, after one re-auth", async () => {
        const { h, browser, errors } = await aloneTab();
        const whispers: unknown[] = [];
        h.connector.privateChannel("a").listenForWhisper("typing", (payload: unknown) => whispers.push(payload));
        await settle(h);
        const whisperStreams = (): FakeEventSource[] => h.EventSource.live().filter((source) => source.matches().some((match) => match.includes("/whisper/")));
        const [first] = whisperStreams();
        first!.emitOpen();
        first!.emitMessage({ channels: ["private-a"], event: "client-typing", payload: { n: 1 }, socket: "other.1" }, "urn:w1");
        expect(whispers).toEqual([{ n: 1 }]);
        const requests = h.auth.requests.length;

        browser.otherTab();
        first!.emitError(false);
        first!.emitOpen();
        await settle(h);
        expect(h.auth.requests).toHaveLength(requests + 1);
        expect(first!.readyState).toBe(2);
        const [second, ...more] = whisperStreams();
        expect(more).toEqual([]);
        expect(second).not.toBe(first);
        expect(second!.param("last_event_id")).toBe("urn:w1");
        expect(errors).toEqual([]);
    });

    it("authorizes again, with no error, when a presence snapshot is refused on that cookie, and seeds the room on its own", async () => {
        const browser = browserStorage();
        const h = createHarness({ bearerToken: () => "token-of-ann", authStamps: browser.storage });
        const snapshots: string[] = [];
        const ann = { subscriber: "urn:uuid:ann", topic: topic("presence-room"), active: true, payload: { user_id: 1, user_info: { name: "Ann" } } };
        h.auth.probeHandler = (url) => {
            snapshots.push(url);
            const body = snapshots.length === 1 ? "" : JSON.stringify({ subscriptions: [ann] });
            return { status: snapshots.length === 1 ? 403 : 200, text: async () => body };
        };
        const errors: string[] = [];
        const here: unknown[] = [];
        h.connector.presenceChannel("room").here((members: unknown[]) => here.push(members)).error((error: MercureError) => errors.push(error.code));
        await settle(h);
        browser.otherTab(); // Another tab's auth request replaced the cookie before the snapshot left.
        h.stream().emitOpen();
        await settle(h);
        expect(snapshots).toHaveLength(2);
        expect(h.auth.requests).toHaveLength(2);
        expect(errors).toEqual([]);
        expect(here).toEqual([[ann.payload]]);
    });

    it("authorizes again before opening its stream when another tab's answer arrived after its own: that stream would carry the other tab's cookie", async () => {
        const browser = browserStorage();
        let racing = true;
        const fetch: FetchLike = async (url, init) => {
            const response = await h.auth.fetch(url, init);
            if (!url.includes("/broadcasting/auth") || !racing) return response;
            racing = false;
            // Another tab reconnecting after the same drop: its answer arrives while this one's body is read.
            return { ...response, text: async () => (browser.otherAnswered("another-tab"), response.text()) };
        };
        const h = createHarness({ bearerToken: () => "token-of-ann", authStamps: browser.storage, fetch });
        const errors: string[] = [];
        h.connector.privateChannel("a").error((error: MercureError) => errors.push(error.code));
        await settle(h);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.EventSource.instances).toHaveLength(1); // Opened after the second answer only, on this tab's cookie.
        h.stream().emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
        expect(errors).toEqual([]);
    });

    it("authorizes again, with no error, when another tab's request that left before its own was answered after it (seed 5013)", async () => {
        const browser = browserStorage();
        const h = createHarness({ bearerToken: () => "token-of-ann", authStamps: browser.storage });
        const snapshots: number[] = [];
        h.auth.probeHandler = () => {
            snapshots.push(snapshots.length === 0 ? 403 : 200);
            return { status: snapshots[snapshots.length - 1]!, text: async () => (snapshots.length === 1 ? "" : JSON.stringify({ subscriptions: [] })) };
        };
        const errors: string[] = [];
        const other = browser.otherLeft(); // Another tab's request leaves first...
        h.connector.presenceChannel("room").error((error: MercureError) => errors.push(error.code));
        await settle(h); // ...this tab's leaves after it and is answered...
        expect(h.auth.requests).toHaveLength(1);
        browser.otherAnswered(other); // ...and then the other's answer arrives: the cookie is that tab's.
        h.stream().emitOpen();
        await settle(h);
        // The last stamp sent is this tab's own: only the answers' order tells that the cookie is not its.
        expect(snapshots).toEqual([403, 200]);
        expect(h.auth.requests).toHaveLength(2);
        expect(errors).toEqual([]);
    });
});
