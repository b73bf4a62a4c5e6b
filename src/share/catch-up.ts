import { setClampedTimeout } from "../timers";
import { HubStream } from "../transport/hub-stream";
import type { EventSourceConstructor, StreamMessage } from "../transport/platform";
import type { EventMessage } from "./protocol";

/** How many of the ids it delivered last a catch-up stream remembers, to meet them on the shared stream. */
const SEEN_LIMIT = 256;

/**
 * How long a catch-up holds back the shared stream's live events for its virtual stream at most, from the first one
 * held: a catch-up that has not reached them by then (a hub slow to answer it) lets them through, out of order but not
 * lost, and replays on.
 */
export const HOLD_MS = 1_000;

/** What the catch-up streams need from the engine's multiplexer. */
export interface CatchUpHost {
    /** The real `EventSource` (the leading tab's). */
    readonly EventSource: EventSourceConstructor;
    /** Send an event to one virtual stream (`s` set: its client alone). */
    send(message: EventMessage): void;
}

/**
 * Catch-up streams of the hub engine (lazy chunk). A virtual main stream that first opens with a cursor the engine
 * cannot replay from (older than the events it keeps, or from before this engine: see `stream-mux.ts`) gets a real
 * stream of its own for a while: its own `match` and `match_urlpattern` parameters from its own `last_event_id`, so
 * that a hub with history replays to it what it missed (laravel-mercure §8; mercure-hub §1.4), as its connector's
 * own stream would with tab sharing off. Its events go to that virtual stream alone (`s`); the tab's delivery
 * ledger drops what also came over the shared stream. Meanwhile the shared stream's live events for that virtual
 * stream wait ({@link CatchUps.hold}, at most {@link HOLD_MS}) and follow the replay, so that an event published
 * after the page joined never comes before the older ones the hub replays to it.
 *
 * A catch-up ends once it and the shared stream both had one event, in either order: when it delivers an event that
 * the shared stream forwarded after the catch-up began, or when the shared stream forwards one the catch-up delivered
 * first (a hub may write each update to the older connection first): the hub replays in order, so from there on the
 * shared stream has everything. It ends too when its virtual stream closes, or at its first error: it is best effort,
 * and a tab whose catch-up fails misses what it would have missed without one. Against a hub without history it
 * replays nothing and ends with the next event on the tab's channels.
 */
export class CatchUps {
    /** The open catch-up streams, by virtual stream id. */
    readonly #open = new Map<string, CatchUp>();

    /** The engine's side of them. */
    readonly #host: CatchUpHost;

    /** Create the set; opens nothing until {@link CatchUps.open}. */
    constructor(host: CatchUpHost) {
        this.#host = host;
    }

    /** Whether virtual stream `id` has a catch-up stream open. */
    has(id: string): boolean {
        return this.#open.has(id);
    }

    /** How many catch-up streams are open (they count against the connection budget). */
    get size(): number {
        return this.#open.size;
    }

    /**
     * Open the catch-up of virtual stream `id` on `url` (its parameters and cursor); `live(eventId)` says whether the
     * shared stream forwarded that event since this call; `caughtUp()` runs when the catch-up ends on such an event
     * and held none back (the tab has it, then): its older events moved the tab's cursor back, and the engine sends
     * the tab the newest event it forwarded it again (issue 52: the cursor a page leaves to the next one).
     */
    open(id: string, url: string, topics: readonly string[], live: (eventId: string) => boolean, caughtUp: () => void): void {
        this.close(id);
        const forward = (type: EventMessage["type"]) => (stream: HubStream, event: StreamMessage) => {
            const eventId = event.lastEventId;
            if (eventId !== "" && live(eventId)) {
                // The replay reached what the shared stream forwarded: what it held back follows, from that event on.
                const held = this.#open.get(id)?.held;
                this.#end(id, stream, true);
                return held?.length ? undefined : caughtUp();
            }
            if (eventId !== "") {
                catchUp.delivered.add(eventId);
                // The oldest goes first (a Set keeps insertion order): a race is between the newest events only.
                if (catchUp.delivered.size > SEEN_LIMIT) catchUp.delivered.delete(catchUp.delivered.values().next().value!);
            }
            this.#host.send({ t: "event", w: null, type, data: String(event.data), id: eventId, s: id });
        };
        const stream = new HubStream(this.#host.EventSource, url, [], topics, {
            open: () => undefined,
            message: forward("message"),
            subscription: forward("mercure"),
            error: (failed) => this.#end(id, failed, true),
        });
        const catchUp: CatchUp = { stream, delivered: new Set(), held: [], timer: undefined };
        this.#open.set(id, catchUp);
    }

    /**
     * Hold back `message`, a live event of the shared stream for virtual stream `id`, while its catch-up replays (sent
     * targeted to it once the replay reaches the shared stream's events, or after {@link HOLD_MS}); false when no
     * catch-up of `id` holds its events back (send it now).
     */
    hold(id: string, message: EventMessage): boolean {
        const catchUp = this.#open.get(id);
        if (catchUp === undefined || catchUp.held === null) return false;
        catchUp.held.push({ ...message, s: id });
        catchUp.timer ??= setClampedTimeout(() => this.#release(catchUp), HOLD_MS);
        return true;
    }

    /** The shared stream forwarded event `eventId`: the catch-ups that delivered it first have nothing more to give. */
    forwarded(eventId: string): void {
        for (const [id, catchUp] of this.#open) if (catchUp.delivered.has(eventId)) this.#end(id, catchUp.stream, true);
    }

    /** Close the catch-up of virtual stream `id`, if any (the virtual stream closed: what it held back goes nowhere). */
    close(id: string): void {
        const catchUp = this.#open.get(id);
        if (catchUp !== undefined) this.#end(id, catchUp.stream, false);
    }

    /**
     * Close every catch-up stream: the connection budget needs them (`release`: what they held back goes to their
     * virtual streams now), or the engine stops (dropped: the virtual streams resume from their cursors elsewhere).
     */
    closeAll(release: boolean): void {
        for (const [id, catchUp] of this.#open) this.#end(id, catchUp.stream, release);
    }

    /** Let `catchUp`'s held events through, in order, and hold no more. */
    #release(catchUp: CatchUp): void {
        clearTimeout(catchUp.timer);
        const held = catchUp.held ?? [];
        catchUp.held = null;
        for (const message of held) this.#host.send(message);
    }

    /** Retire `stream`, the catch-up of `id`, and `release` what it held back or drop it. */
    #end(id: string, stream: HubStream, release: boolean): void {
        stream.retire();
        const catchUp = this.#open.get(id);
        if (catchUp?.stream !== stream) return;
        this.#open.delete(id);
        if (release) this.#release(catchUp);
        else clearTimeout(catchUp.timer);
    }
}

/** One open catch-up stream. */
interface CatchUp {
    /** Its real stream. */
    readonly stream: HubStream;
    /** The ids it delivered last (at most {@link SEEN_LIMIT}). */
    readonly delivered: Set<string>;
    /** The live events of the shared stream held back for its virtual stream, in order; null once it holds none back. */
    held: EventMessage[] | null;
    /** Lets the held events through after {@link HOLD_MS}; set at the first. */
    timer: ReturnType<typeof setTimeout> | undefined;
}
