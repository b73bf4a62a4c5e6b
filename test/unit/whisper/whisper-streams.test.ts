import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import { HubStream } from "../../../src/transport/hub-stream";
import { WhisperStreams, type WhisperAuth, type WhisperStreamFactory, type WhisperStreamsHost } from "../../../src/whisper";
import { createFakeEventSource, type FakeEventSource } from "../../fakes/fake-event-source";
import { JWKS, sealByHand } from "../crypto/fixtures";
import { OWN, PEER, PREFIX, reports } from "./helpers";

const HUB = new URL("https://app.test/.well-known/mercure");
const CHAT = "private-chat.1";
const OTHER = "private-other.2";
const LOBBY = "presence-lobby";
const ROOM = "private-encrypted-room.1";
const ORDERS = "private-encrypted-orders.1";

/** The whisper topic of a channel under the default prefix. */
const topicOf = (channel: string) => PREFIX + "whisper/" + encodeURIComponent(channel);

/**
 * Whisper streams on fake EventSources behind real `HubStream`s (as the connector will wire them),
 * real `EncryptedChannels` keyed for ROOM and ORDERS, and a host that records everything.
 */
function setup(maxStreams?: () => number, host: Pick<WhisperStreamsHost, "cookieReplaced" | "refresh"> = {}) {
    const EventSource = createFakeEventSource();
    const errors = reports();
    const delivered: string[] = [];
    const failed = vi.fn();
    const crypto = new EncryptedChannels({ socketId: () => OWN });
    crypto.setKeys([[ROOM, JWKS[ROOM]], [ORDERS, JWKS[ORDERS]]], () => undefined);
    const open: WhisperStreamFactory = (url, channel, topic, handlers) => new HubStream(EventSource, url, [channel], [topic], handlers);
    const streams = new WhisperStreams(
        {
            open: vi.fn(open),
            deliver: (channel, event, payload) => void delivered.push(`${channel}:${event}:${JSON.stringify(payload)}`),
            report: errors.report,
            failed,
            ...host,
        },
        { socketId: () => OWN, crypto, maxStreams },
    );
    const auth = (granted: string[], extra: Partial<WhisperAuth> = {}): WhisperAuth => ({ hub: HUB, topicPrefix: PREFIX, clientEvents: true, granted, ...extra });
    /** The live EventSources subscribed to a channel's whisper topic. */
    const live = (channel: string): FakeEventSource[] => EventSource.live().filter((source) => source.matches()[0] === topicOf(channel));
    /** The one live EventSource of a channel. */
    const source = (channel: string): FakeEventSource => {
        const found = live(channel);
        expect(found, `one live whisper stream for ${channel}`).toHaveLength(1);
        return found[0]!;
    };
    return { streams, EventSource, errors, delivered, failed, crypto, auth, live, source };
}

/** A plaintext whisper envelope as a peer publishes it. */
const whisper = (channels: unknown, event: unknown, payload: unknown = { n: 1 }, socket: unknown = PEER) => ({ channels, event, payload, socket });

/** An encrypted whisper envelope sealed by hand under `k`. */
const sealed = (channel: string, k: string, event: string, socket = PEER) => ({
    channels: [channel],
    data: sealByHand(k, JSON.stringify({ event, payload: { n: event }, socket })),
});

