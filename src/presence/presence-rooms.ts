import { presencePattern, snapshotUrl } from "../topic/presence-pattern";
import { createPresenceSync, type PresenceSync, type PresenceTarget } from "./presence-sync";
import type { FetchLike } from "../transport/platform";
import { fetchSnapshot, type SnapshotResult } from "./snapshot";
import { parseSubscriptionEvent } from "./subscription-event";

/** How many recent subscription-event ids are remembered to drop the copy a second stream delivers. */
export const SEEN_EVENT_IDS = 1024;

/**
 * Every joined presence channel of a connector, and what the connector calls to keep their members
 * right. The connector orchestrates; the protocol steps of laravel-mercure §5.4 happen here.
 */
export interface PresenceRooms {
    /** Track a joined presence channel (out of sync until a stream carrying it opens). */
    add(channel: PresenceTarget): void;
    /**
     * Stop tracking a channel that was left or evicted: a snapshot on its way is dropped, and its
     * callbacks hear nothing more (not even the rest of a change a callback left it during).
     */
    remove(name: string): void;
    /**
     * The `match_urlpattern` values for a stream about to open with `names` on `topics` (same order):
     * one per tracked presence channel. Also records each channel's topic and snapshot URL.
     */
    patterns(hub: URL, names: readonly string[], topics: readonly string[]): string[];
    /**
     * A stream carrying `names` is open and serves: seed each tracked channel among them that is out of sync,
     * loading its snapshot with `load(url)`; a tracked channel it does not carry is out of sync. Also call it for the
     * open stream after a refresh that kept it (a failed snapshot is retried this way). Never call it for a stream that
     * is not open.
     */
    streamOpened(names: Iterable<string>, load: (url: string) => Promise<SnapshotResult>): void;
    /**
     * The stream carrying `names` (default: every channel) failed or closed, or the connector
     * disconnected: those channels re-seed, as a difference, when a stream carrying them opens.
     */
    streamLost(names?: Iterable<string>): void;
    /**
     * Handle an `event: mercure` SSE event: its `data` and its event id (`lastEventId`, `""` when none).
     * The same event delivered by two streams (make-before-break overlap) is applied once.
     */
    handleEvent(data: unknown, id: string): void;
}

/** A tracked channel: its sync, and its topic and snapshot URL once a stream was built for it. */
interface Room {
    sync: PresenceSync;
    topic?: string;
    url?: string;
}

/**
 * Create the presence bookkeeping of one connector, with no channel tracked. `leaveGrace` (ms): how long
 * a user missing from a re-seed's snapshot may take to reconnect before `leaving` fires.
 */
export function createPresenceRooms(leaveGrace?: number): PresenceRooms {
    /** Full channel name → room. */
    const rooms = new Map<string, Room>();
    /** Ids of the subscription events taken recently, oldest first; at most {@link SEEN_EVENT_IDS}. */
    const seen = new Set<string>();
    /**
     * Full channel name → its topic and snapshot URL in the last stream built; kept after a leave, so that a
     * channel joined again while that stream still carries it (the batch did not change) seeds.
     */
    const built = new Map<string, { topic: string; url: string }>();

    return {
        add(channel) {
            rooms.get(channel.name)?.sync.close();
            rooms.set(channel.name, { sync: createPresenceSync(channel, leaveGrace), ...built.get(channel.name) });
        },
        remove(name) {
            rooms.get(name)?.sync.close();
            rooms.delete(name);
        },
        patterns(hub, names, topics) {
            const patterns: string[] = [];
            built.clear(); // Only the stream being built counts (bounded by its channels).
            names.forEach((name, index) => {
                const room = rooms.get(name);
                const topic = topics[index];
                if (room === undefined || topic === undefined) return;
                // A new topic (the server's prefix changed) means a new room on the hub: re-seed.
                if (room.topic !== undefined && room.topic !== topic) room.sync.lost();
                room.topic = topic;
                room.url = snapshotUrl(hub, topic);
                built.set(name, { topic, url: room.url });
                // [spec] laravel-mercure §4.1 and §5.4 step 2: a match_urlpattern per presence channel.
                patterns.push(presencePattern(hub, topic));
            });
            return patterns;
        },
        streamOpened(names, load) {
            // A joined channel the serving stream does not carry (its auth fails alone: issue 30's isolation) hears no
            // subscription event until a stream carries it again: it re-seeds then.
            const carried = new Set(names);
            for (const [name, room] of rooms) if (!carried.has(name)) room.sync.lost();
            for (const name of carried) {
                const room = rooms.get(name);
                const url = room?.url;
                // [spec] §5.4 step 3: the snapshot is fetched after the stream opened.
                if (url !== undefined) room?.sync.begin(() => load(url));
            }
        },
        streamLost(names) {
            for (const name of names ?? rooms.keys()) rooms.get(name)?.sync.lost();
        },
        handleEvent(data, id) {
            const event = parseSubscriptionEvent(data);
            if (event === null || (id !== "" && seen.has(id))) return;
            for (const room of rooms.values()) {
                if (room.topic !== event.topic || !room.sync.event(event) || id === "") continue;
                seen.add(id);
                if (seen.size > SEEN_EVENT_IDS) seen.delete(seen.values().next().value as string);
            }
        },
    };
}

/**
 * [spec] laravel-mercure §5.4 step 3: seed the presence channels among `names` (those an open stream
 * carries) from their snapshots, fetched with `platform`'s `fetch` (nothing before it is resolved) and
 * cancelled by `signal`; `log` (the connector's `debug` option) hears which channels.
 */
export function seedPresence(
    rooms: PresenceRooms,
    names: ReadonlySet<string>,
    platform: { readonly fetch: FetchLike } | null,
    signal: AbortSignal,
    log: ((step: string, detail: object) => void) | null,
): void {
    if (platform === null) return;
    const { fetch } = platform;
    const seeded = log && [...names].filter((name) => name.startsWith("presence-"));
    if (seeded && seeded.length > 0) log?.("presence seed", { channels: seeded });
    rooms.streamOpened(names, (url) => fetchSnapshot(url, fetch, signal));
}
