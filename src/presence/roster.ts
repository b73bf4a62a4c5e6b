import { isRecord } from "../json";
import { setClampedTimeout } from "../timers";
import type { MercurePresenceChannel } from "./mercure-presence-channel";
import type { Subscription } from "./subscription-event";

/** The member changes a roster reports, named as the presence channel methods that listen to them. */
export type PresenceEvent = "here" | "joining" | "leaving";

/**
 * Where a {@link Roster} reports member changes: `here` with every member (once per user, in first-seen
 * order) on the first seed, `joining` on a user's first subscription, `leaving` when their last one ended.
 */
export interface RosterListener<TMember> {
    (kind: "here", members: TMember[]): void;
    (kind: "joining" | "leaving", member: TMember): void;
}

/**
 * The members of one presence channel, one per user however many subscriptions (tabs, reopens) they hold.
 */
export interface Roster<TMember> {
    /** The current members in first-seen order, or `null` before the first seed. */
    members(): TMember[] | null;
    /**
     * Replace the state with a snapshot's members. The first seed calls `here(members)`; a later one
     * (after a reconnect) calls `joining` for the users who came meanwhile and keeps the users missing
     * from the snapshot as lingering members (no subscription, no event yet): their keys are returned,
     * for {@link Roster.expire} once they had time to reconnect too.
     */
    seed(members: readonly Subscription[]): string[];
    /**
     * Report `leaving` for each of `keys` still lingering (neither back since the re-seed nor seen by a later one), and
     * drop them; a user who came back is no concern of the expiry any more, even once they left again (their leave is
     * held back by `leaveDelay` like any other).
     */
    expire(keys: readonly string[]): void;
    /** Apply one live subscription event. */
    apply(event: Subscription): void;
    /** Report nothing more, not even the rest of a change being reported (the channel was left); cancel held leaves. */
    close(): void;
}

/**
 * Default `leaveDelay` (ms): long enough that a tab hand-over (the leading tab closes, reloads or freezes; its leave
 * and the next leader's join came at most 170 ms apart in 22 hand-overs in Chromium on both hubs) and the
 * unresponsive-leader path (a follower takes the lead after the 3 s ping timeout, then authorizes and subscribes)
 * are not reported as the user leaving and joining again; a user who really left is reported this much later.
 */
export const DEFAULT_LEAVE_DELAY = 5_000;

/**
 * Where a member stands. `leaving` is reported exactly once, on the one way out of the roster ({@link createRoster}'s
 * `depart`), and only from `held` (its timer) or `lingering` (`expire()`): never for a `present` member.
 *
 * - `present`: holds live subscriptions (`count` > 0).
 * - `held`: its last subscription ended; its `leave` timer (the `leaveDelay`) is pending, and a subscription of the
 *   user makes it `present` again with no report.
 * - `lingering`: missing from a re-seed's snapshot; `expire()` (the caller's grace) reports it, and a subscription of
 *   the user makes it `present` again with no report. A user who comes back and ends their last subscription again is
 *   `held`, no longer `lingering`: the expiry does not concern it any more.
 */
type MemberState = "present" | "held" | "lingering";

/** One member: its info, its state, and how many live subscriptions it holds (0 unless `present`). */
interface Member {
    info: unknown;
    state: MemberState;
    count: number;
    /** The pending `leaving` report while `held`. */
    leave?: ReturnType<typeof setTimeout>;
}

/**
 * Create an empty roster reporting to `emit`. `leaveDelay` (ms, default 0 here: the presence channel passes the
 * connector's option, {@link DEFAULT_LEAVE_DELAY} when unset): how long `leaving` is held back after a user's last
 * subscription ends; a subscription of the same user within it (a page reload, a tab handing the stream over)
 * cancels it, and neither `leaving` nor `joining` is reported. Meanwhile the user stays in `members()`.
 */
