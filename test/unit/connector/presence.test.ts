import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import { MercureEcho } from "../../../src/connector/mercure-echo";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import { LEAVE_GRACE } from "../../../src/presence/presence-sync";
import { DEFAULT_LEAVE_DELAY } from "../../../src/presence/roster";
import { createHarness, envelope, topic, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";
import { FakeAuthServer, grant } from "../../fakes/fake-auth-server";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { FakeSnapshots, presenceTopic, subscriptionEvent, type FakeMember } from "../../fakes/fake-snapshots";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

interface Person {
    id: number;
    name: string;
}

const ROOM = "presence-room.2";
const ROOM_TOPIC = presenceTopic(ROOM);
const SNAPSHOT_URL = "https://app.test/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2";

const me: Person = { id: 1, name: "Me" };
const ann: Person = { id: 2, name: "Ann" };
const bob: Person = { id: 3, name: "Bob" };
const cid: Person = { id: 4, name: "Cid" };

/** Connection `n` of a user (a tab, or one stream of a reopen). */
const conn = (user: Person, n = 1): FakeMember => ({ subscriber: `urn:uuid:${user.name}-${n}`, user });

/**
 * A harness whose fetch also serves a fake subscription API; `options` for the connector, by default `leaveDelay: 0`
 * (these tests assert each `leaving` as it happens).
 */
function presenceHarness(options: MercureConnectorOptions = { leaveDelay: 0 }): Harness & { snapshots: FakeSnapshots } {
    const snapshots = new FakeSnapshots();
    const h: Harness = createHarness({ ...options, fetch: snapshots.fetch(() => h.auth.fetch) });
    return Object.assign(h, { snapshots });
}

/** Join the room, logging here/joining/leaving and errors as lines. */
function joinRoom(h: Harness, name = "room.2") {
    const log: string[] = [];
    const errors: MercureError[] = [];
    const channel = h.connector
        .presenceChannel<Person>(name)
        .here((members) => log.push("here " + members.map((member) => member.name).join(",")))
        .joining((member) => log.push("joining " + member.name))
        .leaving((member) => log.push("leaving " + member.name))
        .error((error: MercureError) => errors.push(error));
    return { channel, log, errors };
}

/** A harness with the room joined, its stream open and seeded with `members`; `options` as {@link presenceHarness}'s. */
async function seededRoomWith(options: MercureConnectorOptions | undefined, ...members: FakeMember[]) {
    const h = presenceHarness(options);
    const room = joinRoom(h);
    await h.flush();
    h.stream().emitOpen();
    h.snapshots.answer(ROOM_TOPIC, members);
    await h.flush();
    return { h, ...room };
}

/** A harness with the room joined, its stream open and seeded with `members`. */
const seededRoom = (...members: FakeMember[]) => seededRoomWith(undefined, ...members);

describe("a presence channel on the connector", () => {
    it("is authorized in the same batch and rides the same stream: one match per channel, one match_urlpattern per presence channel (Appendix A, byte for byte)", async () => {
        const h = presenceHarness();
        h.connector.privateChannel("chat.1");
        h.connector.presenceChannel("room.2");
        await h.flush();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["private-chat.1", "presence-room.2"]]);
        expect(h.stream().url).toBe(
            "https://app.test/.well-known/mercure?match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fprivate-chat.1&match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2&match_urlpattern=%2F.well-known%2Fmercure%2Fsubscriptions%2F%3Amatch_type%2Fhttps%253A%252F%252Flaravel.alt%252Fecho%252Fchannel%252Fpresence-room.2%2F%3Asubscriber",
        );
        expect(h.stream().withCredentials).toBe(true);

        h.connector.presenceChannel("lobby");
        await h.flush();
        const next = h.EventSource.last();
        expect(next.matches()).toEqual([topic("private-chat.1"), topic("presence-room.2"), topic("presence-lobby")]);
        expect(next.patterns()).toEqual(
            ["presence-room.2", "presence-lobby"].map(
                (name) => "/.well-known/mercure/subscriptions/:match_type/" + encodeURIComponent(presenceTopic(name)) + "/:subscriber",
            ),
        );
    });

    it("fetches the snapshot with the cookie once the stream is open, not before", async () => {
        const h = presenceHarness();
        joinRoom(h);
        await h.flush();
        expect(h.snapshots.requests).toEqual([]);
        await vi.advanceTimersByTimeAsync(10_000);
        expect(h.snapshots.requests).toEqual([]);
        h.stream().emitOpen();
        expect(h.snapshots.requests.map((request) => [request.url, request.init.credentials])).toEqual([[SNAPSHOT_URL, "include"]]);
    });

    it("buffers subscription events until the snapshot lands, then calls here() and replays them in order; a late here() fires at once", async () => {
        const h = presenceHarness();
        const { channel, log, errors } = joinRoom(h);
        await h.flush();
        const stream = h.stream();
        stream.emitOpen();
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "e1");
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), false), "e2");
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(cid), true), "e3");
        await h.flush();
        expect(log).toEqual([]);
        h.snapshots.answer(ROOM_TOPIC, [conn(me), conn(ann)]);
        await h.flush();
        expect(log).toEqual(["here Me,Ann", "joining Bob", "leaving Ann", "joining Cid"]);
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), false), "e4");
        expect(log.at(-1)).toBe("leaving Bob");
        const late: string[] = [];
        channel.here((members) => late.push(members.map((member) => member.name).join(",")));
        expect(late).toEqual(["Me,Cid"]);
        expect(errors).toEqual([]);
        expect(h.snapshots.requests).toHaveLength(1);
    });

    it("moves the cursor with subscription events, so the next reopen resumes after them", async () => {
        const { h } = await seededRoom(conn(me));
        const stream = h.stream();
        stream.emitMessage(envelope([ROOM], "ping"), "urn:1");
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), true), "urn:2");
        h.connector.channel("news");
        await h.flush();
        expect(h.EventSource.last().param("last_event_id")).toBe("urn:2");
    });

    it("hides a reopen for an unrelated channel: no second snapshot, no second here(), no joining or leaving for the overlap", async () => {
        const { h, log, errors } = await seededRoom(conn(me), conn(ann));
        let old = h.stream();
        for (let n = 2; n <= 11; n++) {
            if (n % 2 === 0) h.connector.channel("news");
            else h.connector.leave("news");
            await h.flush();
            const next = h.EventSource.last();
            expect(next.patterns()).toHaveLength(1);
            // The hub announces the new connection on both streams before the old one ends.
            const arrival = subscriptionEvent(ROOM_TOPIC, conn(me, n), true);
            old.emitSubscription(arrival, `a${n}`);
            next.emitSubscription(arrival, `a${n}`);
            next.emitOpen();
            await vi.advanceTimersByTimeAsync(1_500); // the old stream drained and closed
            expect(old.closed).toBe(true);
            next.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(me, n - 1), false), `d${n}`);
            old = next;
        }
        await h.flush();
        expect(h.snapshots.requests).toHaveLength(1);
        expect(log).toEqual(["here Me,Ann"]);
        expect(errors).toEqual([]);
        expect(h.connector.presenceChannel<Person>("room.2").roster!.members()).toEqual([me, ann]);
    });

    it("reports a failed snapshot on error() without calling here(), and retries it on the next refresh", async () => {
        const h = presenceHarness();
        const { log, errors } = joinRoom(h);
        await h.flush();
        const stream = h.stream();
        stream.emitOpen();
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "e1");
        h.snapshots.answer(404, "Active subscriptions are disabled on this hub.");
        await h.flush();
        expect(log).toEqual([]);
        expect(errors.map((error) => [error.code, error.channel, error.status])).toEqual([["presence_snapshot_failed", ROOM, 404]]);
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(cid), true), "e2");
        expect(log).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("connected");

        // A refresh that keeps the stream (a channel joined and left in one tick) retries the snapshot.
        h.connector.channel("blip");
        h.connector.leaveChannel("blip");
        await h.flush();
        expect(h.auth.requests).toHaveLength(2);
        expect(h.EventSource.live()).toEqual([stream]);
        expect(h.snapshots.requests.map((request) => request.url)).toEqual([SNAPSHOT_URL, SNAPSHOT_URL]);
        h.snapshots.answer(ROOM_TOPIC, [conn(me), conn(bob), conn(cid)]);
        await h.flush();
        expect(log).toEqual(["here Me,Bob,Cid"]);
        expect(errors).toHaveLength(1);
    });

    it("re-seeds after a terminal stream loss and a reconnect, emitting only the real differences", async () => {
        const { h, log, errors } = await seededRoom(conn(me), conn(ann), conn(bob));
        h.stream().emitError(true);
        await vi.advanceTimersByTimeAsync(2_000); // the backoff (1 s with jitter), the auth, the new stream
        const back = h.stream();
        expect(h.auth.requests).toHaveLength(2);
        expect(h.snapshots.requests).toHaveLength(1);
        back.emitOpen();
        expect(h.snapshots.requests).toHaveLength(2);
        // Everyone reconnected with new connection ids; Bob is gone, Cid came; the hub replays old ends.
        back.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann, 1), false), "old-end");
        h.snapshots.answer(ROOM_TOPIC, [conn(me, 2), conn(ann, 2), conn(cid, 2)]);
        await h.flush();
        expect(log).toEqual(["here Me,Ann,Bob", "joining Cid"]);
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(log).toEqual(["here Me,Ann,Bob", "joining Cid", "leaving Bob"]);
        expect(errors.map((error) => error.code)).toEqual(["stream_error"]);
    });

    it("re-seeds after a transient interruption that the EventSource recovers from by itself", async () => {
        const { h, log } = await seededRoom(conn(me), conn(ann));
        const stream = h.stream();
        stream.emitError(false);
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "lost-in-the-gap");
        stream.emitOpen();
        expect(h.snapshots.requests).toHaveLength(2);
        h.snapshots.answer(ROOM_TOPIC, [conn(me, 2), conn(ann, 2), conn(bob)]);
        await h.flush();
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(log).toEqual(["here Me,Ann", "joining Bob"]);
    });

    it("ignores subscription events from a retired stream", async () => {
        const { h, log } = await seededRoom(conn(me));
        const old = h.stream();
        h.connector.channel("news");
        await h.flush();
        h.EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(old.closed).toBe(true);
        old.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), true), "late");
        expect(log).toEqual(["here Me"]);
        h.connector.channel("more");
        await h.flush();
        expect(h.EventSource.last().param("last_event_id")).toBeNull();
    });

    it("forgets a presence channel the server denies: no pattern, no snapshot", async () => {
        const h = presenceHarness();
        h.auth.handler = (names) => grant(names, {}, [ROOM]);
        const { log, errors } = joinRoom(h);
        h.connector.channel("news");
        await h.flush();
        expect(h.stream().patterns()).toEqual([]);
        h.stream().emitOpen();
        expect(h.snapshots.requests).toEqual([]);
        expect(log).toEqual([]);
        expect(errors.map((error) => error.code)).toEqual(["auth_denied"]);
    });

    it("silences a presence channel a later auth denies, even for events its old stream still delivers", async () => {
        const { h, log, errors } = await seededRoom(conn(me));
        const old = h.stream();
        h.auth.handler = (names) => grant(names, {}, [ROOM]);
        h.connector.channel("news");
        await h.flush();
        expect(errors.map((error) => error.code)).toEqual(["auth_denied"]);
        expect(h.EventSource.last().patterns()).toEqual([]);
        old.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), true), "e1");
        expect(log).toEqual(["here Me"]);
    });

    it("aborts a snapshot on its way at disconnect(), and reports nothing", async () => {
        const h = presenceHarness();
        const { log, errors } = joinRoom(h);
        await h.flush();
        h.stream().emitOpen();
        const [request] = h.snapshots.requests;
        h.connector.disconnect();
        await h.flush();
        expect(request?.init.signal?.aborted).toBe(true);
        expect(log).toEqual([]);
        expect(errors).toEqual([]);
    });

    it("is what MercureEcho.join() and the connector's presenceChannel() return, typed by member", () => {
        const echo = new MercureEcho({ host: "https://app.test/.well-known/mercure", eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch });
        const channel = echo.join<Person>("room.2");
        expect(channel).toBeInstanceOf(MercurePresenceChannel);
        expect(echo.connector.presenceChannel("room.2")).toBe(channel);
        expect(channel.name).toBe(ROOM);
        expectTypeOf(channel).toEqualTypeOf<MercurePresenceChannel<Person>>();
        expectTypeOf(echo.connector.presenceChannel("x")).toEqualTypeOf<MercurePresenceChannel<unknown>>();
        echo.disconnect();
    });

    it("left and joined again in the same tick, on the stream that keeps carrying it: a fresh snapshot, here() on the new channel, then live events (§5.4 step 3, §9 item 23)", async () => {
        const h = presenceHarness();
        const first = joinRoom(h);
        await h.flush();
        const stream = h.stream();
        stream.emitOpen();
        h.snapshots.answer(ROOM_TOPIC, [conn(me), conn(ann)]);
        await h.flush();
        expect(first.log).toEqual(["here Me,Ann"]);

        // A component unmounts and mounts again (a route change, React's StrictMode): leave and join at once.
        h.connector.leave("room.2");
        const second = joinRoom(h);
        await h.flush();
        // The batch is the same, so the open stream stays (no reopen); the new channel must still be seeded.
        expect(h.stream()).toBe(stream);
        expect(h.snapshots.requests).toHaveLength(2);
        h.snapshots.answer(ROOM_TOPIC, [conn(me), conn(ann)]);
        await h.flush();
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "e1");
        await h.flush();
        expect(second.log).toEqual(["here Me,Ann", "joining Bob"]);
        expect(first.log).toEqual(["here Me,Ann"]);
        expect([...first.errors, ...second.errors]).toEqual([]);
    });
});

