import { DeliveryLedger } from "../dispatch/delivery-ledger";
import { streamBudget } from "../transport/connection-budget";
import { HubStream, type HubStreamHandlers } from "../transport/hub-stream";
import type { EventSourceConstructor, StreamMessage } from "../transport/platform";
import { StreamSwitch } from "../transport/stream-switch";
import { buildSubscribeUrl } from "../topic/subscribe-url";
import { setClampedTimeout } from "../timers";
import { CatchUps } from "./catch-up";
import { clientOf, topicNames, whisperKey, whisperNames, type EventMessage, type ToClient } from "./protocol";

/**
 * How many event ids the engine remembers at least, to forward each event once across its streams (current and
 * draining), in a {@link DeliveryLedger}.
 */
const SEEN_LIMIT = 4_096;

/**
 * How many forwarded events the engine keeps at least (and at most twice as many) to replay to a virtual stream
 * that opens late, from its own cursor: a tab whose messages arrive late after a handover (a hidden tab's), a page
 * back from the back/forward cache.
 */
const RECENT_LIMIT = 512;

/** What the multiplexer needs from its engine. */
export interface StreamMuxHost {
    /** The hub URL. */
    readonly hub: URL;
    /** The real `EventSource` (the leading tab's). */
    readonly EventSource: EventSourceConstructor;
    /**
     * Send `message` to the clients `to` (an event: those whose virtual streams want it), or to the one client it names
     * (`c`, or the client of stream `s`) when `to` is absent.
     */
    send(message: ToClient, to?: readonly string[]): void;
    /** The hub refused a real stream: the cookie is not what the gateway thinks. */
    refused(): void;
    /** How many more real whisper streams the connection budget leaves (see {@link StreamMux}), told when it changes. */
    room?(free: number): void;
}

/** `Omit` over each member of a union. */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * A virtual main stream: its client, its `match` and `match_urlpattern` parameters, whether it was told `open`, and
 * its `last_event_id` until it was first told (null: nothing to replay).
 */
interface VirtualMain {
    readonly client: string;
    readonly topics: readonly string[];
    /** The channel names its topics carry (see {@link topicNames}), to address events to it. */
    readonly names: ReadonlySet<string>;
    readonly patterns: readonly string[];
    open: boolean;
    cursor: string | null;
}

/**
 * The engine's streams: ONE real main stream for the union of every open virtual main stream's `match` and
 * `match_urlpattern` parameters, reopened make-before-break with {@link StreamSwitch} when the union changes
 * (coalesced per tick, narrowing too, so that a presence leave reaches the hub), resuming from the engine's
 * cursor; and one real whisper stream per whisper topic set, shared by every virtual whisper stream on it
 * (laravel-mercure §7.3: a whisper stream binds a whisper to its one topic, so they are never unioned).
 *
 * Every event of the real main streams (current and draining) is forwarded once (by id) to every virtual main
 * stream; each client's dispatcher filters by its own channels and socket id. A virtual main stream that opens late
 * gets what it missed from its own cursor: replayed from the events the engine keeps, or, for an older cursor, from a
 * catch-up stream of its own (see {@link CatchUps}). The switch's own timers (open deadline, drain cap) and the whisper
 * streams' renewal are the only ones; drains normally end by id, so a throttled leader still hands over.
 */
export class StreamMux {
    /** The virtual main streams, by id, in first-seen order. */
    readonly #mains = new Map<string, VirtualMain>();

    /** The real whisper streams by key, with the virtual streams on each. */
    readonly #whispers = new Map<string, RealWhisper>();

    /** When the cookie of the last grant is due for renewal (see {@link StreamMux.renew}); -Infinity before one. */
    #renewAt = -Infinity;

    /** The timer of the next real whisper stream due for renewal (see {@link StreamMux.#renewWhispers}). */
    #renewal: ReturnType<typeof setTimeout> | undefined;

    /** Virtual whisper streams waiting for a connection (over HTTP/1.1, past the budget), by id, in order: their URL. */
    readonly #queuedWhispers = new Map<string, string>();

    /** The room last told (see {@link StreamMuxHost.room}). */
    #room = -1;

    /** The parameters each real main stream carries. */
    readonly #carried = new WeakMap<HubStream, { topics: ReadonlySet<string>; patterns: ReadonlySet<string> }>();