export function createRoster<TMember>(emit: RosterListener<TMember>, leaveDelay = 0): Roster<TMember> {
    /** Subscriber id → member key; the subscriptions counted in `members`. */
    let subscribers = new Map<string, string>();
    /** Member key → member; insertion order is first-seen order. */
    let members = new Map<string, Member>();
    /** Whether a snapshot seeded the roster (and `here()` was called). */
    let seeded = false;
    /** Set by `close()`: nothing is reported any more. */
    let closed = false;

    /** Report one change to `emit`, unless closed (a callback may have left the channel meanwhile). */
    const report = (kind: PresenceEvent, value: unknown): void => {
        if (!closed) (emit as (kind: PresenceEvent, value: unknown) => void)(kind, value);
    };

    /**
     * The one way out: drop `member` and report `leaving`, if it is still the member of record for `key` and still in
     * the state `from` (a stale timer or expiry, whose member came back or was replaced since, does nothing).
     */
    const depart = (key: string, member: Member, from: MemberState): void => {
        if (members.get(key) !== member || member.state !== from) return;
        members.delete(key);
        report("leaving", member.info);
    };

    /** Count `subscriber` for its user; returns the member when this is the user's first subscription. */
    const add = (subscriber: string, payload: unknown): Member | null => {
        if (subscribers.has(subscriber)) return null;
        const [key, info] = identify(payload);
        subscribers.set(subscriber, key);
        const member = members.get(key);
        if (member !== undefined) {
            // A user back (held or lingering): present again, and their leave is no news any more.
            clearTimeout(member.leave);
            member.state = "present";
            member.count++;
            return null;
        }
        const added: Member = { info, state: "present", count: 1 };
        members.set(key, added);
        return added;
    };

    /** Cancel every held-back leave (a re-seed settles those members; `close()` reports nothing more). */
    const cancelLeaves = (): void => {
        for (const member of members.values()) clearTimeout(member.leave);
    };

    /** The current members' infos, in order. */
    const list = (): TMember[] => [...members.values()].map((member) => member.info as TMember);

    return {
        members: () => (seeded ? list() : null),
        seed(snapshot) {
            const before = members;
            // Held-back leaves end here: a user in the snapshot stays, one missing lingers like the others.
            cancelLeaves();
            const wasSeeded = seeded;
            subscribers = new Map();
            members = new Map();
            for (const { subscriber, payload } of snapshot) add(subscriber, payload);
            seeded = true;
            const lingering: string[] = [];
            if (!wasSeeded) {
                report("here", list());
                return lingering;
            }
            // A re-seed reports the difference only: nobody who stayed appears to leave and rejoin. Users
            // missing from the snapshot may just be reconnecting too (everyone does after a hub restart):
            // they linger, and leave only if they are still missing later.
            const after = members;
            const joined = [...after].filter(([key]) => !before.has(key));
            for (const [key, member] of before) {
                if (after.has(key)) continue;
                after.set(key, { info: member.info, state: "lingering", count: 0 });
                lingering.push(key);
            }
            for (const [, member] of joined) report("joining", member.info);
            return lingering;
        },
        expire(keys) {
            for (const key of keys) {
                const member = members.get(key);
                if (member !== undefined) depart(key, member, "lingering");
            }
        },
        close() {
            closed = true;
            cancelLeaves();
        },
        apply({ subscriber, active, payload }) {
            // [spec] laravel-mercure §5.5: joining on a user's first subscription only (a lingering or held user
            // coming back is no news).
            if (active) {
                const joined = add(subscriber, payload);
                if (joined !== null) report("joining", joined.info);
                return;
            }
            // [spec] §5.5: a leave of a subscriber never seen (replayed, phantom) is ignored.
            const key = subscribers.get(subscriber);
            if (key === undefined) return;
            subscribers.delete(subscriber);
            const member = members.get(key);
            if (member === undefined || --member.count !== 0) return;
            // [spec] §5.5: leaving, with the stored info, on the user's last subscription, held back by leaveDelay.
            member.state = "held";
            if (leaveDelay > 0) member.leave = setClampedTimeout(() => depart(key, member, "held"), leaveDelay);
            else depart(key, member, "held");
        },
    };
}

/**
 * The member key and info of a payload: `user:<user_id>` and `user_info` for the newest servers'
 * `{user_id, user_info}`, else `payload:<JSON>` and the whole payload (older servers).
 */
export function identify(payload: unknown): [key: string, info: unknown] {
    // [spec] laravel-mercure §5.3 and §5.5: dedupe by user_id, falling back to the serialized payload.
    return isRecord(payload) && typeof payload["user_id"] === "string"
        ? ["user:" + payload["user_id"], payload["user_info"]]
        : ["payload:" + JSON.stringify(payload), payload];
}

/**
 * The roster of `channel`, attached at its first call (the presence capability calls it when the channel is joined):
 * reporting to the channel's `here()`, `joining()` and `leaving()` callbacks, holding leaves back by the connector's
 * `leaveDelay` option (ms, ≥ 0; else {@link DEFAULT_LEAVE_DELAY}).
 */
export function attachRoster<TMember>(channel: MercurePresenceChannel<TMember>): Roster<TMember> {
    const option: unknown = channel.options?.leaveDelay;
    return (channel.roster ??= createRoster<TMember>(
        (kind: PresenceEvent, value: unknown) => channel.emit(kind, value),
        typeof option === "number" && option >= 0 ? option : DEFAULT_LEAVE_DELAY,
    ));
}