describe("WhisperStreams: one stream per guarded channel with whisper listeners", () => {
    it("opens lazily on the first listener of a granted channel: its whisper topic alone, with credentials", () => {
        const { streams, EventSource, auth, source } = setup();
        streams.sync(auth([CHAT, OTHER]));
        expect(EventSource.instances).toHaveLength(0); // granted, but nobody listens for whispers
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        expect(chat.withCredentials).toBe(true);
        const url = new URL(chat.url);
        expect(url.origin + url.pathname).toBe(HUB.href);
        expect([...url.searchParams.keys()]).toEqual(["match"]); // no urlpattern, no cursor yet
        expect(chat.matches()).toEqual([topicOf(CHAT)]);
        streams.listening(CHAT, true); // a second listener: still one stream
        expect(EventSource.instances).toHaveLength(1);
        expect(streams.size).toBe(1);
    });

    it("waits for the channel's auth: a listener added before it opens the stream at the sync that grants it", () => {
        const { streams, EventSource, auth, source } = setup();
        streams.listening(CHAT, true);
        streams.listening(OTHER, true);
        expect(EventSource.instances).toHaveLength(0);
        streams.sync(auth([CHAT]));
        source(CHAT);
        expect(streams.size).toBe(1);
        streams.sync(auth([CHAT, OTHER]));
        source(OTHER);
        expect(streams.size).toBe(2);
    });

    it("opens nothing for public channels", () => {
        const { streams, EventSource, auth } = setup();
        streams.sync(auth(["news", CHAT]));
        streams.listening("news", true);
        expect(EventSource.instances).toHaveLength(0);
    });

    it("opens one stream each for private, presence and encrypted private channels", () => {
        const { streams, auth, source } = setup();
        streams.sync(auth([CHAT, LOBBY, ROOM]));
        for (const channel of [CHAT, LOBBY, ROOM]) streams.listening(channel, true);
        for (const channel of [CHAT, LOBBY, ROOM]) expect(source(channel).matches()).toEqual([topicOf(channel)]);
        expect(streams.size).toBe(3);
    });

    it("closes a stream when its last whisper listener goes, and forgets its cursor", () => {
        const { streams, auth, source, live } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        source(CHAT).emitOpen();
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "id-1");
        streams.listening(CHAT, false);
        expect(live(CHAT)).toHaveLength(0);
        expect(streams.size).toBe(0);
        streams.listening(CHAT, true);
        expect(source(CHAT).param("last_event_id")).toBeNull();
    });

    it("closes the stream of a channel that is left or evicted (drop), and opens none until a new auth grants it", () => {
        const { streams, auth, source, live } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "id-1");
        streams.drop(CHAT);
        expect(live(CHAT)).toHaveLength(0);
        streams.listening(CHAT, true); // joined again, listening at once: its auth is not back yet
        expect(live(CHAT)).toHaveLength(0);
        streams.sync(auth([CHAT]));
        expect(source(CHAT).param("last_event_id")).toBeNull();
    });

    it("closes the stream of a channel the next auth denied, and forgets its cursor", () => {
        const { streams, auth, source, live } = setup();
        streams.sync(auth([CHAT, OTHER]));
        streams.listening(CHAT, true);
        streams.listening(OTHER, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "id-1");
        const other = source(OTHER);
        streams.sync(auth([OTHER]));
        expect(live(CHAT)).toHaveLength(0);
        expect(source(OTHER)).toBe(other);
        streams.sync(auth([CHAT, OTHER]));
        expect(source(CHAT).param("last_event_id")).toBeNull();
    });

    it("closes every stream and forgets every cursor when client_events turns off; reopens afresh when it is back", () => {
        const { streams, auth, source, EventSource } = setup();
        streams.sync(auth([CHAT, OTHER]));
        streams.listening(CHAT, true);
        streams.listening(OTHER, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "c-1");
        source(OTHER).emitMessage(whisper([OTHER], "client-a"), "o-1");
        streams.sync(auth([CHAT, OTHER], { clientEvents: false }));
        expect(EventSource.live()).toHaveLength(0);
        expect(streams.size).toBe(0);
        streams.sync(auth([CHAT, OTHER]));
        expect(source(CHAT).param("last_event_id")).toBeNull();
        expect(source(OTHER).param("last_event_id")).toBeNull();
    });

    it("does not reopen a healthy stream when unrelated channels change", () => {
        const { streams, auth, source, EventSource } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        chat.emitOpen();
        streams.sync(auth([CHAT, OTHER, "news"])); // joins
        streams.listening(OTHER, true);
        streams.sync(auth([CHAT, "news"])); // a leave
        streams.drop(OTHER);
        streams.sync(auth([CHAT])); // a cookie renewal
        expect(source(CHAT)).toBe(chat);
        expect(chat.closed).toBe(false);
        expect(EventSource.instances.filter((instance) => instance.matches()[0] === topicOf(CHAT))).toHaveLength(1);
    });

    it("reopens with its cursor when what it opens through changed (its tab's streams moved to the tabs' engine), and only then", () => {
        const { streams, auth, source } = setup();
        const own = {};
        const engine = {};
        streams.sync(auth([CHAT], { via: own }));
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        chat.emitMessage(whisper([CHAT], "client-a"), "id-7");
        streams.sync(auth([CHAT], { via: own }));
        expect(source(CHAT)).toBe(chat);
        streams.sync(auth([CHAT], { via: engine }));
        expect(chat.closed).toBe(true);
        expect(source(CHAT).param("last_event_id")).toBe("id-7");
    });

    it("reopens with its cursor when the hub or the topic prefix changed", () => {
        const { streams, auth, source, EventSource } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        chat.emitMessage(whisper([CHAT], "client-a"), "id-7");
        streams.sync(auth([CHAT], { topicPrefix: "https://example.com/" }));
        expect(chat.closed).toBe(true);
        const [reopened, ...more] = EventSource.live();
        expect(more).toEqual([]);
        expect(reopened!.matches()).toEqual(["https://example.com/whisper/private-chat.1"]);
        expect(reopened!.param("last_event_id")).toBe("id-7");
        streams.sync(auth([CHAT], { topicPrefix: "https://example.com/", hub: new URL("https://hub.app.test/.well-known/mercure") }));
        expect(EventSource.last().url.startsWith("https://hub.app.test/.well-known/mercure?match=")).toBe(true);
        expect(EventSource.live()).toEqual([EventSource.last()]);
    });

    it("closes everything and forgets every cursor on close() (disconnect), keeping the listeners for the next sync", () => {
        const { streams, auth, source, EventSource } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "id-1");
        streams.close();
        expect(EventSource.live()).toHaveLength(0);
        expect(streams.size).toBe(0);
        streams.listening(OTHER, true); // nothing opens before the next auth
        expect(EventSource.live()).toHaveLength(0);
        streams.sync(auth([CHAT, OTHER]));
        expect(source(CHAT).param("last_event_id")).toBeNull();
        source(OTHER);
    });
});

