import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createRoster, type PresenceEvent, type Roster } from "../../../src/presence/roster";
import type { Subscription } from "../../../src/presence/subscription-event";

/*
 * Issue 49 point 3: the roster's members and reports, whatever the interleaving of re-seeds, subscription events, the
 * leave timer (`leaveDelay`) and the expiry of users missing from a re-seed. Every sequence of a small alphabet of
 * steps up to a given length is run (exhaustively), then long sequences drawn from fixed seeds (a failure names its
 * steps), each checked after every step against a model of what the roster was told:
 *
 * - `joining` only for a user not reported present, `leaving` only for one reported present and holding no live
 *   subscription (so `leaving` comes once per leave, never for a present member);
 * - `members()` is exactly the users reported present (here / joining, not left since), and holds every user with a
 *   live subscription (nobody vanishes);
 * - once the expiry of the last re-seed ran and every timer fired, `members()` is exactly the users with a live
 *   subscription (nobody lingers for ever).
 */

const TOPIC = "https://laravel.alt/echo/channel/presence-room";
const DELAY = 3_000;

/** Subscriber id → the user it belongs to: ann has two tabs, bob one. */
const USERS: Record<string, string> = { a1: "ann", a2: "ann", b1: "bob" };

/** One step a presence room may take. */
type Step =
    | { kind: "join" | "leave"; subscriber: string }
    | { kind: "seed"; subscribers: readonly string[] }
    | { kind: "tick"; ms: number }
    | { kind: "expire" };

const join = (subscriber: string): Step => ({ kind: "join", subscriber });
const leave = (subscriber: string): Step => ({ kind: "leave", subscriber });
const seed = (...subscribers: string[]): Step => ({ kind: "seed", subscribers });

/** A step as one short word, for a failure's message. */
function word(step: Step): string {
    switch (step.kind) {
        case "join":
        case "leave":
            return `${step.kind}(${step.subscriber})`;
        case "seed":
            return `seed(${step.subscribers.join(",")})`;
        case "tick":
            return `tick(${step.ms})`;
        case "expire":
            return "expire";
    }
}

const subscription = (subscriber: string, active: boolean): Subscription => ({
    topic: TOPIC,
    subscriber,
    active,
    payload: { user_id: USERS[subscriber], user_info: { id: USERS[subscriber] } },
});

/**
 * Run `steps` after a first seed of every subscriber on a roster holding leaves back `leaveDelay` ms, checking the
 * invariants after each; throws an error naming the steps and the broken invariant.
 */
function run(steps: readonly Step[], leaveDelay: number): void {
    /** What the roster was told: live subscriber id → user. */
    let live = new Map<string, string>();
    /** The users reported present, by here / joining, not reported leaving since. */
    const reported = new Set<string>();
    /** The keys the last re-seed returned, which its expiry will be given. */
    let lingering: string[] = [];
    let done = 0;
    const fail = (why: string): never => {
        throw new Error(`${why} after [${["seed(a1,a2,b1)", ...steps.slice(0, done).map(word)].join(" ")}]`);
    };
    const holding = (user: string) => [...live.values()].includes(user);
    const roster: Roster<{ id: string }> = createRoster<{ id: string }>((kind: PresenceEvent, value: unknown) => {
        if (kind === "here") {
            for (const member of value as Array<{ id: string }>) reported.add(member.id);
            return;
        }
        const user = (value as { id: string }).id;
        if (kind === "joining") {
            if (reported.has(user)) fail(`joining ${user}, who is present`);
            reported.add(user);
        } else {
            if (!reported.has(user)) fail(`leaving ${user} twice`);
            if (holding(user)) fail(`leaving ${user}, who holds a live subscription`);
            reported.delete(user);
        }
    }, leaveDelay);
    const check = (): void => {
        const members = new Set((roster.members() ?? []).map((member) => member.id));
        for (const user of members) if (!reported.has(user)) fail(`${user} in members() without being reported`);
        for (const user of reported) if (!members.has(user)) fail(`${user} reported present but missing from members()`);
        for (const user of live.values()) if (!members.has(user)) fail(`${user} holds a subscription but is missing from members()`);
    };

    roster.seed(Object.keys(USERS).map((subscriber) => subscription(subscriber, true)));
    live = new Map(Object.entries(USERS));
    for (const step of steps) {
        done++;
        switch (step.kind) {
            case "join":
                live.set(step.subscriber, USERS[step.subscriber]!);
                roster.apply(subscription(step.subscriber, true));
                break;
            case "leave":
                live.delete(step.subscriber);
                roster.apply(subscription(step.subscriber, false));
                break;
            case "seed":
                live = new Map(step.subscribers.map((subscriber) => [subscriber, USERS[subscriber]!]));
                lingering = roster.seed(step.subscribers.map((subscriber) => subscription(subscriber, true)));
                break;
            case "tick":
                vi.advanceTimersByTime(step.ms);
                break;
            case "expire":
                roster.expire(lingering);
                break;
        }
        check();
    }
    // Quiescence: the last re-seed's expiry and every held leave have run.
    roster.expire(lingering);
    vi.runAllTimers();
    const members = (roster.members() ?? []).map((member) => member.id).sort();
    const holders = [...new Set(live.values())].sort();
    if (members.join() !== holders.join()) fail(`members() is [${members.join()}] once settled, not [${holders.join()}]`);
    roster.close();
}

