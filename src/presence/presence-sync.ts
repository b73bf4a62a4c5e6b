import { describeCause, MercureError } from "../errors";
import { setClampedTimeout } from "../timers";
import type { Roster } from "./roster";
import type { SnapshotResult } from "./snapshot";
import type { Subscription } from "./subscription-event";

/**
 * What a presence sync keeps in step: a presence channel's name, roster and error reporting.
 */
export interface PresenceTarget {
    /** The full channel name (`presence-…`). */
    readonly name: string;
    /** The channel's members. */
    readonly roster: Roster<unknown>;
    /** Hand an error to the channel's `error()` callbacks. */
    reportError(error: MercureError): void;
    /**
     * A snapshot failed with `status`: whether the owner authorizes again because the cookie it went with is not this
     * connector's (another tab's request replaced it), which seeds the channel again after; absent: never.
     */
    cookieReplaced?(status: number | undefined): boolean;
}

/**
 * Keeps one presence channel's roster in step with the hub: seeds it from a snapshot and applies live
 * subscription events, buffering them while the snapshot is on its way.
 *
 * States: out of sync (events ignored; the initial state, and after a lost stream or a failed
 * snapshot), seeding (a snapshot request in flight; events buffered), in sync (events applied).
 */
export interface PresenceSync {
    /**
     * Seed from a snapshot unless in sync or already seeding. Call only while a stream carrying the
     * channel is open, so that the snapshot holds this connection's own subscription.
     */
    begin(load: () => Promise<SnapshotResult>): void;
    /** Handle a live event for this channel; returns false when it was ignored (out of sync). */
    event(event: Subscription): boolean;
    /** The stream was lost: drop the buffer and any snapshot on its way. */
    lost(): void;
    /** The channel was left: as {@link PresenceSync.lost}, and its roster reports nothing more. */
    close(): void;
}

/** Default time a user missing from a re-seed's snapshot has to reconnect before `leaving` fires. */
export const LEAVE_GRACE = 10_000;

/** How many times a failed snapshot is asked again (after 1, 2, 4, 8 and 16 s) before it waits for the next refresh. */
export const SNAPSHOT_RETRIES = 5;

/**
 * Create the sync of one presence channel, out of sync. After a re-seed, users missing from the
 * snapshot get `leaveGrace` milliseconds to reappear before they are reported leaving.
 */
export function createPresenceSync(target: PresenceTarget, leaveGrace = LEAVE_GRACE): PresenceSync {
    /** Bumped by `lost()`; a snapshot requested under an older value is dropped. */
    let generation = 0;
    /** The pending expiry of the users lingering after the last re-seed. */
    let expiry: ReturnType<typeof setTimeout> | undefined;
    /** Whether live events are applied. */
    let synced = false;
    /**
     * Events received since the snapshot request started, or null when not seeding. Bounded by the
     * snapshot request's deadline.
     */
    let buffer: Subscription[] | null = null;
    /** The failed snapshots in a row since the channel was last seeded or its stream lost (one error for them all). */
    let failures = 0;
    /** The pending request again of a failed snapshot. */
    let retry: ReturnType<typeof setTimeout> | undefined;

    const settle = (result: SnapshotResult, current: number, load: () => Promise<SnapshotResult>): void => {
        if (current !== generation) return;
        const buffered = buffer ?? [];
        buffer = null;
        if (result.kind === "aborted") return;
        if (result.kind === "failed") {
            // Refused on another connector's cookie (a tab alone): nothing failed; the owner's new auth seeds again.
            if ((result.status === 401 || result.status === 403) && target.cookieReplaced?.(result.status) === true) return;
            // [spec] laravel-mercure §5.4 step 4: report, no here(), stay unseeded; the next refresh retries. Asked again
            // sooner too, a few times with backoff (a hub that was down a moment ago), and reported once for them all.
            if (failures++ === 0) {
                target.reportError(
                    new MercureError(
                        "presence_snapshot_failed",
                        `The presence snapshot of channel "${target.name}" failed (${result.reason}): check that the hub enables active subscriptions and the cookie grants them; it is retried with backoff and on the next refresh.`,
                        { channel: target.name, ...result },
                    ),
                );
            }
            if (failures <= SNAPSHOT_RETRIES) retry = setClampedTimeout(() => current === generation && begin(load), 1_000 * 2 ** (failures - 1));
            return;
        }
        failures = 0;
        synced = true;
        // [spec] §5.4 step 5: seed, then replay the buffer in order, then drop it.
        const lingering = target.roster.seed(result.members);
        // `lost()` cancels this timer (and a joining() callback may have called it already).
        if (current === generation && lingering.length > 0) expiry = setClampedTimeout(() => target.roster.expire(lingering), leaveGrace);
        // An arrival whose leave is buffered too came and went around the snapshot (or is history
        // replayed after a reconnect): skipped, so it shows as nothing rather than joining + leaving.
        const leaves = new Set(buffered.filter((event) => !event.active).map((event) => event.subscriber));
        for (const event of buffered) {
            if (current !== generation) return; // A callback left the channel or dropped the stream.
            if (!event.active || !leaves.has(event.subscriber)) target.roster.apply(event);
        }
    };

    const lost = (): void => {
        clearTimeout(expiry);
        clearTimeout(retry);
        failures = 0;
        generation++;
        synced = false;
        buffer = null;
    };

    const begin = (load: () => Promise<SnapshotResult>): void => {
        if (synced || buffer !== null) return;
        clearTimeout(retry); // A refresh asks now.
        // Events received before the request starts are already reflected in the snapshot; buffer from here.
        buffer = [];
        const current = generation;
        new Promise<SnapshotResult>((resolve) => resolve(load())).then(
            (result) => settle(result, current, load),
            (cause: unknown) => settle({ kind: "failed", reason: describeCause(cause), cause }, current, load),
        );
    };

    return {
        begin,
        event(event) {
            // [spec] §5.4 step 6: buffer while seeding, apply when seeded.
            if (buffer !== null) buffer.push(event);
            else if (synced) target.roster.apply(event);
            else return false;
            return true;
        },
        lost,
        close() {
            lost();
            target.roster.close();
        },
    };
}