describe("WhisperStreams: a cap on open streams (HTTP/1.1 connections)", () => {
    it("opens at most maxStreams streams; the next channel is told once and gets the first stream that closes", () => {
        let max = 2;
        const { streams, auth, live, source, errors } = setup(() => max);
        streams.sync(auth([CHAT, OTHER, LOBBY, ROOM]));
        for (const channel of [CHAT, OTHER, LOBBY, ROOM]) streams.listening(channel, true);
        expect(streams.size).toBe(2);
        expect([live(CHAT), live(OTHER), live(LOBBY), live(ROOM)].map((found) => found.length)).toEqual([1, 1, 0, 0]);
        expect(errors.codes()).toEqual([`${LOBBY}:stream_error`, `${ROOM}:stream_error`]);
        expect(errors.list[0]!.error.message).toBe(
            `Channel "${LOBBY}" receives no whispers until another channel stops listening for them: the page holds the most whisper streams an HTTP/1.1 hub leaves room for (browsers open 6 connections per host); serve the hub over HTTPS (HTTP/2) to lift the limit.`,
        );

        streams.sync(auth([CHAT, OTHER, LOBBY, ROOM])); // still waiting: not reported again
        expect(errors.list).toHaveLength(2);
        streams.listening(OTHER, false); // its connection goes to the first channel waiting
        source(LOBBY);
        expect(live(ROOM)).toHaveLength(0);
        streams.drop(CHAT); // left: the next one
        source(ROOM);
        expect(streams.size).toBe(2);

        max = 3;
        streams.listening(CHAT, true); // not joined any more (dropped): nothing opens for it
        expect(streams.size).toBe(2);
        expect(errors.list).toHaveLength(2);
    });
});