/** Every sequence of `alphabet`'s steps of exactly `length` steps. */
function* sequences(alphabet: readonly Step[], length: number): Generator<Step[]> {
    if (length === 0) return yield [];
    for (const prefix of sequences(alphabet, length - 1)) for (const step of alphabet) yield [...prefix, step];
}

/** A small seeded generator (mulberry32): the same seed gives the same sequence on every machine. */
function random(seedValue: number): () => number {
    let state = seedValue >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
}

/** A sequence of `length` steps drawn from `seedValue`: every subscriber, any snapshot, ticks of any length. */
function drawn(seedValue: number, length: number): Step[] {
    const next = random(seedValue);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const ids = Object.keys(USERS);
    return Array.from({ length }, (): Step => {
        switch (pick(["join", "leave", "seed", "tick", "expire"] as const)) {
            case "join":
                return join(pick(ids));
            case "leave":
                return leave(pick(ids));
            case "seed":
                return seed(...ids.filter(() => next() < 0.5));
            case "tick":
                return { kind: "tick", ms: pick([1, DELAY / 2, DELAY - 1, DELAY, 2 * DELAY]) };
            case "expire":
                return { kind: "expire" };
        }
    });
}

beforeAll(() => {
    vi.useFakeTimers();
});
afterAll(() => {
    vi.useRealTimers();
});

describe("the roster, over interleavings of re-seeds, subscriptions, the leave timer and the expiry", () => {
    it("reports leaving once for a user who lingered after a re-seed, came back and left within leaveDelay", () => {
        const log: string[] = [];
        const roster = createRoster<{ id: string }>((kind: PresenceEvent, value: unknown) => log.push(kind === "here" ? "here" : `${kind} ${(value as { id: string }).id}`), DELAY);
        roster.seed(["a1", "b1"].map((subscriber) => subscription(subscriber, true)));
        const lingering = roster.seed([subscription("b1", true)]); // ann missing: she lingers
        roster.apply(subscription("a2", true)); // she is back
        roster.apply(subscription("a2", false)); // and leaves again: held back by leaveDelay
        roster.expire(lingering); // the re-seed's expiry: she no longer lingers, it is not hers to report
        expect(log).toEqual(["here"]);
        vi.advanceTimersByTime(DELAY);
        expect(log).toEqual(["here", "leaving ann"]);
        expect(roster.members()).toEqual([{ id: "bob" }]);
        roster.close();
    });

    it("keeps a user who lingered, came back, left and came back again, whatever the timers do afterwards", () => {
        const log: string[] = [];
        const roster = createRoster<{ id: string }>((kind: PresenceEvent, value: unknown) => log.push(kind === "here" ? "here" : `${kind} ${(value as { id: string }).id}`), DELAY);
        roster.seed(["a1", "b1"].map((subscriber) => subscription(subscriber, true)));
        const lingering = roster.seed([subscription("b1", true)]);
        roster.apply(subscription("a2", true));
        roster.apply(subscription("a2", false));
        roster.expire(lingering);
        roster.apply(subscription("a1", true)); // back within the delay
        vi.advanceTimersByTime(10 * DELAY);
        expect(log).toEqual(["here"]);
        expect(roster.members()).toEqual([{ id: "bob" }, { id: "ann" }]);
        roster.close();
    });

    // 4 subscription events, two re-seeds (everyone missing; ann missing), the leave timer, the expiry: 8^6 sequences.
    const alphabet: Step[] = [join("a1"), leave("a1"), join("a2"), leave("a2"), seed(), seed("b1"), { kind: "tick", ms: DELAY }, { kind: "expire" }];

    // Shortest first: a failure names the shortest sequence that breaks an invariant.
    it("holds every invariant over every sequence of up to 6 steps, with leaveDelay", () => {
        let count = 0;
        for (let length = 1; length <= 6; length++) {
            for (const steps of sequences(alphabet, length)) {
                run(steps, DELAY);
                count++;
            }
        }
        expect(count).toBe(8 + 8 ** 2 + 8 ** 3 + 8 ** 4 + 8 ** 5 + 8 ** 6);
    });

    it("holds every invariant over every sequence of up to 5 steps, without leaveDelay", () => {
        for (let length = 1; length <= 5; length++) for (const steps of sequences(alphabet, length)) run(steps, 0);
    });

    it("holds every invariant over 400 sequences of 40 steps drawn from fixed seeds (every subscriber, any snapshot, any tick)", () => {
        for (let seedValue = 1; seedValue <= 400; seedValue++) run(drawn(seedValue, 40), seedValue % 4 === 0 ? 0 : DELAY);
    });
});
