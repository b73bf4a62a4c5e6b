import { afterEach, describe, expect, it, vi } from "vitest";
import type { MercureError } from "../../../src/errors";
import { createPresenceRooms, SEEN_EVENT_IDS, type PresenceRooms } from "../../../src/presence/presence-rooms";
import { LEAVE_GRACE, type PresenceTarget } from "../../../src/presence/presence-sync";
import { createRoster, type PresenceEvent } from "../../../src/presence/roster";
import { fetchSnapshot, type SnapshotResult } from "../../../src/presence/snapshot";
import type { FetchLike } from "../../../src/transport/platform";

const HUB = new URL("https://app.test/.well-known/mercure");
const P = "https://laravel.alt/echo/channel/";
const ROOM = "presence-room";
const TOPIC = P + ROOM;
const SNAPSHOT_URL = "https://app.test/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room";

/** A user's payload as the newest server sends it; the member info is the name. */
const user = (name: string) => ({ user_id: name, user_info: name });

/** The data of a subscription event. */
function event(subscriber: string, active: boolean, name: string | null = subscriber.replace(/\d+$/, ""), overrides: Record<string, unknown> = {}): string {
    return JSON.stringify(
        { type: "subscription", subscriber, match: TOPIC, match_type: "exact", active, ...(name === null ? {} : { payload: user(name) }), ...overrides },
        null,
        2,
    );
}

/** A snapshot result with one member per subscriber id (the user is the id without its digits). */
const snapshot = (...subscribers: string[]): SnapshotResult => ({
    kind: "ok",
    members: subscribers.map((subscriber) => ({ topic: TOPIC, subscriber, active: true, payload: user(subscriber.replace(/\d+$/, "")) })),
});

/** A roster listener writing `here a,b`, `joining c`, `leaving d` lines to `log`. */
const logTo = (log: string[]) => (kind: PresenceEvent, value: unknown) =>
    log.push(kind === "here" ? `here ${(value as string[]).join(",")}` : `${kind} ${String(value)}`);

/** A presence target logging its callbacks and errors. */
function target(name = ROOM) {
    const log: string[] = [];
    const errors: MercureError[] = [];
    const channel: PresenceTarget & { log: string[]; errors: MercureError[] } = {
        name,
        log,
        errors,
        roster: createRoster<string>(logTo(log)),
        reportError: (error) => {
            errors.push(error);
            log.push(`error ${error.code}`);
        },
    };
    return channel;
}

/** Let promise callbacks run, with real or fake timers. */
async function settle(): Promise<void> {
    if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(0);
    else await new Promise((resolve) => setTimeout(resolve, 0));
}

afterEach(() => {
    vi.useRealTimers();
});

/** A snapshot loader whose answers the test releases one by one. */
function loader() {
    const pending: Array<{ url: string; resolve: (result: SnapshotResult) => void }> = [];
    return {
        pending,
        load: (url: string) => new Promise<SnapshotResult>((resolve) => pending.push({ url, resolve })),
        /** Answer the oldest request and let the replay run. */
        async answer(result: SnapshotResult) {
            const next = pending.shift();
            if (next === undefined) throw new Error("no snapshot request is pending");
            next.resolve(result);
            await settle();
        },
    };
}

/** Rooms with one presence channel carried by a stream that opened. */
function openRoom(rooms: PresenceRooms = createPresenceRooms()) {
    const channel = target();
    const snapshots = loader();
    rooms.add(channel);
    rooms.patterns(HUB, ["private-x", ROOM], ["https://laravel.alt/echo/channel/private-x", TOPIC]);
    rooms.streamOpened(["private-x", ROOM], snapshots.load);
    return { rooms, channel, snapshots };
}