describe("WhisperStreams: failures and cursors", () => {
    it("asks the connector for one shared re-auth however many streams fail, then reopens each with its own cursor", () => {
        const { streams, auth, source, failed, errors } = setup();
        streams.sync(auth([CHAT, OTHER, LOBBY]));
        for (const channel of [CHAT, OTHER, LOBBY]) streams.listening(channel, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "c-1");
        source(OTHER).emitMessage(whisper([OTHER], "client-a"), "o-1");
        source(OTHER).emitMessage(whisper([CHAT], "client-forged"), "o-2"); // dropped, but the cursor moves
        const lobby = source(LOBBY);
        source(CHAT).emitError(true);
        source(OTHER).emitError(true);
        expect(failed).toHaveBeenCalledTimes(1);
        expect(errors.codes()).toEqual([`${CHAT}:stream_error`, `${OTHER}:stream_error`]);
        expect(errors.list[0]!.error.message).toContain(`"${CHAT}"`);
        expect(streams.size).toBe(1);

        streams.sync(auth([CHAT, OTHER, LOBBY])); // the re-auth succeeded: resume
        expect(source(CHAT).param("last_event_id")).toBe("c-1");
        expect(source(OTHER).param("last_event_id")).toBe("o-2");
        expect(source(LOBBY)).toBe(lobby); // healthy: untouched

        source(LOBBY).emitError(true); // a later failure asks again
        expect(failed).toHaveBeenCalledTimes(2);
    });

    it("lets a stream that errs transiently reconnect by itself: no report, no re-auth, not reopened", () => {
        const { streams, auth, source, failed, errors, EventSource } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        chat.emitError(false);
        streams.sync(auth([CHAT]));
        expect(source(CHAT)).toBe(chat);
        expect(EventSource.instances).toHaveLength(1);
        expect(failed).not.toHaveBeenCalled();
        expect(errors.list).toEqual([]);
    });

    it("ignores a stream that was replaced or closed", async () => {
        const { streams, auth, source, delivered, crypto } = setup();
        streams.sync(auth([CHAT, ROOM]));
        streams.listening(CHAT, true);
        streams.listening(ROOM, true);
        const chat = source(CHAT);
        const onmessage = chat.onmessage;
        streams.listening(CHAT, false);
        onmessage?.(new MessageEvent("message", { data: JSON.stringify(whisper([CHAT], "client-late")) }));
        // A sealed whisper still decrypting when its stream closes is not delivered either.
        source(ROOM).emitMessage(sealed(ROOM, JWKS[ROOM].k, "client-late"), "r-1");
        streams.listening(ROOM, false);
        await crypto.settled();
        expect(delivered).toEqual([]);
    });
});

