import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import type { FetchLike, FetchResponseLike } from "../../../src/transport/platform";
import { DRAIN_MS, OPEN_DEADLINE_MS } from "../../../src/transport/stream-switch";
// Loaded here too, so that the connector's dynamic imports of them find them in the module cache at once.
import "../../../src/whisper";
import "../../../src/discovery/diagnose";
import { createHarness, envelope, HUB, topic, useScopedFakeTimers } from "../../fakes/connector-harness";
import { grant, PREFIX } from "../../fakes/fake-auth-server";
import type { FakeEventSource } from "../../fakes/fake-event-source";

// The connector's wiring of the whisper module (laravel-mercure §7): which streams it opens, where whispers
// go, the shared re-auth and backoff, and the connection budget. The module's own rules (envelopes,
// acceptance, ordering, error texts) are tested in test/unit/whisper/.

beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
});

/** The whisper topic of a channel under the default prefix. */
const whisperTopic = (name: string) => PREFIX + "whisper/" + encodeURIComponent(name);

/** A plain HTTP hub: browsers speak HTTP/1.1 to it, so its connections are counted. */
const HTTP_HUB = "http://app.test/.well-known/mercure";

/**
 * A connector whose `fetch` answers the auth endpoint and the diagnostics' hub probes (GET, see
 * `h.auth.probeHandler`) with the fake auth server and whisper POSTs to the hub from `replies` (200 when
 * empty); `onPost` runs when a POST arrives, before it is answered.
 */
function whisperHarness(options: MercureConnectorOptions = {}) {
    const posts: Array<{ url: string; body: URLSearchParams; init: RequestInit }> = [];
    const replies: number[] = [];
    let onPost: () => void = () => undefined;
    let h: ReturnType<typeof createHarness>;
    const fetch: FetchLike = async (url, init) => {
        if (!url.includes("/.well-known/mercure") || (init.method ?? "GET") === "GET") return h.auth.fetch(url, init);
        posts.push({ url, body: new URLSearchParams(String(init.body)), init });
        onPost();
        const status = replies.shift() ?? 200;
        return { status, text: async () => "urn:uuid:1" };
    };
    h = createHarness({ fetch, ...options });
    const log: string[] = [];
    const errors: MercureError[] = [];
    /** Every live EventSource subscribed to whisper topics. */
    const whisperStreams = (): FakeEventSource[] => h.EventSource.live().filter((source) => source.matches().some((match) => match.includes("/whisper/")));
    /** The one live main stream. */
    const main = (): FakeEventSource => {
        const found = h.EventSource.live().filter((source) => !source.matches().some((match) => match.includes("/whisper/")));
        expect(found, "one live main stream").toHaveLength(1);
        return found[0]!;
    };
    /** The live whisper stream of one channel. */
    const whisperStream = (name: string): FakeEventSource => {
        const found = whisperStreams().filter((source) => source.matches()[0] === whisperTopic(name));
        expect(found, `one live whisper stream for ${name}`).toHaveLength(1);
        return found[0]!;
    };
    /** A private channel whose errors are recorded into `log` (registered once per channel). */
    const tracked = new Set<string>();
    const privateChannel = (name: string) => {
        const channel = h.connector.privateChannel(name);
        if (!tracked.has(channel.name)) {
            tracked.add(channel.name);
            channel.error((error: MercureError) => {
                errors.push(error);
                log.push(`private-${name}:!${error.code}`);
            });
        }
        return channel;
    };
    const listen = (name: string, event = "typing") => {
        const callback = (data: unknown) => log.push(`private-${name}:${event}:${JSON.stringify(data)}`);
        privateChannel(name).listenForWhisper(event, callback);
        return callback;
    };
    const events = (posted = posts) => posted.map((post) => `${post.body.get("topic")} ${JSON.parse(post.body.get("data")!).event as string}`);
    return {
        h,
        posts,
        replies,
        log,
        errors,
        whisperStreams,
        whisperStream,
        main,
        privateChannel,
        listen,
        events,
        setOnPost: (run: () => void) => (onPost = run),
    };
}