    /** The real main streams across make-before-break reopens. */
    readonly #streams = new StreamSwitch((_stream, stall) => this.#stalled(stall));

    /** The last event id forwarded: the `last_event_id` of every real reopen (a new engine starts from its first client's). */
    #cursor: string | null = null;

    /** Whether the cursor was taken from a client (only the first one's is). */
    #cursorSet = false;

    /** The main-stream events forwarded lately, in order (see {@link RECENT_LIMIT}), for late virtual streams. */
    #recent: Recent[] = [];

    /** The id just before the first of {@link StreamMux.#recent}: the first cursor, then the last event dropped from it. */
    #base: string | null = null;

    /** How many main-stream events with an id were forwarded so far: where a catch-up stream began. */
    #forwarded = 0;

    /**
     * For each topic the real main stream carries, from which count of {@link StreamMux.#forwarded} on every event on it
     * is among those forwarded: where the reopen that added it resumed from. A virtual stream whose cursor is older than
     * that, for one of its topics, cannot be replayed from {@link StreamMux.#recent} (seed 3053: a page rendered with the
     * hub's cursor joins a channel that another tab's join added to the union later: what was published on it in
     * between never reached the engine).
     */
    readonly #coveredFrom = new Map<string, number>();

    /** The catch-up streams of virtual streams whose cursor is older than {@link StreamMux.#recent} reaches. */
    readonly #catchUps: CatchUps;

    /** Recently forwarded ids (bounded, see {@link SEEN_LIMIT}): the connector's ledger, with one "channel", the tabs. */
    readonly #seen = new DeliveryLedger(SEEN_LIMIT);

    /** The last answer of {@link StreamMux.#soloFor}, with what it was computed for. */
    #solo: { readonly stream: HubStream; readonly mains: number; readonly version: number; readonly client: string | null } | null = null;

    /** Counts the changes of the virtual main streams (see {@link StreamMux.#soloFor}). */
    #version = 0;

    /** The next reconcile must reopen even for the same union (a new cookie). */
    #reopen = false;

    /** Whether a reconcile is queued for the end of this tick. */
    #queued = false;

    /** Create the multiplexer; opens nothing until a virtual stream does. */
    constructor(private readonly host: StreamMuxHost) {
        this.#catchUps = new CatchUps(host);
    }

    /** The last event id forwarded: the `last_event_id` of the next real reopen. */
    get cursor(): string | null {
        return this.#cursor;
    }