describe("WhisperStreams: what a whisper stream accepts (laravel-mercure §7.3)", () => {
    it("delivers only client events addressed to exactly [this channel] from other sockets", () => {
        const { streams, auth, source, delivered } = setup();
        streams.sync(auth([CHAT, OTHER]));
        streams.listening(CHAT, true);
        const chat = source(CHAT);
        const messages: unknown[] = [
            whisper([OTHER], "client-typing"), // another channel's name
            whisper([CHAT, OTHER], "client-typing"), // two channels
            whisper([OTHER, CHAT], "client-typing"),
            whisper([CHAT, 1], "client-typing"),
            whisper(CHAT, "client-typing"), // not an array
            whisper([], "client-typing"),
            whisper(undefined, "client-typing"),
            whisper([CHAT], "App\\Events\\OrderShipped"), // a server event name
            whisper([CHAT], "typing"), // not a client event
            whisper([CHAT], "Client-typing"),
            whisper([CHAT], 7),
            whisper([CHAT], "client-typing", {}, OWN), // our own
            { channels: [CHAT], data: "a.b.c.d.e" }, // ciphertext on a plain channel
            "not json",
            "null",
            [CHAT],
            whisper([CHAT], "client-typing", { name: "Ann" }),
            whisper([CHAT], "client-moved", [1], null),
        ];
        messages.forEach((message, index) => chat.emitMessage(message, `id-${index}`));
        expect(delivered).toEqual([`${CHAT}:client-typing:{"name":"Ann"}`, `${CHAT}:client-moved:[1]`]);
    });

    it("on an encrypted channel delivers only client events that decrypt under its key, in order; reports a wrong key", async () => {
        const { streams, auth, source, delivered, errors, crypto } = setup();
        streams.sync(auth([ROOM, ORDERS]));
        streams.listening(ROOM, true);
        const room = source(ROOM);
        const K = JWKS[ROOM].k;
        const messages: unknown[] = [
            sealed(ROOM, K, "client-first"),
            whisper([ROOM], "client-plain"), // plaintext on an encrypted channel: dropped silently
            sealed(ROOM, JWKS[ORDERS].k, "client-forged"), // another channel's key: decrypt_failed
            sealed(ORDERS, JWKS[ORDERS].k, "client-other"), // another channel's name
            sealed(ROOM, K, "App\\Events\\OrderShipped"), // a server event name inside: dropped silently
            sealed(ROOM, K, "client-own", OWN), // our own: dropped
            { channels: [ROOM, ORDERS], data: sealByHand(K, '{"event":"client-two"}') },
            sealed(ROOM, K, "client-second"),
        ];
        messages.forEach((message, index) => room.emitMessage(message, `r-${index}`));
        await crypto.settled();
        expect(delivered).toEqual([`${ROOM}:client-first:{"n":"client-first"}`, `${ROOM}:client-second:{"n":"client-second"}`]);
        expect(errors.codes()).toEqual([`${ROOM}:decrypt_failed`]);
    });

    it("moves the stream's cursor with every message, even a dropped one", () => {
        const { streams, auth, source } = setup();
        streams.sync(auth([CHAT]));
        streams.listening(CHAT, true);
        source(CHAT).emitMessage(whisper([CHAT], "client-a"), "id-1");
        source(CHAT).emitMessage("not json", "id-2");
        source(CHAT).emitMessage(whisper([CHAT], "client-b")); // no id: the cursor stays
        source(CHAT).emitError(true);
        streams.sync(auth([CHAT]));
        expect(source(CHAT).param("last_event_id")).toBe("id-2");
    });
});