/** Listen for whispers on `private-chat.1`, and open the main stream and its whisper stream, which is returned. */
async function openChatWhispers(w: ReturnType<typeof whisperHarness>): Promise<FakeEventSource> {
    w.listen("chat.1");
    await settle(w.h);
    const stream = w.whisperStream("private-chat.1");
    w.main().emitOpen();
    stream.emitOpen();
    return stream;
}

/**
 * Let the auth answers, the whisper module's dynamic import and the queued POSTs settle: the import
 * resolves through vitest's module runner, which fake timers do not drive, so each round also yields to
 * the real event loop (setImmediate is not faked). Ordering, not timing: no duration is involved.
 */
async function settle(h: ReturnType<typeof createHarness>): Promise<void> {
    for (let round = 0; round < 10; round++) {
        await h.flush();
        await new Promise<void>((resolve) => setImmediate(resolve));
    }
}

describe("whisper streams, wired", () => {
    it("the main stream never subscribes to whisper topics, whatever listens for whispers", async () => {
        const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined); // the public channel's listener
        const w = whisperHarness();
        w.listen("chat.1");
        w.h.connector.presenceChannel("lobby").listenForWhisper("typing", () => undefined);
        w.h.connector.encryptedPrivateChannel("room.1").listenForWhisper("typing", () => undefined);
        w.h.connector.channel("news").listen(".client-typing", () => undefined);
        await settle(w.h);
        const main = w.main();
        expect(main.matches()).toEqual([topic("private-chat.1"), topic("presence-lobby"), topic("private-encrypted-room.1"), topic("news")]);
        expect(main.url).not.toContain("whisper");
        expect(w.whisperStreams().map((source) => source.matches())).toEqual([
            [whisperTopic("private-chat.1")],
            [whisperTopic("presence-lobby")],
            [whisperTopic("private-encrypted-room.1")],
        ]);
        expect(warn).toHaveBeenCalledTimes(1);
    });

    it("opens a channel's whisper stream on its first listenForWhisper() and closes it on the last removal, and on leave", async () => {
        const w = whisperHarness();
        const chat = w.privateChannel("chat.1");
        await settle(w.h);
        expect(w.whisperStreams()).toEqual([]);
        const first = () => undefined;
        chat.listenForWhisper("typing", first);
        await settle(w.h);
        const stream = w.whisperStream("private-chat.1");
        expect(stream.withCredentials).toBe(true);
        expect(new URL(stream.url).origin + new URL(stream.url).pathname).toBe(HUB);
        chat.listenForWhisper("moved", () => undefined);
        chat.stopListeningForWhisper("typing", first);
        expect(w.whisperStream("private-chat.1")).toBe(stream);
        chat.stopListeningForWhisper("moved");
        expect(stream.closed).toBe(true);
        expect(w.whisperStreams()).toEqual([]);

        chat.listenForWhisper("typing", first);
        const again = w.whisperStream("private-chat.1");
        w.h.connector.leave("chat.1");
        expect(again.closed).toBe(true);
        expect(w.h.auth.requests).toHaveLength(1); // listeners never cost an auth request
    });

    it("does not reopen a healthy whisper stream when unrelated channels are joined or left", async () => {
        const w = whisperHarness();
        const stream = await openChatWhispers(w);
        w.privateChannel("orders.1");
        await settle(w.h);
        w.h.EventSource.last().emitOpen();
        w.h.connector.leave("orders.1");
        await settle(w.h);
        expect(w.h.auth.requests).toHaveLength(3);
        expect(w.whisperStream("private-chat.1")).toBe(stream);
        expect(w.h.EventSource.instances.filter((source) => source.matches()[0] === whisperTopic("private-chat.1"))).toHaveLength(1);
    });

    it("renews a whisper stream make-before-break with the cookie's renewal, from its cursor: a whisper in between is heard once", async () => {
        const w = whisperHarness();
        const stream = await openChatWhispers(w);
        const typing = (n: number) => ({ channels: ["private-chat.1"], event: "client-typing", payload: { n }, socket: "peer.socket" });
        stream.emitMessage(typing(1), "w-1");
        await settle(w.h);
        // 300 s cookies: the renewal at 211.5 s re-authorizes; its cookie carries the replacement before the hub ends the stream.
        await vi.advanceTimersByTimeAsync(211_500);
        await settle(w.h);
        expect(w.h.auth.requests).toHaveLength(2);
        const [old, next] = w.whisperStreams();
        expect(old).toBe(stream);
        expect(next!.param("last_event_id")).toBe("w-1");
        stream.emitMessage(typing(2), "w-2");
        next!.emitOpen();
        next!.emitMessage(typing(2), "w-2");
        next!.emitMessage(typing(3), "w-3");
        await settle(w.h);
        expect(stream.closed).toBe(true);
        expect(w.whisperStreams()).toEqual([next]);
        expect(w.log.filter((entry) => entry.includes(":typing:"))).toEqual([1, 2, 3].map((n) => `private-chat.1:typing:{"n":${n}}`));
    });

    it("delivers a whisper to the listeners of its channel only, after the connector's state is settled", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        w.listen("orders.1");
        await settle(w.h);
        const socket = w.h.connector.socketId();
        // A listener that leaves the channel from inside: the listeners after it hear nothing more.
        w.privateChannel("chat.1").listenForWhisper("typing", () => w.h.connector.leave("chat.1"));
        w.privateChannel("chat.1").listenForWhisper("typing", () => w.log.push("after leave"));
        w.whisperStream("private-chat.1").emitMessage(envelope(["private-chat.1"], "client-typing", { name: "Ann" }, "peer.1"), "w-1");
        w.whisperStream("private-orders.1").emitMessage(envelope(["private-orders.1"], "client-typing", { name: "Own" }, socket), "w-2");
        w.whisperStream("private-orders.1").emitMessage(envelope(["private-orders.1"], "App\\Events\\OrderShipped", {}, "peer.1"), "w-3");
        expect(w.log).toEqual(['private-chat.1:typing:{"name":"Ann"}', "after leave"]);
    });
});

