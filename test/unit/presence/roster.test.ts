import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRoster, identify, type PresenceEvent } from "../../../src/presence/roster";
import type { Subscription } from "../../../src/presence/subscription-event";

const TOPIC = "https://laravel.alt/echo/channel/presence-room";

/** A user's payload as the newest server sends it. */
const user = (id: string, name = id.toUpperCase()) => ({ user_id: id, user_info: { id, name } });

const join = (subscriber: string, payload: unknown): Subscription => ({ topic: TOPIC, subscriber, active: true, payload });
const leave = (subscriber: string): Subscription => ({ topic: TOPIC, subscriber, active: false, payload: undefined });

/** A roster whose callbacks write one line each to `log`. */
function recorded() {
    const log: string[] = [];
    const name = (member: unknown) => (member as { name?: string } | null)?.name ?? JSON.stringify(member);
    const roster = createRoster<unknown>((kind: PresenceEvent, value: unknown) =>
        log.push(kind === "here" ? "here " + (value as unknown[]).map(name).join(",") : `${kind} ${name(value)}`),
    );
    return { roster, log };
}

describe("roster", () => {
    it("reports nothing once closed, not even the rest of a change a callback closed it during", () => {
        const log: string[] = [];
        const roster = createRoster<{ name: string }>((kind: PresenceEvent, value: unknown) => {
            log.push(`${kind} ${(value as { name?: string }).name ?? ""}`);
            if (kind === "joining") roster.close();
        });
        roster.seed([join("s1", user("ann"))]);
        roster.seed([join("s2", user("ann")), join("s3", user("bob")), join("s4", user("cid"))]);
        roster.apply(join("s5", user("dan")));
        roster.expire(["ann"]);
        expect(log).toEqual(["here ", "joining BOB"]);
    });

    it("has no members before the first seed, then calls here() once with one entry per user in first-seen order", () => {
        const { roster, log } = recorded();
        expect(roster.members()).toBeNull();
        roster.seed([join("s1", user("ann")), join("s2", user("bob")), join("s3", user("ann")), join("s4", user("ann"))]);
        expect(log).toEqual(["here ANN,BOB"]);
        expect(roster.members()).toEqual([user("ann").user_info, user("bob").user_info]);
    });

    it("calls joining on a user's first subscription only and leaving on their last (three tabs)", () => {
        const { roster, log } = recorded();
        roster.seed([]);
        roster.apply(join("t1", user("cid")));
        roster.apply(join("t2", user("cid")));
        roster.apply(join("t3", user("cid")));
        roster.apply(leave("t1"));
        roster.apply(leave("t3"));
        expect(log).toEqual(["here ", "joining CID"]);
        roster.apply(leave("t2"));
        expect(log).toEqual(["here ", "joining CID", "leaving CID"]);
        expect(roster.members()).toEqual([]);
    });

    it("ignores leaves of subscribers never seen and repeated joins of a known subscriber", () => {
        const { roster, log } = recorded();
        roster.seed([join("s1", user("ann"))]);
        roster.apply(leave("ghost"));
        roster.apply(join("s1", user("ann")));
        roster.apply(leave("s1"));
        roster.apply(leave("s1"));
        expect(log).toEqual(["here ANN", "leaving ANN"]);
    });

    it("reports leaving with the info stored when the user joined", () => {
        const { roster, log } = recorded();
        roster.seed([]);
        roster.apply(join("s1", user("ann", "Ann")));
        roster.apply(join("s2", user("ann", "Renamed")));
        roster.apply(leave("s1"));
        roster.apply(leave("s2"));
        expect(log).toEqual(["here ", "joining Ann", "leaving Ann"]);
    });

    it("dedupes older servers' raw payloads by their JSON, whatever they are", () => {
        const { roster, log } = recorded();
        roster.seed([join("s1", { name: "Old" }), join("s2", { name: "Old" }), join("s3", true)]);
        roster.apply(join("s4", true));
        roster.apply(leave("s3"));
        roster.apply(leave("s4"));
        expect(log).toEqual(["here Old,true", "leaving true"]);
        expect(identify({ user_id: 5, user_info: "x" })).toEqual(['payload:{"user_id":5,"user_info":"x"}', { user_id: 5, user_info: "x" }]);
        expect(identify(user("5"))).toEqual(["user:5", user("5").user_info]);
    });

    it("keeps a user whose new subscription appears before the old one ends (a make-before-break reopen)", () => {
        const { roster, log } = recorded();
        roster.seed([join("old", user("ann")), join("b1", user("bob"))]);
        for (let reopen = 1; reopen <= 10; reopen++) {
            roster.apply(join(`ann-${reopen}`, user("ann")));
            roster.apply(leave(reopen === 1 ? "old" : `ann-${reopen - 1}`));
        }
        expect(log).toEqual(["here ANN,BOB"]);
        expect(roster.members()).toEqual([user("ann").user_info, user("bob").user_info]);
    });

    it("re-seeds as a difference: joining for who came, nothing for who stayed, no here(); who went lingers until expired", () => {
        const { roster, log } = recorded();
        roster.seed([join("a1", user("ann")), join("b1", user("bob")), join("c1", user("cid"))]);
        // After an outage every subscriber id changed (new connections); bob is missing and dan came.
        const lingering = roster.seed([join("a2", user("ann")), join("c2", user("cid")), join("c3", user("cid")), join("d2", user("dan"))]);
        expect(log).toEqual(["here ANN,BOB,CID", "joining DAN"]);
        expect(lingering).toEqual(["user:bob"]);
        expect(roster.members()).toEqual(["ann", "cid", "dan", "bob"].map((id) => user(id).user_info));
        roster.expire(lingering);
        expect(log).toEqual(["here ANN,BOB,CID", "joining DAN", "leaving BOB"]);
        expect(roster.members()).toEqual(["ann", "cid", "dan"].map((id) => user(id).user_info));
        // The new state is complete: cid's two tabs are counted, the old ids are forgotten.
        roster.apply(leave("c1"));
        roster.apply(leave("c2"));
        expect(log).toHaveLength(3);
        roster.apply(leave("c3"));
        expect(log[3]).toBe("leaving CID");
    });

    it("keeps a lingering user who reconnects before expiry without any event, and reports their real leave once", () => {
        const { roster, log } = recorded();
        roster.seed([join("a1", user("ann")), join("b1", user("bob"))]);
        const lingering = roster.seed([join("a2", user("ann"))]);
        roster.apply(join("b2", user("bob")));
        roster.expire(lingering);
        expect(log).toEqual(["here ANN,BOB"]);
        roster.apply(leave("b2"));
        expect(log).toEqual(["here ANN,BOB", "leaving BOB"]);
        roster.expire(lingering);
        expect(log).toHaveLength(2);
    });

    it("keeps lingering across a second re-seed that still misses the user, and drops them when it has them back", () => {
        const { roster, log } = recorded();
        roster.seed([join("a1", user("ann")), join("b1", user("bob"))]);
        const first = roster.seed([join("a2", user("ann"))]);
        expect(roster.seed([join("a3", user("ann"))])).toEqual(first);
        expect(roster.seed([join("a4", user("ann")), join("b4", user("bob"))])).toEqual([]);
        roster.expire(first);
        expect(log).toEqual(["here ANN,BOB"]);
    });

    it("re-seeds an identical room without any callback", () => {
        const { roster, log } = recorded();
        const room = [join("a1", user("ann")), join("b1", user("bob"))];
        roster.seed(room);
        roster.seed(room);
        roster.seed([...room].reverse());
        expect(log).toEqual(["here ANN,BOB"]);
    });
});