describe("WhisperStreams: renewed make-before-break before the hub ends a stream at its cookie's expiry", () => {
    // Fake timers and a clock from 0.
    beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"], now: 0 }));
    afterEach(() => vi.useRealTimers());

    it("opens a replacement from the cursor at the renewal point of the stream's cookie, on the newer cookie; each whisper once", () => {
        const { streams, auth, live, source, delivered, failed, errors } = setup();
        streams.sync(auth([CHAT], { renewAt: 230_000 }));
        streams.listening(CHAT, true);
        const first = source(CHAT);
        first.emitOpen();
        first.emitMessage(whisper([CHAT], "client-a"), "id-1");
        vi.advanceTimersByTime(100_000);
        streams.sync(auth([CHAT, OTHER], { renewAt: 330_000 })); // a join: a newer cookie, the stream's is still good
        expect(live(CHAT)).toEqual([first]);
        vi.advanceTimersByTime(129_999);
        expect(live(CHAT)).toEqual([first]);
        vi.advanceTimersByTime(1); // 230 s: the stream's cookie is due; the join's cookie carries the replacement
        const [old, next] = live(CHAT);
        expect(old).toBe(first);
        expect(next!.param("last_event_id")).toBe("id-1");
        expect(streams.size).toBe(2);
        // Before the replacement opens, the old stream delivers; the replacement replays it from the cursor.
        first.emitMessage(whisper([CHAT], "client-b"), "id-2");
        next!.emitOpen();
        expect(first.closed).toBe(true);
        next!.emitMessage(whisper([CHAT], "client-b"), "id-2");
        next!.emitMessage(whisper([CHAT], "client-c"), "id-3");
        expect(delivered.map((entry) => entry.split(":")[1])).toEqual(["client-a", "client-b", "client-c"]);
        expect(streams.size).toBe(1);
        expect(failed).not.toHaveBeenCalled();
        expect(errors.list).toEqual([]);
        // The replacement opened on the join's cookie: it is renewed at that cookie's renewal point, by the renewal's sync.
        vi.advanceTimersByTime(100_000);
        streams.sync(auth([CHAT, OTHER], { renewAt: 560_000 }));
        expect(live(CHAT)).toHaveLength(2);
        expect(live(CHAT)[1]!.param("last_event_id")).toBe("id-3");
    });

    it("authorizes again instead of renewing on the cookie another connector of the browser replaced (tabs alone), and renews on the answer (seed 13141)", () => {
        let replaced = true;
        const refresh = vi.fn(() => true);
        const { streams, auth, live, source, failed } = setup(undefined, { cookieReplaced: () => replaced, refresh });
        streams.sync(auth([CHAT], { renewAt: 1_000 }));
        streams.listening(CHAT, true);
        const first = source(CHAT);
        first.emitOpen();
        vi.advanceTimersByTime(1_000);
        streams.sync(auth([CHAT], { renewAt: 2_000 })); // due now, but the browser's cookie is another tab's
        expect(live(CHAT)).toEqual([first]);
        expect(refresh).toHaveBeenCalledTimes(1);
        replaced = false;
        streams.sync(auth([CHAT], { renewAt: 3_000 })); // the refresh's answer: the cookie is this connector's again
        expect(live(CHAT)).toHaveLength(2);
        expect([refresh.mock.calls.length, failed.mock.calls.length]).toEqual([1, 0]);
    });

    it("renews nothing without a newer cookie, nor a stream opened on the latest one", () => {
        const { streams, auth, live, source } = setup();
        streams.sync(auth([CHAT], { renewAt: 1_000 }));
        streams.listening(CHAT, true);
        source(CHAT).emitOpen();
        vi.advanceTimersByTime(5_000); // the renewal is the connector's: its auth brings the newer cookie
        expect(live(CHAT)).toHaveLength(1);
        streams.sync(auth([CHAT], { renewAt: 1_000 })); // the same cookie's answer again
        expect(live(CHAT)).toHaveLength(1);
    });

    it("drops a replacement the hub refuses before it opened: the stream serves on, nothing is reported", () => {
        const { streams, auth, live, source, delivered, failed, errors } = setup();
        streams.sync(auth([CHAT], { renewAt: 1_000 }));
        streams.listening(CHAT, true);
        const first = source(CHAT);
        first.emitOpen();
        vi.advanceTimersByTime(1_000);
        streams.sync(auth([CHAT], { renewAt: 2_000 }));
        const next = live(CHAT)[1]!;
        next.emitError(true);
        expect(live(CHAT)).toEqual([first]);
        first.emitMessage(whisper([CHAT], "client-a"), "id-1");
        expect(delivered).toHaveLength(1);
        expect(failed).not.toHaveBeenCalled();
        expect(errors.list).toEqual([]);
        expect(streams.size).toBe(1);
    });

    it("opens no replacement past maxStreams (HTTP/1.1): the hub's end and the browser's reconnect it is", () => {
        const { streams, auth, live, source } = setup(() => 1);
        streams.sync(auth([CHAT], { renewAt: 1_000 }));
        streams.listening(CHAT, true);
        source(CHAT).emitOpen();
        vi.advanceTimersByTime(1_000);
        streams.sync(auth([CHAT], { renewAt: 2_000 }));
        expect(live(CHAT)).toHaveLength(1);
    });

    it("closes the replacement with the stream when the channel is left", () => {
        const { streams, auth, EventSource } = setup();
        streams.sync(auth([CHAT], { renewAt: 1_000 }));
        streams.listening(CHAT, true);
        vi.advanceTimersByTime(1_000);
        streams.sync(auth([CHAT], { renewAt: 2_000 }));
        expect(EventSource.live()).toHaveLength(2);
        streams.drop(CHAT);
        expect(EventSource.live()).toHaveLength(0);
        expect(streams.size).toBe(0);
    });
});