describe("whisper(), wired", () => {
    it("POSTs to the hub with the cookie, in order, to the channel's whisper topic; a channel not joined sends nothing", async () => {
        const w = whisperHarness();
        const chat = w.privateChannel("chat.1");
        const lobby = w.h.connector.presenceChannel("lobby");
        chat.whisper("typing", { n: 1 });
        lobby.whisper("typing", { n: 2 });
        chat.whisper("stopped", { n: 3 });
        await settle(w.h);
        expect(w.events()).toEqual([
            `${whisperTopic("private-chat.1")} client-typing`,
            `${whisperTopic("presence-lobby")} client-typing`,
            `${whisperTopic("private-chat.1")} client-stopped`,
        ]);
        expect(w.posts.every((post) => post.url === HUB && post.init.credentials === "include" && post.init.headers === undefined)).toBe(true);
        expect(JSON.parse(w.posts[0]!.body.get("data")!)).toEqual({ channels: ["private-chat.1"], event: "client-typing", payload: { n: 1 }, socket: w.h.connector.socketId() });

        w.h.connector.leave("chat.1");
        chat.whisper("typing", { n: 4 });
        await settle(w.h);
        expect(w.posts).toHaveLength(3);
        // Joined again, the channel is a new object: the old one neither whispers nor listens for it.
        w.h.connector.privateChannel("chat.1");
        chat.whisper("typing", { n: 5 });
        chat.listenForWhisper("typing", () => undefined);
        await settle(w.h);
        expect(w.posts).toHaveLength(3);
        expect(w.whisperStreams()).toEqual([]);
        expect(w.errors).toEqual([]);
    });

    it("throws at once on a public channel", async () => {
        const w = whisperHarness();
        expect(() => w.h.connector.channel("news").whisper("typing", {})).toThrow('Public channel "news" cannot whisper');
        await settle(w.h);
        expect(w.posts).toEqual([]);
    });

    it("with client_events off: whisper_disabled naming the option, no request, and no whisper stream", async () => {
        const w = whisperHarness();
        w.h.auth.handler = (names) => grant(names, { client_events: false });
        w.listen("chat.1");
        w.privateChannel("chat.1").whisper("typing", {});
        await settle(w.h);
        expect(w.posts).toEqual([]);
        expect(w.whisperStreams()).toEqual([]);
        expect(w.log).toEqual(["private-chat.1:!whisper_disabled"]);
        expect(w.errors[0]!.message).toContain("client_events");
    });

    it("after a 401: one re-auth, shared with the connector's own refresh, then one retry", async () => {
        const w = whisperHarness();
        w.privateChannel("chat.1");
        await settle(w.h);
        w.main().emitOpen();
        expect(w.h.auth.requests).toHaveLength(1);
        w.replies.push(401, 200);
        // A channel joined while the first POST is answered: its refresh and the re-auth are one request.
        w.setOnPost(() => {
            w.setOnPost(() => undefined);
            w.privateChannel("orders.1");
        });
        w.privateChannel("chat.1").whisper("typing", {});
        await settle(w.h);
        expect(w.h.auth.requests.map((request) => request.channelNames)).toEqual([["private-chat.1"], ["private-chat.1", "private-orders.1"]]);
        expect(w.events()).toEqual([`${whisperTopic("private-chat.1")} client-typing`, `${whisperTopic("private-chat.1")} client-typing`]);
        expect(w.errors).toEqual([]);
    });

    it("after a 401 and a re-auth that fails: the 401 is reported, without a retry", async () => {
        const w = whisperHarness();
        w.privateChannel("chat.1");
        await settle(w.h);
        w.main().emitOpen();
        w.h.auth.handler = () => ({ status: 500 });
        w.replies.push(401);
        w.privateChannel("chat.1").whisper("typing", {});
        await settle(w.h);
        expect(w.h.auth.requests).toHaveLength(2);
        expect(w.posts).toHaveLength(1);
        expect(w.log).toEqual(["private-chat.1:!auth_failed", "private-chat.1:!whisper_failed"]);
        expect(w.errors[1]!.status).toBe(401);
    });
});