describe("a presence channel with the default leaveDelay", () => {
    it("hides another user's tab hand-over (last subscription ends, a new one comes 40 ms later), and reports a real leave DEFAULT_LEAVE_DELAY later", async () => {
        const { h, log, errors } = await seededRoomWith({}, conn(me), conn(ann, 1));
        const stream = h.stream();
        // Break before make, as when Ann's leading tab closes and her next tab takes the stream over.
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann, 1), false), "e1");
        await vi.advanceTimersByTimeAsync(40);
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann, 2), true), "e2");
        await vi.advanceTimersByTimeAsync(DEFAULT_LEAVE_DELAY * 2);
        expect(log).toEqual(["here Me,Ann"]);
        expect(h.connector.presenceChannel<Person>("room.2").roster!.members()).toEqual([me, ann]);
        // Ann's last tab closes: leaving once the delay has passed, not before.
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann, 2), false), "e3");
        await vi.advanceTimersByTimeAsync(DEFAULT_LEAVE_DELAY - 1);
        expect(log).toEqual(["here Me,Ann"]);
        await vi.advanceTimersByTimeAsync(1);
        expect(log).toEqual(["here Me,Ann", "leaving Ann"]);
        expect(errors).toEqual([]);
    });
});

describe("presence callbacks that call back into the connector", () => {
    it("a here() callback that disconnects stops the replay, closes everything, and a later connect() re-seeds as a difference", async () => {
        const h = presenceHarness();
        const { channel, log, errors } = joinRoom(h);
        channel.here(() => h.connector.disconnect());
        await h.flush();
        const stream = h.stream();
        stream.emitOpen();
        stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "e1");
        h.snapshots.answer(ROOM_TOPIC, [conn(me), conn(ann)]);
        await h.flush();
        expect(log).toEqual(["here Me,Ann"]);
        expect(h.EventSource.live()).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(1);

        h.connector.connect();
        await h.flush();
        h.stream().emitOpen();
        expect(h.stream().param("last_event_id")).toBeNull();
        h.snapshots.answer(ROOM_TOPIC, [conn(me, 2), conn(ann, 2), conn(bob)]);
        await h.flush();
        expect(log).toEqual(["here Me,Ann", "joining Bob"]);
        expect(errors).toEqual([]);
    });

    it("a joining() callback that leaves the channel silences it at once, even for the rest of that re-seed", async () => {
        const { h, channel, log, errors } = await seededRoom(conn(me));
        channel.joining(() => h.connector.leave("room.2"));
        h.stream().emitError(false);
        h.stream().emitOpen();
        h.snapshots.answer(ROOM_TOPIC, [conn(me, 2), conn(ann), conn(bob)]);
        await h.flush();
        expect(log).toEqual(["here Me", "joining Ann"]);
        expect(h.connector.channels[ROOM]).toBeUndefined();
        await h.flush();
        // The room's stream was replaced by one without it (nothing else is joined: no stream at all).
        expect(h.EventSource.live()).toEqual([]);
        h.EventSource.last().emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(cid), true), "after");
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(log).toEqual(["here Me", "joining Ann"]);
        expect(errors.map((error) => error.code)).toEqual(["stream_error"]);
    });

    it("a leaving() callback that disconnects leaves no cursor behind and throws nothing into the stream", async () => {
        const { h, channel, log } = await seededRoom(conn(me), conn(ann));
        channel.leaving(() => h.connector.disconnect());
        const stream = h.stream();
        expect(() => stream.emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), false), "e9")).not.toThrow();
        expect(log).toEqual(["here Me,Ann", "leaving Ann"]);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        h.connector.connect();
        await h.flush();
        expect(h.stream().param("last_event_id")).toBeNull();
    });

    it("a throwing callback is reported on error() as callback_failed; the other callbacks and the connection carry on", async () => {
        const h = presenceHarness();
        const { channel, log, errors } = joinRoom(h);
        channel.joining(() => {
            throw new Error("render failed");
        });
        await h.flush();
        h.stream().emitOpen();
        h.snapshots.answer(ROOM_TOPIC, [conn(me)]);
        await h.flush();
        h.stream().emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(ann), true), "e1");
        h.stream().emitSubscription(subscriptionEvent(ROOM_TOPIC, conn(bob), true), "e2");
        expect(log).toEqual(["here Me", "joining Ann", "joining Bob"]);
        expect(errors.map((error) => [error.code, error.message])).toEqual([
            ["callback_failed", 'A joining() callback on channel "presence-room.2" threw (render failed); fix the callback, the other callbacks still ran.'],
            ["callback_failed", 'A joining() callback on channel "presence-room.2" threw (render failed); fix the callback, the other callbacks still ran.'],
        ]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });
});