describe("presence rooms", () => {
    it("give one match_urlpattern per tracked presence channel, in stream order", () => {
        const rooms = createPresenceRooms();
        rooms.add(target("presence-b"));
        rooms.add(target("presence-a"));
        const names = ["news", "presence-a", "private-x", "presence-b"];
        expect(rooms.patterns(HUB, names, names.map((name) => P + name))).toEqual([
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-a/:subscriber",
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-b/:subscriber",
        ]);
    });

    it("fetch the snapshot when the stream opens, buffer events meanwhile, then call here() and replay them in order", async () => {
        const { rooms, channel, snapshots } = openRoom();
        expect(snapshots.pending.map((request) => request.url)).toEqual([SNAPSHOT_URL]);
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.handleEvent(event("cid1", true), "e2");
        rooms.handleEvent(event("ann1", false), "e3");
        rooms.handleEvent(event("dan1", true), "e4");
        expect(channel.log).toEqual([]);
        await snapshots.answer(snapshot("ann1", "eve1"));
        expect(channel.log).toEqual(["here ann,eve", "joining bob", "joining cid", "leaving ann", "joining dan"]);
        rooms.handleEvent(event("eve1", false), "e5");
        expect(channel.log.at(-1)).toBe("leaving eve");
        expect(channel.errors).toEqual([]);
    });

    it("ignore events before the stream carrying the channel opened, and for other topics, phantoms and non-exact matchers", async () => {
        const rooms = createPresenceRooms();
        const channel = target();
        rooms.add(channel);
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        rooms.handleEvent(event("early1", true), "e0");
        const snapshots = loader();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("ann1"));
        rooms.handleEvent(event("bob1", true, "bob", { match: P + "presence-other" }), "e1");
        rooms.handleEvent(event("bob1", true, null), "e2");
        rooms.handleEvent(event("bob1", true, "bob", { match_type: "urlpattern" }), "e3");
        rooms.handleEvent(event("bob1", true, "bob", { payload: null }), "e4");
        rooms.handleEvent("not json", "e5");
        rooms.handleEvent(event("ghost1", false), "e6");
        expect(channel.log).toEqual(["here ann"]);
        // The phantom did not count: a real join of the same subscriber still fires.
        rooms.handleEvent(event("bob1", true), "e7");
        expect(channel.log).toEqual(["here ann", "joining bob"]);
    });

    it("show one user with three subscriptions as one member, joining once and leaving once", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("ann1"));
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.handleEvent(event("bob2", true), "e2");
        rooms.handleEvent(event("bob3", true), "e3");
        rooms.handleEvent(event("bob2", false), "e4");
        rooms.handleEvent(event("bob1", false), "e5");
        expect(channel.log).toEqual(["here ann", "joining bob"]);
        rooms.handleEvent(event("bob3", false), "e6");
        expect(channel.log).toEqual(["here ann", "joining bob", "leaving bob"]);
    });

    it("report a failed snapshot on error(), never fake an empty room, ignore events, and retry on the next open", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.handleEvent(event("bob1", true), "e1");
        await snapshots.answer({ kind: "failed", reason: "HTTP 404", status: 404 });
        expect(channel.log).toEqual(["error presence_snapshot_failed"]);
        const [error] = channel.errors;
        expect(error?.message).toBe(
            'The presence snapshot of channel "presence-room" failed (HTTP 404): check that the hub enables active subscriptions and the cookie grants them; it is retried with backoff and on the next refresh.',
        );
        expect(error?.channel).toBe(ROOM);
        expect(error?.status).toBe(404);
        rooms.handleEvent(event("cid1", true), "e2");
        expect(channel.log).toEqual(["error presence_snapshot_failed"]);
        // The next refresh (the stream is still open) retries.
        rooms.streamOpened([ROOM], snapshots.load);
        expect(snapshots.pending).toHaveLength(1);
        rooms.handleEvent(event("dan1", true), "e3");
        await snapshots.answer(snapshot("ann1", "bob1", "cid1"));
        expect(channel.log).toEqual(["error presence_snapshot_failed", "here ann,bob,cid", "joining dan"]);
    });

    it("ask a failed snapshot again after 1, 2, 4, 8 and 16 s while the stream serves, reported once; then wait for the next refresh", async () => {
        vi.useFakeTimers();
        const { rooms, channel, snapshots } = openRoom();
        const failed: SnapshotResult = { kind: "failed", reason: "HTTP 503", status: 503 };
        await snapshots.answer(failed);
        for (const delay of [1_000, 2_000, 4_000, 8_000, 16_000]) {
            await vi.advanceTimersByTimeAsync(delay - 1);
            expect(snapshots.pending).toHaveLength(0);
            await vi.advanceTimersByTimeAsync(1);
            expect(snapshots.pending).toHaveLength(1);
            await snapshots.answer(failed);
        }
        await vi.advanceTimersByTimeAsync(300_000);
        expect(snapshots.pending).toHaveLength(0);
        expect(channel.log).toEqual(["error presence_snapshot_failed"]);
        // The next refresh asks again, and a success ends the streak: a later failure is reported again.
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["error presence_snapshot_failed", "here ann"]);
    });

    it("seed when a failed snapshot asked again succeeds (a hub that was down a moment ago)", async () => {
        vi.useFakeTimers();
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer({ kind: "failed", reason: "HTTP 502", status: 502 });
        rooms.handleEvent(event("bob1", true), "e1"); // Out of sync: ignored.
        await vi.advanceTimersByTimeAsync(1_000);
        rooms.handleEvent(event("cid1", true), "e2"); // Seeding: buffered.
        await snapshots.answer(snapshot("ann1", "bob1"));
        expect(channel.log).toEqual(["error presence_snapshot_failed", "here ann,bob", "joining cid"]);
    });

    it("ask nothing again once the stream is lost (it seeds at the next open) or the channel left", async () => {
        vi.useFakeTimers();
        const { rooms, snapshots } = openRoom();
        await snapshots.answer({ kind: "failed", reason: "HTTP 503", status: 503 });
        rooms.streamLost([ROOM]);
        await vi.advanceTimersByTimeAsync(60_000);
        expect(snapshots.pending).toHaveLength(0);
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer({ kind: "failed", reason: "HTTP 503", status: 503 });
        rooms.remove(ROOM);
        await vi.advanceTimersByTimeAsync(60_000);
        expect(snapshots.pending).toHaveLength(0);
    });

    it("report nothing for a 401 or 403 on another connector's cookie: the owner authorizes again, which seeds again", async () => {
        const rooms = createPresenceRooms();
        const channel = target();
        const replaced: Array<number | undefined> = [];
        rooms.add({ ...channel, cookieReplaced: (status) => (replaced.push(status), true) });
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        const snapshots = loader();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer({ kind: "failed", reason: "HTTP 403", status: 403 });
        expect(replaced).toEqual([403]);
        expect(channel.log).toEqual([]);
        rooms.streamOpened([ROOM], snapshots.load); // The owner's refresh keeps the stream and seeds again.
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["here ann"]);
        // Any other failure is reported as before.
        rooms.streamLost([ROOM]);
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer({ kind: "failed", reason: "HTTP 404", status: 404 });
        expect(replaced).toEqual([403]);
        expect(channel.log).toEqual(["here ann", "error presence_snapshot_failed"]);
    });

    it("re-seed a channel the serving stream stopped carrying (its auth failed alone) once a stream carries it again", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("ann1", "bob1"));
        // The stream that serves now carries the other channel only: the room hears no event meanwhile.
        rooms.streamOpened(["private-x"], snapshots.load);
        rooms.handleEvent(event("cid1", true), "e1");
        expect(snapshots.pending).toHaveLength(0);
        rooms.streamOpened(["private-x", ROOM], snapshots.load);
        await snapshots.answer(snapshot("ann1", "bob1", "cid1"));
        expect(channel.log).toEqual(["here ann,bob", "joining cid"]);
    });

    it("treat a malformed snapshot body as a failure, not as an empty room", async () => {
        const rooms = createPresenceRooms();
        const channel = target();
        rooms.add(channel);
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        const fetch: FetchLike = async () => ({ status: 200, text: async () => '{"type":"subscriptions"}' });
        rooms.streamOpened([ROOM], (url) => fetchSnapshot(url, fetch, new AbortController().signal));
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(channel.log).toEqual(["error presence_snapshot_failed"]);
        expect(channel.errors[0]?.message).toContain("(malformed response)");
        expect(channel.roster.members()).toBeNull();
    });

    it("report a loader that throws or rejects as a failed snapshot", async () => {
        const rooms = createPresenceRooms();
        const channel = target();
        rooms.add(channel);
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        rooms.streamOpened([ROOM], () => {
            throw new Error("boom");
        });
        await new Promise((resolve) => setTimeout(resolve, 0));
        rooms.streamLost([ROOM]); // A new streak: its failure is reported too.
        rooms.streamOpened([ROOM], () => Promise.reject(new Error("bang")));
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(channel.errors.map((error) => error.message.match(/failed \((.*?)\)/)?.[1])).toEqual(["boom", "bang"]);
    });

    it("stay quiet on an aborted snapshot (disconnect) and fetch again on the next open", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer({ kind: "aborted" });
        expect(channel.log).toEqual([]);
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["here ann"]);
    });

    it("fetch once per seed: not again while seeding, nor while in sync (a reopen that keeps the room)", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.streamOpened([ROOM], snapshots.load);
        expect(snapshots.pending).toHaveLength(1);
        await snapshots.answer(snapshot("ann1"));
        rooms.patterns(HUB, [ROOM, "news"], [TOPIC, P + "news"]);
        rooms.streamOpened([ROOM, "news"], snapshots.load);
        expect(snapshots.pending).toHaveLength(0);
        expect(channel.log).toEqual(["here ann"]);
    });

    it("do not seed a channel whose stream was never built, nor one the opened stream does not carry", () => {
        const rooms = createPresenceRooms();
        rooms.add(target("presence-a"));
        rooms.add(target("presence-b"));
        rooms.patterns(HUB, ["presence-a"], [P + "presence-a"]);
        const snapshots = loader();
        rooms.streamOpened(["presence-a", "presence-b"], snapshots.load);
        rooms.streamOpened(["news"], snapshots.load);
        expect(snapshots.pending.map((request) => request.url)).toEqual([HUB.origin + HUB.pathname + "/subscriptions/exact/" + encodeURIComponent(P + "presence-a")]);
    });

    it("re-seed after a lost stream as a difference: joining for who came at once, leaving for who went after the grace, nobody else, no here() again", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("me1", "ann1", "bob1", "cid1"));
        rooms.streamLost([ROOM]);
        // Nothing arrives while the stream is down; a stale event from elsewhere is ignored.
        rooms.handleEvent(event("zed1", true), "e1");
        rooms.streamOpened([ROOM], snapshots.load);
        rooms.handleEvent(event("eve1", true), "e2");
        // Every connection is new after the outage: me and ann are back, bob left, cid stayed with two tabs, dan came.
        await snapshots.answer(snapshot("me2", "ann2", "cid2", "cid3", "dan2"));
        expect(channel.log).toEqual(["here me,ann,bob,cid", "joining dan", "joining eve"]);
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE - 1);
        expect(channel.log).toHaveLength(3);
        await vi.advanceTimersByTimeAsync(1);
        expect(channel.log).toEqual(["here me,ann,bob,cid", "joining dan", "joining eve", "leaving bob"]);
    });

    it("stay silent after a hub restart when the others reconnect after this client re-seeded (no storm)", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("me1", "ann1", "bob1", "cid1", "cid2"));
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        // The restarted hub dropped every connection: only this client is back when its snapshot is taken.
        await snapshots.answer(snapshot("me2"));
        // The others come back one by one, some with several tabs; the hub replays the old connections' ends.
        for (const [index, subscriber] of ["ann2", "cid3", "bob2", "cid4"].entries()) {
            rooms.handleEvent(event(subscriber, true), `back-${index}`);
            await vi.advanceTimersByTimeAsync(1_000);
        }
        rooms.handleEvent(event("ann1", false), "old-end");
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(channel.log).toEqual(["here me,ann,bob,cid"]);
        expect(channel.roster.members()).toEqual(["me", "ann", "bob", "cid"]);
    });

    it("cancel the pending leaves when the stream is lost again, and let the next re-seed decide", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("me1", "ann1", "bob1"));
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me2"));
        rooms.streamLost();
        expect(vi.getTimerCount()).toBe(0);
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me3", "ann3"));
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(channel.log).toEqual(["here me,ann,bob", "leaving bob"]);
    });

    it("set no leave timer when a joining() callback of the re-seed drops the stream", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const rooms = createPresenceRooms();
        const log: string[] = [];
        rooms.add({
            name: ROOM,
            reportError: () => log.push("error"),
            roster: createRoster<string>((kind: PresenceEvent, value: unknown) => {
                logTo(log)(kind, value);
                if (kind === "joining") rooms.streamLost();
            }),
        });
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        const snapshots = loader();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me1", "ann1"));
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me2", "bob2"));
        expect(vi.getTimerCount()).toBe(0);
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE);
        expect(log).toEqual(["here me,ann", "joining bob"]);
    });

    it("report leaving once, after leaveDelay, for a user who lingered after a re-seed, came back and left within the delay; and keep them if they come back again (issue 49)", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const rooms = createPresenceRooms();
        const log: string[] = [];
        const roster = createRoster<string>(logTo(log), 5_000);
        rooms.add({ name: ROOM, roster, reportError: () => log.push("error") });
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        const snapshots = loader();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me1", "ann1"));
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me2")); // ann lingers: the expiry is LEAVE_GRACE away
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE - 3_000);
        rooms.handleEvent(event("ann2", true), "e1"); // back
        rooms.handleEvent(event("ann2", false), "e2"); // and gone again: her leave is held 5 s, past the expiry
        await vi.advanceTimersByTimeAsync(3_000); // the expiry: she no longer lingers
        expect(log).toEqual(["here me,ann"]);
        await vi.advanceTimersByTimeAsync(2_000);
        expect(log).toEqual(["here me,ann", "leaving ann"]);
        // Back between the expiry and her held leave: the stale timer must not remove her new entry.
        rooms.handleEvent(event("ann3", true), "e3");
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me4")); // ann lingers again
        await vi.advanceTimersByTimeAsync(LEAVE_GRACE - 2_000);
        rooms.handleEvent(event("ann4", true), "e4");
        rooms.handleEvent(event("ann4", false), "e5"); // held until 3 s after the expiry
        await vi.advanceTimersByTimeAsync(3_000);
        rooms.handleEvent(event("ann5", true), "e6"); // back, after the expiry and within the delay her leave holds
        await vi.advanceTimersByTimeAsync(60_000);
        expect(log).toEqual(["here me,ann", "leaving ann", "joining ann"]);
        expect(roster.members()).toEqual(["me", "ann"]);
    });

    it("take the grace period given to createPresenceRooms", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const { rooms, channel, snapshots } = openRoom(createPresenceRooms(500));
        await snapshots.answer(snapshot("me1", "ann1"));
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        await snapshots.answer(snapshot("me2"));
        await vi.advanceTimersByTimeAsync(500);
        expect(channel.log).toEqual(["here me,ann", "leaving ann"]);
    });

    it("drop a snapshot that lands after the stream was lost, and fetch a fresh one", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.streamLost();
        rooms.streamOpened([ROOM], snapshots.load);
        expect(snapshots.pending).toHaveLength(2);
        await snapshots.answer(snapshot("stale1"));
        expect(channel.log).toEqual([]);
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["here ann"]);
    });

    it("forget a removed channel: its snapshot is dropped and its events ignored; a rejoin seeds afresh with here()", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.remove(ROOM);
        await snapshots.answer(snapshot("ann1"));
        rooms.handleEvent(event("bob1", true), "e1");
        expect(channel.log).toEqual([]);
        const again = openRoom(rooms);
        await again.snapshots.answer(snapshot("ann1", "bob1"));
        expect(again.channel.log).toEqual(["here ann,bob"]);
        expect(channel.log).toEqual([]);
    });

    it("replace a channel added twice under one name", async () => {
        const rooms = createPresenceRooms();
        const { channel, snapshots } = openRoom(rooms);
        const second = openRoom(rooms);
        await snapshots.answer(snapshot("ann1"));
        await second.snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual([]);
        expect(second.channel.log).toEqual(["here ann"]);
    });

    it("apply an event delivered by two streams once (same hub event id)", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.handleEvent(event("bob1", true), "e1");
        await snapshots.answer(snapshot("ann1"));
        // The old stream delivers bob's visit, then the new one delivers the same two events again.
        rooms.handleEvent(event("cid1", true), "e2");
        rooms.handleEvent(event("cid1", false), "e3");
        rooms.handleEvent(event("cid1", true), "e2");
        rooms.handleEvent(event("cid1", false), "e3");
        expect(channel.log).toEqual(["here ann", "joining bob", "joining cid", "leaving cid"]);
        expect(channel.roster.members()).toEqual(["ann", "bob"]);
    });

    it("remember a bounded number of event ids, oldest forgotten first", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot());
        rooms.handleEvent(event("bob1", true), "first");
        rooms.handleEvent(event("bob1", false), "second");
        for (let i = 0; i < SEEN_EVENT_IDS - 1; i++) rooms.handleEvent(event(`x${i}`, false), `filler-${i}`);
        expect(channel.log).toEqual(["here ", "joining bob", "leaving bob"]);
        rooms.handleEvent(event("bob1", true), "second"); // still remembered: dropped
        rooms.handleEvent(event("bob1", true), "first"); // forgotten: applied again
        expect(channel.log).toEqual(["here ", "joining bob", "leaving bob", "joining bob"]);
    });

    it("do not mark an id as seen when the event was ignored, so its copy on a stream that is seeding still counts", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer({ kind: "failed", reason: "HTTP 503", status: 503 });
        rooms.handleEvent(event("bob1", true), "e1"); // out of sync: ignored
        rooms.streamOpened([ROOM], snapshots.load);
        rooms.handleEvent(event("bob1", true), "e1"); // the new stream's copy, while seeding
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["error presence_snapshot_failed", "here ann", "joining bob"]);
    });

    it("apply events without an id (no deduplication possible)", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot());
        rooms.handleEvent(event("bob1", true), "");
        rooms.handleEvent(event("bob1", false), "");
        rooms.handleEvent(event("bob1", true), "");
        expect(channel.log).toEqual(["here ", "joining bob", "leaving bob", "joining bob"]);
    });

    it("hide a make-before-break reopen: the new subscription appears before the old one ends, on both streams", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("me1", "ann1"));
        for (let reopen = 2; reopen <= 11; reopen++) {
            const arrive = event(`me${reopen}`, true);
            const depart = event(`me${reopen - 1}`, false);
            rooms.handleEvent(arrive, `a${reopen}`); // on the old stream
            rooms.handleEvent(arrive, `a${reopen}`); // the same event on the new stream
            rooms.handleEvent(depart, `d${reopen}`); // only the new stream sees the old one end
            rooms.patterns(HUB, [ROOM], [TOPIC]);
            rooms.streamOpened([ROOM], snapshots.load);
        }
        expect(snapshots.pending).toHaveLength(0);
        expect(channel.log).toEqual(["here me,ann"]);
    });

    it("skip an arrival whose departure is buffered too (it came and went around the snapshot, or is replayed history)", async () => {
        const { rooms, channel, snapshots } = openRoom();
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.handleEvent(event("ann1", false), "e2");
        rooms.handleEvent(event("bob1", false), "e3");
        rooms.handleEvent(event("cid1", true), "e4");
        await snapshots.answer(snapshot("ann1", "dan1"));
        expect(channel.log).toEqual(["here ann,dan", "leaving ann", "joining cid"]);
    });

    it("stop replaying when a callback leaves the channel during the seed", async () => {
        const rooms = createPresenceRooms();
        const log: string[] = [];
        rooms.add({
            name: ROOM,
            reportError: () => log.push("error"),
            roster: createRoster<string>((kind: PresenceEvent, value: unknown) => {
                logTo(log)(kind, value);
                if (kind === "here") rooms.remove(ROOM);
            }),
        });
        rooms.patterns(HUB, [ROOM], [TOPIC]);
        const snapshots = loader();
        rooms.streamOpened([ROOM], snapshots.load);
        rooms.handleEvent(event("bob1", true), "e1");
        rooms.handleEvent(event("cid1", true), "e2");
        await snapshots.answer(snapshot("ann1"));
        expect(log).toEqual(["here ann"]);
    });

    it("re-seed when the channel's topic changes (the server's prefix changed)", async () => {
        const { rooms, channel, snapshots } = openRoom();
        await snapshots.answer(snapshot("ann1"));
        const moved = "https://other.alt/echo/channel/" + ROOM;
        expect(rooms.patterns(HUB, [ROOM], [moved])).toHaveLength(1);
        rooms.handleEvent(event("bob1", true), "e1"); // the old topic: no longer this room's
        rooms.streamOpened([ROOM], snapshots.load);
        expect(snapshots.pending[0]?.url).toBe(HUB.href + "/subscriptions/exact/" + encodeURIComponent(moved));
        rooms.handleEvent(event("cid1", true, "cid", { match: moved }), "e2");
        await snapshots.answer(snapshot("ann1"));
        expect(channel.log).toEqual(["here ann", "joining cid"]);
    });
});