describe("whispers across auth answers and disconnect(), wired", () => {
    it("closes the whisper stream of a channel the next auth denies, and the others stay", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        w.listen("orders.1");
        await settle(w.h);
        const chat = w.whisperStream("private-chat.1");
        w.h.auth.handler = (names) => grant(names, {}, ["private-orders.1"]);
        w.privateChannel("news.1");
        await settle(w.h);
        expect(w.log).toEqual(["private-orders.1:!auth_denied"]);
        expect(w.whisperStreams()).toEqual([chat]);
    });

    it("disconnect() closes every whisper stream and drops whispers not sent yet; connect() reopens the streams", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        await settle(w.h);
        w.whisperStream("private-chat.1").emitMessage(envelope(["private-chat.1"], "client-typing", {}, "peer.1"), "w-1");
        w.h.auth.hold();
        w.privateChannel("orders.1").whisper("typing", {}); // waits for its channel's first auth
        await settle(w.h);
        w.h.connector.disconnect();
        w.h.auth.release();
        await settle(w.h);
        expect(w.whisperStreams()).toEqual([]);
        expect(w.posts).toEqual([]);
        w.h.connector.connect();
        await settle(w.h);
        const reopened = w.whisperStream("private-chat.1");
        expect(reopened.param("last_event_id")).toBeNull(); // disconnect() forgets every cursor
        expect(w.posts).toEqual([]);
        expect(w.errors).toEqual([]);
    });
});

