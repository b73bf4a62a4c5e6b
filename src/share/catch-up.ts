import { HubStream } from "../transport/hub-stream";
import type { EventSourceConstructor, StreamMessage } from "../transport/platform";
import type { EventMessage } from "./protocol";

/** How many of the ids it delivered last a catch-up stream remembers, to meet them on the shared stream. */
const SEEN_LIMIT = 256;

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
 * ledger drops what also came over the shared stream.
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
    readonly #streams = new Map<string, HubStream>();

    /** The ids each open catch-up delivered last (at most {@link SEEN_LIMIT}), by virtual stream id. */
    readonly #delivered = new Map<string, Set<string>>();

    /** The engine's side of them. */
    readonly #host: CatchUpHost;

    /** Create the set; opens nothing until {@link CatchUps.open}. */
    constructor(host: CatchUpHost) {
        this.#host = host;
    }

    /** How many catch-up streams are open (they count against the connection budget). */
    get size(): number {
        return this.#streams.size;
    }

    /**
     * Open the catch-up of virtual stream `id` on `url` (its parameters and cursor); `live(eventId)` says whether the
     * shared stream forwarded that event since this call; `caughtUp()` runs when the catch-up ends on such an event,
     * which it does not forward (the tab has it): its older events moved the tab's cursor back, and the engine sends
     * the tab the newest event it forwarded it again (issue 52: the cursor a page leaves to the next one).
     */
    open(id: string, url: string, topics: readonly string[], live: (eventId: string) => boolean, caughtUp: () => void): void {
        this.close(id);
        const delivered = new Set<string>();
        const forward = (type: EventMessage["type"]) => (stream: HubStream, event: StreamMessage) => {
            const eventId = event.lastEventId;
            if (eventId !== "" && live(eventId)) {
                this.#end(id, stream);
                return caughtUp();
            }
            if (eventId !== "") {
                delivered.add(eventId);
                // The oldest goes first (a Set keeps insertion order): a race is between the newest events only.
                if (delivered.size > SEEN_LIMIT) delivered.delete(delivered.values().next().value!);
            }
            this.#host.send({ t: "event", w: null, type, data: String(event.data), id: eventId, s: id });
        };
        const stream = new HubStream(this.#host.EventSource, url, [], topics, {
            open: () => undefined,
            message: forward("message"),
            subscription: forward("mercure"),
            error: (failed) => this.#end(id, failed),
        });
        this.#streams.set(id, stream);
        this.#delivered.set(id, delivered);
    }

    /** The shared stream forwarded event `eventId`: the catch-ups that delivered it first have nothing more to give. */
    forwarded(eventId: string): void {
        for (const [id, delivered] of this.#delivered) if (delivered.has(eventId)) this.close(id);
    }

    /** Close the catch-up of virtual stream `id`, if any. */
    close(id: string): void {
        const stream = this.#streams.get(id);
        if (stream !== undefined) this.#end(id, stream);
    }

    /** Close every catch-up stream (the engine stops, or the connection budget needs them). */
    closeAll(): void {
        for (const [id, stream] of this.#streams) this.#end(id, stream);
    }

    /** Retire `stream`, the catch-up of `id`. */
    #end(id: string, stream: HubStream): void {
        stream.retire();
        if (this.#streams.get(id) !== stream) return;
        this.#streams.delete(id);
        this.#delivered.delete(id);
    }
}
