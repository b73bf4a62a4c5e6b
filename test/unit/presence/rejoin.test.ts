import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureError } from "../../../src/errors";
import { createHarness, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";
import { FakeSnapshots, presenceTopic, subscriptionEvent, type FakeMember } from "../../fakes/fake-snapshots";

// laravel-mercure §5.4 (steps 3 and 5) and §9 items 19 and 23: a presence channel left and joined again is
// seeded again (here() fires for the new channel object), even when the stream that carries it stays.

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

interface Person {
    id: number;
    name: string;
}

const ROOM = "presence-room.2";
const ROOM_TOPIC = presenceTopic(ROOM);
const me: Person = { id: 1, name: "Me" };
const ann: Person = { id: 2, name: "Ann" };
const bob: Person = { id: 3, name: "Bob" };
const conn = (user: Person, n = 1): FakeMember => ({ subscriber: `urn:uuid:${user.name}-${n}`, user });

/** A harness whose fetch also serves a fake subscription API. */
function presenceHarness(): Harness & { snapshots: FakeSnapshots } {
    const snapshots = new FakeSnapshots();
    const h: Harness = createHarness({ fetch: snapshots.fetch(() => h.auth.fetch) });
    return Object.assign(h, { snapshots });
}

/** Join the room, logging here/joining/leaving and errors as lines. */
function joinRoom(h: Harness) {
    const log: string[] = [];
    const errors: MercureError[] = [];
    const channel = h.connector
        .presenceChannel<Person>("room.2")
        .here((members) => log.push("here " + members.map((member) => member.name).join(",")))
        .joining((member) => log.push("joining " + member.name))
        .leaving((member) => log.push("leaving " + member.name))
        .error((error: MercureError) => errors.push(error));
    return { channel, log, errors };
}

describe("a presence channel left and joined again", () => {
    it("in the same tick, on the stream that keeps carrying it: a fresh snapshot, here() on the new channel, then live events", async () => {
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