describe("whisper stream failures, wired", () => {
    it("a whisper stream that fails for good reports stream_error and takes the shared backoff re-auth; the main stream stays", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        w.listen("orders.1");
        await settle(w.h);
        const main = w.main();
        main.emitOpen();
        const chat = w.whisperStream("private-chat.1");
        chat.emitOpen();
        chat.emitMessage(envelope(["private-chat.1"], "client-typing", {}, "peer.1"), "w-7");
        chat.emitError(true);
        w.whisperStream("private-orders.1").emitError(true);
        expect(w.log.filter((line) => line.includes("!"))).toEqual(["private-chat.1:!stream_error", "private-orders.1:!stream_error"]);
        expect(w.whisperStreams()).toEqual([]);
        await vi.advanceTimersByTimeAsync(999);
        expect(w.h.auth.requests).toHaveLength(1); // the backoff's first delay is at least 1 s
        await vi.advanceTimersByTimeAsync(1_000);
        await settle(w.h);
        expect(w.h.auth.requests).toHaveLength(2); // one re-auth for both
        expect(w.main()).toBe(main); // healthy: not reopened
        expect(w.whisperStream("private-chat.1").param("last_event_id")).toBe("w-7");
        expect(w.whisperStream("private-orders.1").param("last_event_id")).toBeNull();
        expect(w.h.connector.connectionStatus()).toBe("connected");
    });
});

/** Settle until `done` holds (the diagnostics chunk resolves through the real event loop), at most 50 rounds. */
async function settleUntil(h: ReturnType<typeof createHarness>, done: () => boolean): Promise<void> {
    for (let round = 0; round < 50 && !done(); round++) await settle(h);
}

describe("whisper failures diagnosed, wired (issue 10)", () => {
    it("a whisper refused with 400: whisper_failed, then publish_origin_refused on that channel only; the connection stays", async () => {
        const w = whisperHarness();
        w.privateChannel("chat.1");
        w.privateChannel("orders.1");
        await settle(w.h);
        w.main().emitOpen();
        w.replies.push(400);
        w.privateChannel("chat.1").whisper("typing", {});
        await settleUntil(w.h, () => w.log.length >= 2);
        expect(w.log).toEqual(["private-chat.1:!whisper_failed", "private-chat.1:!publish_origin_refused"]);
        expect(w.errors[1]!.message).toContain("add https://app.test to the hub's publish_origins");
        expect(w.h.auth.probes).toEqual([]); // a 400 says it all
        expect(w.h.connector.connectionStatus()).toBe("connected");
    });

    it("a whisper stream refused for good: stream_error, then the named cause; that stream stays closed, the main stream is untouched", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        w.listen("orders.1");
        await settle(w.h);
        const main = w.main();
        main.emitOpen();
        const orders = w.whisperStream("private-orders.1");
        orders.emitOpen();
        w.h.auth.probeHandler = () => ({ status: 401, headers: new Headers({ "www-authenticate": 'Bearer realm="mercure"' }), text: async () => "" }) as FetchResponseLike;
        w.whisperStream("private-chat.1").emitError(true);
        await settleUntil(w.h, () => w.log.length >= 2);
        expect(w.log).toEqual(["private-chat.1:!stream_error", "private-chat.1:!cookie_missing"]);
        // One probe of the hub (with the stream's one matcher), then the metadata a 401 needs.
        const hubProbes = () => w.h.auth.probes.filter((url) => url.startsWith(HUB + "?"));
        expect(hubProbes()).toHaveLength(1);
        expect(new URL(hubProbes()[0]!).searchParams.getAll("match")).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(2_000); // the shared backoff's re-auth (first delay at most 1.2 s)
        await settle(w.h);
        expect(w.h.auth.requests).toHaveLength(2);
        expect(w.whisperStreams()).toEqual([orders]); // not reopened: retrying cannot fix a missing cookie
        expect(w.main()).toBe(main);
        expect(w.h.connector.connectionStatus()).toBe("connected");
        expect(hubProbes()).toHaveLength(1);
    });

    it("reports no cause after disconnect() during the probe", async () => {
        const w = whisperHarness();
        w.listen("chat.1");
        await settle(w.h);
        w.main().emitOpen();
        let answer: (response: FetchResponseLike) => void = () => undefined;
        w.h.auth.probeHandler = () => new Promise<FetchResponseLike>((resolve) => (answer = resolve));
        w.whisperStream("private-chat.1").emitError(true);
        await settleUntil(w.h, () => w.h.auth.probes.length > 0);
        expect(w.h.auth.probes).toHaveLength(1);
        w.h.connector.disconnect();
        answer({ status: 401, headers: new Headers({ "www-authenticate": 'Bearer realm="mercure"' }), text: async () => "" } as FetchResponseLike);
        await settle(w.h);
        await settle(w.h);
        expect(w.log).toEqual(["private-chat.1:!stream_error"]);
    });
});