describe("roster with leaveDelay", () => {
    /** A roster holding leaves back for 3000 ms, logging like {@link recorded}. */
    function delayed() {
        const log: string[] = [];
        const name = (member: unknown) => (member as { name?: string } | null)?.name ?? JSON.stringify(member);
        const roster = createRoster<unknown>(
            (kind: PresenceEvent, value: unknown) => log.push(kind === "here" ? "here " + (value as unknown[]).map(name).join(",") : `${kind} ${name(value)}`),
            3000,
        );
        return { roster, log };
    }

    beforeEach(() => {
        vi.useFakeTimers();
    });
    afterEach(() => {
        vi.useRealTimers();
    });

    it("reports neither leaving nor joining when the same user reconnects within the delay (a page reload)", () => {
        const { roster, log } = delayed();
        roster.seed([join("s1", user("ann")), join("s2", user("bob"))]);
        roster.apply(leave("s1"));
        vi.advanceTimersByTime(2999);
        expect(roster.members()).toEqual([user("ann").user_info, user("bob").user_info]);
        roster.apply(join("s3", user("ann")));
        vi.advanceTimersByTime(10_000);
        expect(log).toEqual(["here ANN,BOB"]);
        expect(roster.members()).toEqual([user("ann").user_info, user("bob").user_info]);
        // The new subscription counts: its end is held back again, then reported once.
        roster.apply(leave("s3"));
        vi.advanceTimersByTime(3000);
        expect(log).toEqual(["here ANN,BOB", "leaving ANN"]);
        expect(roster.members()).toEqual([user("bob").user_info]);
    });

    it("reports leaving once the delay passed without the user coming back, and a later return as joining", () => {
        const { roster, log } = delayed();
        roster.seed([join("s1", user("ann"))]);
        roster.apply(leave("s1"));
        vi.advanceTimersByTime(2999);
        expect(log).toEqual(["here ANN"]);
        vi.advanceTimersByTime(1);
        expect(log).toEqual(["here ANN", "leaving ANN"]);
        expect(roster.members()).toEqual([]);
        roster.apply(join("s2", user("ann")));
        expect(log).toEqual(["here ANN", "leaving ANN", "joining ANN"]);
    });

    it("holds back each user on their own clock, and does not hold joining back", () => {
        const { roster, log } = delayed();
        roster.seed([join("s1", user("ann")), join("s2", user("bob"))]);
        roster.apply(leave("s1"));
        vi.advanceTimersByTime(2000);
        roster.apply(leave("s2"));
        roster.apply(join("s3", user("cid")));
        expect(log).toEqual(["here ANN,BOB", "joining CID"]);
        vi.advanceTimersByTime(1000);
        expect(log).toEqual(["here ANN,BOB", "joining CID", "leaving ANN"]);
        vi.advanceTimersByTime(2000);
        expect(log).toEqual(["here ANN,BOB", "joining CID", "leaving ANN", "leaving BOB"]);
    });

    it("reports nothing after close(), even for a leave held back before it", () => {
        const { roster, log } = delayed();
        roster.seed([join("s1", user("ann"))]);
        roster.apply(leave("s1"));
        roster.close();
        vi.advanceTimersByTime(10_000);
        expect(log).toEqual(["here ANN"]);
        expect(vi.getTimerCount()).toBe(0);
    });

    it("lets a re-seed settle a held-back user: kept when in the snapshot, lingering (expire) when not", () => {
        const { roster, log } = delayed();
        roster.seed([join("s1", user("ann")), join("s2", user("bob"))]);
        roster.apply(leave("s1"));
        roster.apply(leave("s2"));
        const lingering = roster.seed([join("s3", user("ann"))]);
        vi.advanceTimersByTime(10_000);
        expect(log).toEqual(["here ANN,BOB"]);
        expect(lingering).toEqual(["user:bob"]);
        roster.expire(lingering);
        expect(log).toEqual(["here ANN,BOB", "leaving BOB"]);
        expect(roster.members()).toEqual([user("ann").user_info]);
    });
});