    /** Open virtual stream `id` of `client` for `url` (a whisper stream when `whisper`). */
    open(client: string, id: string, url: string, whisper: boolean): void {
        this.close(id); // A client re-sending after a handover.
        if (whisper) return this.#openWhisper(id, url);
        const params = new URL(url).searchParams;
        const cursor = params.get("last_event_id");
        if (!this.#cursorSet) this.#cursor = this.#base = cursor;
        this.#cursorSet = true;
        const topics = params.getAll("match");
        this.#mains.set(id, { client, topics, names: topicNames(topics), patterns: params.getAll("match_urlpattern"), open: false, cursor });
        this.#version++;
        this.#schedule();
    }

    /** Close virtual stream `id`; the union narrows (main) or the real whisper stream loses a reference. */
    close(id: string): void {
        this.#catchUps.close(id);
        if (this.#mains.delete(id)) {
            this.#version++;
            return this.#schedule();
        }
        this.#queuedWhispers.delete(id);
        for (const [key, entry] of this.#whispers) {
            if (!entry.refs.delete(id) || entry.refs.size > 0) continue;
            shut(entry);
            this.#whispers.delete(key);
            this.#admit();
        }
    }

    /** Close every virtual stream of `client`. */
    forget(client: string): void {
        for (const [id, main] of this.#mains) if (main.client === client) this.close(id);
        for (const entry of this.#whispers.values()) for (const id of entry.refs) if (id.startsWith(client + "/")) this.close(id);
        for (const id of this.#queuedWhispers.keys()) if (id.startsWith(client + "/")) this.close(id);
    }

    /**
     * The cookie changed: the next reconcile reopens the real main stream with it (make-before-break). Not
     * now: the client that asked opens its new virtual stream next (a join changes the union, a renewal
     * reopens), and one reopen serves both. Should none follow, the hub ends the old stream at its token's
     * expiry and the `EventSource` reconnects by itself with the new cookie. `renewAt`: when the new cookie is due
     * for renewal; the real whisper streams on older cookies are renewed by their own (see {@link StreamMux.#renewWhispers}),
     * and now those of the channels in `added`, which the cookie before did not grant: a whisper stream that reconnected
     * on that cookie (a union without its tab's channels while that tab's stream had failed, a part's request) gets
     * none of its whispers (the simulation's seeds 4087 and 12192).
     */
    renew(renewAt: number, added: readonly string[] = []): void {
        if (this.#streams.latest() !== null) this.#reopen = true;
        this.#renewAt = renewAt;
        this.#renewWhispers(new Set(added));
    }

    /**
     * The cookie changed and no client's new virtual stream follows (the gateway's own request, see `AuthGateway.record`):
     * reopen the real main stream with it now (make-before-break, from the cursor).
     */
    reopen(): void {
        if (this.#streams.latest() === null) return;
        this.#reopen = true;
        this.#schedule();
    }

    /**
     * Renew make-before-break each real whisper stream whose cookie is due for renewal and older than the last grant's, as
     * a connector alone does its own (whisper/whisper-streams.ts): the hub ends a stream at its cookie's expiry, and a
     * whisper published before the browser's reconnect would be lost. Then wait for the next one due.
     */
    #renewWhispers(ungranted: ReadonlySet<string> = new Set()): void {
        clearTimeout(this.#renewal);
        const now = Date.now();
        let next = Infinity;
        for (const [key, entry] of this.#whispers) {
            if (entry.next !== null || entry.renewAt >= this.#renewAt) continue;
            const regained = ungranted.size > 0 && whisperNames(entry.url).some((name) => ungranted.has(name));
            if (entry.renewAt > now && !regained) next = Math.min(next, entry.renewAt);
            // Over HTTP/1.1 the replacement needs a connection of its own for a moment; without one, the hub's end and the
            // browser's reconnect it is.
            else if (this.#connections() < streamBudget(this.host.hub)) {
                const url = new URL(entry.url);
                if (entry.cursor !== null) url.searchParams.set("last_event_id", entry.cursor);
                entry.overlap = new Set();
                entry.next = this.#realWhisper(key, entry, url.href);
            }
        }
        if (next !== Infinity) this.#renewal = setClampedTimeout(() => this.#renewWhispers(), next - now);
    }

    /**
     * End `client`'s virtual main streams as the hub ends a refused one: its connector asks for its channels again and
     * hears why (the gateway found a channel of its set failing while another tab asked: see `auth-gateway.ts`).
     */
    end(client: string): void {
        for (const [id, main] of [...this.#mains]) {
            if (main.client !== client) continue;
            this.#mains.delete(id);
            this.#catchUps.close(id);
            this.host.send({ t: "state", s: id, state: 2 });
        }
    }

    /** Close every real stream (the engine stops). */
    closeAll(): void {
        this.#streams.closeAll();
        this.#catchUps.closeAll(false);
        for (const entry of this.#whispers.values()) shut(entry);
        this.#whispers.clear();
        this.#queuedWhispers.clear();
        this.#mains.clear();
        this.#coveredFrom.clear();
        clearTimeout(this.#renewal);
    }

    /** Reconcile at the end of this tick (joins and leaves of every tab in one task make one reopen). */
    #schedule(): void {
        if (this.#queued) return;
        this.#queued = true;
        queueMicrotask(() => {
            this.#queued = false;
            this.#reconcile();
        });
    }

    /** Open a real main stream for the union unless the latest one carries exactly it; tell the carried virtual streams. */
    #reconcile(fallback = false): void {
        const topics = new Set<string>();
        const patterns = new Set<string>();
        for (const main of this.#newest()) {
            for (const topic of main.topics) topics.add(topic);
            for (const pattern of main.patterns) patterns.add(pattern);
        }
        if (topics.size === 0 && patterns.size === 0) {
            this.#streams.closeAll();
            this.#coveredFrom.clear();
            this.#reopen = false;
            return;
        }
        const latest = this.#streams.latest();
        const same = latest !== null && sameSet(this.#carried.get(latest)?.topics, topics) && sameSet(this.#carried.get(latest)?.patterns, patterns);
        if (!same || this.#reopen || fallback) {
            this.#reopen = false;
            this.#yieldCatchUps();
            const broken = this.#streams.makeRoom(streamBudget(this.host.hub) - this.#whispers.size);
            if (broken !== null) this.#interrupt();
            const from = this.#oldestWaiting();
            const start = this.#position(from);
            for (const topic of this.#coveredFrom.keys()) if (!topics.has(topic)) this.#coveredFrom.delete(topic);
            for (const topic of topics) if (!this.#coveredFrom.has(topic)) this.#coveredFrom.set(topic, start);
            // [spec] laravel-mercure §4.1: one match per topic, one match_urlpattern per pattern, last_event_id = the cursor
            // (an older one a waiting virtual stream resumes from, so that the hub replays its new topics from there).
            const url = buildSubscribeUrl(this.host.hub, { topics: [...topics], patterns: [...patterns], lastEventId: from });
            const stream = new HubStream(this.host.EventSource, url, [], [...topics], this.#mainHandlers);
            this.#carried.set(stream, { topics, patterns });
            this.#streams.add(stream, fallback);
        }
        this.#announce();
    }

    /**
     * Each client's newest virtual main stream: the union is theirs alone. A client's older one is the stream its
     * own make-before-break replaced; it stays open and hears every forwarded event until it drains, but its
     * channels left are not kept in the real stream meanwhile (the engine's own switch keeps the old real stream
     * draining across the reopen), so that a navigation that leaves one channel and joins another reopens the real
     * stream once, not once for the join and again to narrow. If the newest closes unopened, the older counts again.
     */
    #newest(): Iterable<VirtualMain> {
        const newest = new Map<string, VirtualMain>();
        for (const main of this.#mains.values()) newest.set(main.client, main); // Insertion order: the last opened wins.
        return newest.values();
    }

    /** Tell every virtual main stream the open current stream carries, and not told yet, that it is open. */
    #announce(): void {
        const current = this.#streams.current;
        const carried = current === null ? undefined : this.#carried.get(current);
        if (current === null || !current.isOpen() || carried === undefined) return;
        for (const [id, main] of this.#mains) {
            if (main.open || !main.topics.every((t) => carried.topics.has(t)) || !main.patterns.every((p) => carried.patterns.has(p))) continue;
            main.open = true;
            this.host.send({ t: "state", s: id, state: 1 });
            this.#replay(id, main);
        }
    }

    /**
     * Where {@link StreamMux.#recent} continues after `cursor`: 0 after the base, the index after it when recent,
     * -1 when unknown (null, older than what is kept, or never forwarded here).
     */
    #after(cursor: string | null): number {
        if (cursor === null) return -1;
        if (cursor === this.#base) return 0;
        for (let at = this.#recent.length - 1; at >= 0; at--) if (this.#recent[at]!.event.id === cursor) return at + 1;
        return -1;
    }

    /**
     * Where the events after `cursor` begin, counted as {@link StreamMux.#forwarded} counts: now for no cursor or the
     * engine's own, before every kept event for a cursor older than those (-Infinity).
     */
    #position(cursor: string | null): number {
        if (cursor === null || cursor === this.#cursor) return this.#forwarded;
        const after = this.#after(cursor);
        return after < 0 ? -Infinity : this.#forwarded - this.#recent.length + after;
    }

    /**
     * The `last_event_id` of a new real main stream: the engine's cursor. A virtual stream still waiting to open with an
     * older cursor gets what its new topics had since then from a catch-up stream of its own (see {@link StreamMux.#replay}):
     * resuming the real stream from that cursor would replay those topics' older events to every other tab on them too,
     * including pages that joined them after (their first events then came after newer ones; the simulation's order
     * invariant, seed 2143). Only where no connection is left for a catch-up (HTTP/1.1) does the real stream resume
     * from the oldest known cursor of a waiting virtual stream instead: nothing is lost, the other tabs' ledgers drop
     * what they had.
     */
    #oldestWaiting(): string | null {
        if (this.#connections() + 2 <= streamBudget(this.host.hub)) return this.#cursor;
        let oldest = this.#cursor;
        let at = this.#after(oldest);
        for (const main of this.#mains.values()) {
            const after = main.open ? -1 : this.#after(main.cursor);
            if (after >= 0 && (at < 0 || after < at)) [oldest, at] = [main.cursor, after];
        }
        return oldest;
    }

    /**
     * Replay to virtual stream `id`, once, as it first opens, the events forwarded since its cursor before it was open
     * (they reached the other tabs only): targeted with `s`. Its connector drops what it had already (its ledger). A
     * cursor older than what is kept (or from before this engine) gets a catch-up stream instead.
     */
    #replay(id: string, main: VirtualMain): void {
        const { cursor } = main;
        const from = this.#after(cursor);
        main.cursor = null;
        // A topic carried only since after the cursor: what was published on it in between is not kept (see #coveredFrom).
        const position = this.#position(cursor);
        const kept = from >= 0 && main.topics.every((topic) => (this.#coveredFrom.get(topic) ?? -Infinity) <= position);
        if (!kept && cursor !== null && this.#catchUp(id, main, cursor)) return;
        if (from >= 0) for (const recent of this.#recent.slice(from)) if (wants(main, recent)) this.host.send({ ...recent.event, s: id });
    }

    /**
     * Open a catch-up stream (see {@link CatchUps}) for virtual stream `id`, whose `cursor` the engine cannot replay
     * from, when a connection is free for it: over HTTP/1.1, one more stream than the engine holds must still fit
     * (the next replacement of the real main stream). Whether it opened.
     */
    #catchUp(id: string, main: VirtualMain, cursor: string): boolean {
        if (this.#connections() + 2 > streamBudget(this.host.hub)) return false;
        const start = this.#forwarded;
        // [spec] laravel-mercure §4.1 and §8: the virtual stream's own parameters, resuming from its own cursor.
        const url = buildSubscribeUrl(this.host.hub, { topics: main.topics, patterns: main.patterns, lastEventId: cursor });
        this.#catchUps.open(id, url, main.topics, (eventId) => this.#forwardedSince(eventId, start), () => this.#newestTo(id, main, start));
        return true;
    }

    /**
     * Send virtual stream `id` again the newest broadcast the shared stream forwarded it since its catch-up began
     * (`start`): a catch-up ended on an event the tab already had, and the older events it replayed left the tab's
     * cursor (its `last_event_id`, and what its page leaves to the next one with `resumeAcrossPages`) behind what the tab
     * received. Its connector's ledger drops the delivery; only the cursor moves. Nothing from before the catch-up: the
     * tab never had it (a page's first cursor may be older than events this engine forwarded to another page).
     */
    #newestTo(id: string, main: VirtualMain, start: number): void {
        const newest = this.#newestSince(start, (recent) => recent.event.type === "message" && wants(main, recent));
        if (newest !== undefined) this.host.send({ ...newest.event, s: id });
    }

    /** Whether event `id` is among those forwarded since {@link StreamMux.#forwarded} was `start` (as far as they are kept). */
    #forwardedSince(id: string, start: number): boolean {
        return this.#newestSince(start, (recent) => recent.event.id === id) !== undefined;
    }

    /**
     * The newest event forwarded since {@link StreamMux.#forwarded} was `start` (as far as they are kept) that `test`
     * accepts: a scan from the newest, without a copy (a catch-up asks at each of its events).
     */
    #newestSince(start: number, test: (recent: Recent) => boolean): Recent | undefined {
        for (let at = this.#recent.length - 1, left = this.#forwarded - start; left > 0 && at >= 0; at--, left--) {
            if (test(this.#recent[at]!)) return this.#recent[at];
        }
        return undefined;
    }

    /** Over HTTP/1.1, a new main or whisper stream takes the catch-up streams' connections when it needs them. */
    #yieldCatchUps(): void {
        if (this.#connections() + 1 > streamBudget(this.host.hub)) this.#catchUps.closeAll(true);
    }

    /** How many real streams the engine holds: main (current, replacement, draining), whisper and catch-up. */
    #connections(): number {
        let renewing = 0;
        for (const entry of this.#whispers.values()) renewing += Number(entry.next !== null);
        return this.#streams.held() + this.#whispers.size + renewing + this.#catchUps.size;
    }

    /**
     * The real stream reconnects: every open virtual main stream reports a transient error, and opens again with it.
     * `attempt`: the real stream's connection attempt failed, which the ones still connecting report too (as a native
     * EventSource does on each failed attempt, so that a client names a hub that is down).
     */
    #interrupt(attempt = false): void {
        for (const [id, main] of this.#mains) {
            if (!main.open && !attempt) continue;
            // An open stream had every event of its channels up to the engine's cursor, unless a catch-up holds some back:
            // it resumes from there, whichever engine serves it next (a later page of its tab must not get them again).
            const cursor = main.open && this.#cursor !== null && !this.#catchUps.has(id) ? { id: this.#cursor } : {};
            main.open = false;
            this.host.send({ t: "state", s: id, state: 0, ...cursor });
        }
    }

    /** Close virtual main streams for good (`only`: those), which makes their clients re-auth through the gateway. */
    #refuse(only?: (main: VirtualMain) => boolean): void {
        for (const [id, main] of [...this.#mains]) {
            if (only !== undefined && !only(main)) continue;
            this.#mains.delete(id);
            this.#catchUps.close(id);
            this.host.send({ t: "state", s: id, state: 2 });
        }
        this.host.refused();
    }

    /** A real main stream missed its open deadline (see {@link StreamSwitch}). */
    #stalled(stall: "replacement" | "fallback"): void {
        this.#streams.closeAll();
        this.#interrupt();
        if (stall === "replacement") this.#reconcile(true);
        else this.#refuse();
    }

    /**
     * Forward one event of a real main stream once, by id, to the clients whose virtual main streams carry one of its
     * channels (a broadcast's `channels`, a subscription event's `match`): a tab never gets another tab's channels' data.
     */
    #forward(stream: HubStream, type: "message" | "mercure", event: StreamMessage): void {
        const id = event.lastEventId;
        if (id !== "") {
            this.#streams.delivered(stream, id);
            if (!this.#seen.claim(id, "")) return;
            this.#cursor = id;
            this.#catchUps.forwarded(id);
        }
        const message = { t: "event", w: null, type, data: String(event.data), id } as const;
        const recent: Recent = { event: message, channels: undefined };
        // One client (the usual case) whose streams want every topic the real stream carries: its connector drops what it
        // did not join, so the event is not parsed here; the address is read only when clients must be told apart, or
        // while the real stream still carries the topics of a client that left (a narrowing reopen is under way).
        const only = this.#catchUps.size === 0 ? this.#soloFor(stream) : null;
        if (only !== null) this.host.send(message, [only]);
        else this.#sendLive(message, recent);
        if (id === "") return;
        // Kept for late virtual streams: at least the last RECENT_LIMIT, dropped in halves (no shift per event).
        this.#forwarded++;
        if (this.#recent.push(recent) > 2 * RECENT_LIMIT) this.#base = this.#recent.splice(0, RECENT_LIMIT).pop()!.event.id;
    }

    /**
     * Send a live event to the clients whose virtual main streams want it, once per client; a virtual stream whose
     * catch-up holds back the live events gets it after the replay (see {@link CatchUps.hold}): its client's other
     * streams that want it get it targeted, so that it never reaches the held one before.
     */
    #sendLive(message: EventMessage, recent: Recent): void {
        const to: string[] = [];
        let wanting: Map<string, string[]> | null = null;
        for (const [id, main] of this.#mains) {
            if (!wants(main, recent)) continue;
            if (this.#catchUps.size === 0) {
                if (!to.includes(main.client)) to.push(main.client);
            } else {
                wanting ??= new Map();
                const ids = wanting.get(main.client);
                if (ids === undefined) wanting.set(main.client, [id]);
                else ids.push(id);
            }
        }
        for (const [client, ids] of wanting ?? []) {
            const free = ids.filter((id) => !this.#catchUps.hold(id, message));
            if (free.length === ids.length) to.push(client);
            else for (const id of free) this.host.send({ ...message, s: id }, [client]);
        }
        if (to.length > 0) this.host.send(message, to);
    }

    /** The one client every event of `stream` may go to unread (see {@link StreamMux.#forward}), or null; cached per stream until the virtual streams change. */
    #soloFor(stream: HubStream): string | null {
        if (this.#solo?.stream === stream && this.#solo.mains === this.#mains.size && this.#solo.version === this.#version) return this.#solo.client;
        let only: string | null = null;
        const wanted = new Set<string>();
        for (const main of this.#mains.values()) {
            if (only !== null && only !== main.client) {
                only = null;
                break;
            }
            only = main.client;
            for (const topic of main.topics) wanted.add(topic);
        }
        const client = only !== null && stream.topics.every((topic) => wanted.has(topic)) ? only : null;
        this.#solo = { stream, mains: this.#mains.size, version: this.#version, client };
        return client;
    }

    /** The handlers of the real main streams. */
    readonly #mainHandlers: HubStreamHandlers = {
        open: (stream) => {
            if (this.#streams.opened(stream)) this.#announce();
        },
        message: (stream, event) => this.#forward(stream, "message", event),
        subscription: (stream, event) => this.#forward(stream, "mercure", event),
        error: (stream, _event, closed) => {
            const failure = this.#streams.failed(stream, closed);
            if (failure === "interrupted") this.#interrupt(true);
            // [spec] laravel-mercure §8: a refused replacement: the streams waiting for it re-auth; the current one serves on.
            else if (failure === "replacement_refused") this.#refuse((main) => !main.open);
            else if (failure === "closed") {
                this.#streams.closeAll();
                this.#refuse();
            }
        },
    };

    /** Open (or join) the real whisper stream of `url`'s topics for virtual stream `id`. */
    #openWhisper(id: string, url: string, admitted = false): void {
        const key = whisperKey(url);
        let entry = this.#whispers.get(key);
        // [spec] The main stream first: a whisper stream past the budget waits (connecting) for one to close. Its connector
        // reports `limit` before it asks, from the room the engine tells; this catches two tabs asking at once.
        if (entry === undefined && !admitted && (this.#whisperRoom() <= 0 || this.#queuedWhispers.size > 0)) {
            this.#queuedWhispers.set(id, url);
            return;
        }
        if (entry === undefined) {
            this.#yieldCatchUps();
            this.#streams.trimDrains(streamBudget(this.host.hub) - this.#whispers.size - 1);
            entry = { stream: null!, refs: new Set(), url, renewAt: this.#renewAt, cursor: new URL(url).searchParams.get("last_event_id"), next: null, overlap: null };
            entry.stream = this.#realWhisper(key, entry, url);
            this.#whispers.set(key, entry);
            this.#tellRoom();
        }
        entry.refs.add(id);
        if (entry.stream.isOpen()) this.host.send({ t: "state", s: id, state: 1 });
    }

    /** Open a real whisper stream for `entry`: its first, or its replacement ({@link RealWhisper.next}), which takes over at its open. */
    #realWhisper(key: string, entry: RealWhisper, url: string): HubStream {
        const tell = (state: 0 | 1 | 2) => {
            for (const ref of entry.refs) this.host.send({ t: "state", s: ref, state });
        };
        // A whisper goes to the clients on this stream only.
        const clients = (): string[] => [...new Set([...entry.refs].map(clientOf))];
        const renewAt = this.#renewAt;
        const stream: HubStream = new HubStream(this.host.EventSource, url, [], [], {
            open: () => {
                if (entry.next !== stream) return tell(1);
                // The replacement carries the topic now: the stream it replaces goes (its ids stay, for the replay).
                entry.stream.retire();
                entry.stream = stream;
                entry.next = null;
                entry.renewAt = renewAt;
                tell(1); // A virtual stream the old one had told `reconnecting` is open again.
            },
            message: (_stream, event) => {
                // A renewal's overlap: what the replaced stream forwarded after the replacement's cursor goes once.
                const id = event.lastEventId;
                if (entry.overlap !== null && id !== "") {
                    if (entry.next !== null) entry.overlap.add(id);
                    else if (entry.overlap.delete(id)) return;
                }
                if (id !== "") entry.cursor = id;
                this.host.send({ t: "event", w: key, type: "message", data: String(event.data), id }, clients());
            },
            error: (failed, _event, closed) => {
                // A replacement that fails before it opened goes: the stream it was to replace serves on, to the hub's end.
                if (entry.next === failed) {
                    failed.retire();
                    entry.next = entry.overlap = null;
                    return;
                }
                tell(closed ? 2 : 0);
                if (!closed) return;
                this.host.refused(); // The hub refused the cookie: the next auth goes to the server.
                shut(entry);
                if (this.#whispers.get(key) === entry) this.#whispers.delete(key);
                this.#admit();
            },
        });
        return stream;
    }

    /**
     * How many more real whisper streams fit: over HTTP/1.1 the budget (the browser's connections per host, shared by every
     * tab, less one for requests) less the main stream, which comes first, less the whisper streams open.
     */
    #whisperRoom(): number {
        return streamBudget(this.host.hub) - 1 - this.#whispers.size;
    }

    /** Open the queued whisper streams that fit now, in order. */
    #admit(): void {
        for (const [id, url] of [...this.#queuedWhispers]) {
            if (this.#whisperRoom() <= 0 && !this.#whispers.has(whisperKey(url))) break;
            this.#queuedWhispers.delete(id);
            this.#openWhisper(id, url, true);
        }
        this.#tellRoom();
    }

    /** Tell the clients the room left when it changed (their connectors report `limit` past it, as without sharing). */
    #tellRoom(): void {
        const room = Math.max(this.#whisperRoom(), 0);
        if (room === this.#room) return;
        this.#room = room;
        this.host.room?.(room);
    }
}

/** A real whisper stream of the engine, shared by the virtual whisper streams on its topic. */
interface RealWhisper {
    /** The stream (opening or open). */
    stream: HubStream;
    /** The virtual whisper streams on it, by id. */
    readonly refs: Set<string>;
    /** The URL it was first opened with (its `match`). */
    readonly url: string;
    /** When the cookie it opened on is due for renewal (see {@link StreamMux.renew}). */
    renewAt: number;
    /** The last event id it forwarded (or the first virtual stream's cursor): its replacement's `last_event_id`. */
    cursor: string | null;
    /** Its replacement on a newer cookie, opening (make-before-break), or null. */
    next: HubStream | null;
    /** The ids forwarded since the last replacement was opened from the cursor, which it may replay: each goes once. */
    overlap: Set<string> | null;
}

/** Close a real whisper stream and its replacement. */
function shut(entry: RealWhisper): void {
    entry.stream.retire();
    entry.next?.retire();
    entry.next = entry.overlap = null;
}

/** Whether `a` holds exactly the elements of `b`. */
function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string>): boolean {
    return a !== undefined && a.size === b.size && [...b].every((item) => a.has(item));
}

/** A forwarded event as the multiplexer keeps it for late virtual streams: with its address once read (see {@link addressOf}). */
interface Recent {
    readonly event: EventMessage;
    channels: readonly string[] | string | null | undefined;
}

/** A broadcast envelope's leading `channels` (laravel-mercure §4.3: the server writes it first), read without parsing the payload. */
const LEADING_CHANNELS = /^\{"channels":(\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\])/;

/**
 * Where an event goes: a broadcast's `channels` (laravel-mercure §4.4 step 2; the leading array alone is parsed when the
 * envelope starts with it, as the server writes it), a subscription event's `match` topic (§5.4), or null: not
 * addressable, which no connector dispatches (a raw publisher's data, a malformed document).
 */
function addressOf(type: "message" | "mercure", data: string): readonly string[] | string | null {
    try {
        if (type === "mercure") {
            const match = (JSON.parse(data) as { match?: unknown } | null)?.match;
            return typeof match === "string" ? match : null;
        }
        const leading = LEADING_CHANNELS.exec(data)?.[1];
        const channels = (leading === undefined ? (JSON.parse(data) as { channels?: unknown } | null)?.channels : JSON.parse(leading)) as unknown;
        return Array.isArray(channels) ? channels.filter((name): name is string => typeof name === "string") : null;
    } catch {
        return null;
    }
}

/** Whether virtual main stream `main` carries the event `recent` (its address read at the first need, see {@link addressOf}). */
function wants(main: VirtualMain, recent: Recent): boolean {
    const { type } = recent.event;
    const channels = (recent.channels ??= addressOf(type, recent.event.data));
    if (channels === null) return false;
    if (type === "mercure") return main.topics.includes(channels as string);
    return (channels as readonly string[]).some((name) => main.names.has(name));
}