describe("the connection budget on an HTTP/1.1 hub (never deadlocks)", () => {
    /** A connector on a plain-http hub with `count` private channels listening for whispers, all open. */
    async function pool(count: number) {
        const w = whisperHarness({ host: HTTP_HUB });
        const names = Array.from({ length: count }, (_, index) => `chat.${index + 1}`);
        for (const name of names) w.listen(name);
        await settle(w.h);
        w.main().emitOpen();
        for (const source of w.whisperStreams()) source.emitOpen();
        return { w, names };
    }

    it("holds at most four whisper streams beside the main stream; a fifth channel is told and waits for one to close", async () => {
        const { w } = await pool(5);
        expect(w.whisperStreams()).toHaveLength(4);
        expect(w.h.EventSource.live()).toHaveLength(5);
        expect(w.log).toEqual(["private-chat.5:!stream_error"]);
        expect(w.errors[0]!.message).toContain("HTTP/1.1");
        w.privateChannel("chat.2").stopListeningForWhisper("typing");
        expect(w.whisperStream("private-chat.5").matches()).toEqual([whisperTopic("private-chat.5")]);
        expect(w.h.EventSource.live()).toHaveLength(5);
    });

    it("an HTTPS hub counts nothing: every channel gets its whisper stream", async () => {
        const w = whisperHarness();
        for (let index = 1; index <= 6; index++) w.listen(`chat.${index}`);
        await settle(w.h);
        expect(w.whisperStreams()).toHaveLength(6);
        expect(w.errors).toEqual([]);
    });

    it("keeps make-before-break while the old stream, its replacement and the whisper streams leave a connection free", async () => {
        const { w } = await pool(3);
        const old = w.main();
        w.privateChannel("orders.1");
        await settle(w.h);
        expect(old.closed).toBe(false);
        expect(w.h.EventSource.live()).toHaveLength(5);
        w.h.EventSource.last().emitOpen();
        expect(w.h.connector.connectionStatus()).toBe("connected");
    });

    it("closes the old stream before opening its replacement when four whisper streams hold their connections", async () => {
        const { w } = await pool(4);
        const old = w.main();
        old.emitMessage(envelope(["private-chat.1"], "tick"), "m-1");
        const statuses: string[] = [];
        w.h.connector.onConnectionChange((status) => statuses.push(status));
        let liveAtOpen = -1;
        const opened = w.h.EventSource.instances.length;
        w.privateChannel("orders.1");
        await settle(w.h);
        const replacement = w.h.EventSource.instances[opened]!;
        liveAtOpen = w.h.EventSource.live().length;
        expect(old.closed).toBe(true);
        expect(liveAtOpen).toBe(5);
        expect(replacement.param("last_event_id")).toBe("m-1");
        replacement.emitOpen();
        expect(statuses).toEqual(["reconnecting", "connected"]);
    });

    it("ends draining streams early when a whisper stream needs their connection", async () => {
        const { w } = await pool(3);
        w.privateChannel("chat.4");
        await settle(w.h);
        w.h.EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(DRAIN_MS); // the stream it replaced is gone
        const old = w.main();
        w.privateChannel("orders.1");
        await settle(w.h);
        w.h.EventSource.last().emitOpen(); // the old stream drains: main, drain and three whisper streams
        expect(old.closed).toBe(false);
        expect(w.h.EventSource.live()).toHaveLength(5);
        w.privateChannel("chat.4").listenForWhisper("typing", () => undefined); // no auth, a fourth whisper stream
        expect(old.closed).toBe(true);
        expect(w.whisperStreams()).toHaveLength(4);
        expect(w.h.EventSource.live()).toHaveLength(5);
    });

    it("falls back to closing every stream and opening one from the cursor when a replacement does not open in time", async () => {
        const { w } = await pool(1);
        const old = w.main();
        const log: string[] = [];
        w.h.connector.privateChannel("chat.1").listen(".tick", (payload: { n: number }) => log.push(`tick ${payload.n}`));
        old.emitMessage(envelope(["private-chat.1"], "tick", { n: 1 }), "m-1");
        w.privateChannel("orders.1");
        await settle(w.h);
        const candidate = w.h.EventSource.last();
        old.emitMessage(envelope(["private-chat.1"], "tick", { n: 2 }), "m-2");
        await vi.advanceTimersByTimeAsync(OPEN_DEADLINE_MS - 1);
        expect([old.closed, candidate.closed]).toEqual([false, false]);
        await vi.advanceTimersByTimeAsync(1);
        expect([old.closed, candidate.closed]).toEqual([true, true]);
        const fallback = w.main();
        expect(fallback.matches()).toEqual(candidate.matches());
        expect(fallback.param("last_event_id")).toBe("m-2");
        expect(w.h.connector.connectionStatus()).toBe("reconnecting");
        fallback.emitOpen();
        fallback.emitMessage(envelope(["private-chat.1"], "tick", { n: 2 }), "m-2"); // replayed: dropped by the ledger
        fallback.emitMessage(envelope(["private-chat.1"], "tick", { n: 3 }), "m-3");
        expect(log).toEqual(["tick 1", "tick 2", "tick 3"]);
        expect(w.h.connector.connectionStatus()).toBe("connected");
        expect(w.whisperStreams()).toHaveLength(1); // whisper streams are not part of the switch
        expect(w.errors).toEqual([]);
    });

    it("reports the connection limit and backs off when the fallback stream does not open in time either", async () => {
        const { w } = await pool(1);
        w.privateChannel("orders.1");
        await settle(w.h);
        await vi.advanceTimersByTimeAsync(OPEN_DEADLINE_MS);
        const fallback = w.main();
        await vi.advanceTimersByTimeAsync(OPEN_DEADLINE_MS);
        expect(fallback.closed).toBe(true);
        expect(w.log).toEqual(["private-chat.1:!stream_error", "private-orders.1:!stream_error"]);
        expect(w.errors[0]!.message).toBe(
            'The hub stream of channel "private-chat.1" did not open within 4 s: the browser is likely out of connections to the hub (6 over HTTP/1.1, for every tab); retrying with backoff. Serve the hub over HTTP/2 to lift the limit.',
        );
        const requests = w.h.auth.requests.length;
        await vi.advanceTimersByTimeAsync(30_000);
        await settle(w.h);
        expect(w.h.auth.requests.length).toBe(requests + 1);
        const retried = w.main();
        retried.emitOpen();
        expect(w.h.connector.connectionStatus()).toBe("connected");
    });
});
