import { setClampedTimeout } from "../timers";
import type { HubStream } from "./hub-stream";

/** How long a replaced stream keeps delivering, at most, while it catches up with its replacement. */
export const DRAIN_MS = 1_500;

/** How many event ids a drain remembers per stream while looking for the catch-up point. */
const DRAIN_ID_LIMIT = 4_096;

/**
 * How many replaced streams may drain at once. Each holds a connection: with the current stream and a
 * candidate, three drains hold five of the six a browser allows per host over HTTP/1.1, leaving one for
 * the auth request (whisper streams leave fewer: see {@link StreamSwitch.makeRoom}). More replacements
 * than this within {@link DRAIN_MS} means the channel set churns faster than the hub answers; the oldest
 * drain, which has had the longest chance, ends first.
 */
const MAX_DRAINS = 3;

/**
 * How long a replacement stream may take to open, and then the stream that replaced it when it did not. A
 * stream opens in milliseconds when the hub is reachable; one that waits this long is most likely queued
 * behind the browser's six HTTP/1.1 connections per host, which only a closed stream frees.
 */
export const OPEN_DEADLINE_MS = 4_000;

/**
 * A stream that did not open within {@link OPEN_DEADLINE_MS}:
 * - `replacement`: the candidate; make-before-break cannot finish, so the connector breaks first instead;
 * - `fallback`: the stream that replaced a stalled candidate, with nothing of ours left to close.
 */
export type Stall = "replacement" | "fallback";

/** A replaced stream that still delivers, and the ids it and the newer streams delivered since it was replaced. */
interface Drain {
    stream: HubStream;
    /** Ids the replaced stream delivered. */
    oldIds: Set<string>;
    /** Ids any newer stream (its replacement chain) delivered. */
    newIds: Set<string>;
    timer: ReturnType<typeof setTimeout>;
}

/**
 * The streams of one connector across a make-before-break reopen.
 *
 * - `current`: the stream relied on.
 * - `candidate`: its replacement, opening next to it; it becomes `current` when it opens.
 * - the draining streams: the ones replaced recently. The hub may have written updates to one just
 *   before its replacement registered, and a hub without history never replays them, so each keeps
 *   delivering until it caught up with its replacement chain (it and a newer stream delivered one same
 *   event id: TCP keeps each stream in order, so it has read everything written to it before, and the
 *   newer stream gets everything after) or {@link DRAIN_MS} passed since it was replaced. Several reopens
 *   close together leave several streams draining, each on its own clock.
 *
 * A candidate that has not opened within {@link OPEN_DEADLINE_MS} is reported as stalled (the connector
 * then closes everything and opens one stream, which is watched the same way), so that make-before-break
 * never waits forever for a connection its own streams hold. {@link StreamSwitch.makeRoom} keeps the
 * streams within the connection budget before a new one is created.
 *
 * Every stream leaving the switch is retired, which silences its callbacks.
 */
export class StreamSwitch {
    /** The stream relied on, or null. */
    current: HubStream | null = null;

    /** The replacement opening next to {@link StreamSwitch.current}, or null. */
    candidate: HubStream | null = null;

    /** The replaced streams still delivering, oldest first (at most {@link MAX_DRAINS}). */
    readonly #drains: Drain[] = [];

    /** Hears of a watched stream that missed its open deadline. */
    readonly #stalled: (stream: HubStream, stall: Stall) => void;

    /** Hears of each drain that ends. */
    readonly #drained: ((stream: HubStream) => void) | undefined;

    /** The open deadline of each watched stream (a candidate, or a fallback stream) until it opens or leaves. */
    readonly #deadlines = new Map<HubStream, ReturnType<typeof setTimeout>>();

    /**
     * Create an empty switch; `stalled` hears of a watched stream that missed its open deadline while
     * still held (never after it opened or was retired), `drained` of each drain that ends (for the `debug` log).
     */
    constructor(stalled: (stream: HubStream, stall: Stall) => void = () => undefined, drained?: (stream: HubStream) => void) {
        this.#stalled = stalled;
        this.#drained = drained;
    }

    /**
     * The stream the next reopen is compared with: the candidate if there is one, else the current one.
     */
    latest(): HubStream | null {
        return this.candidate ?? this.current;
    }

    /**
     * The {@link StreamSwitch.latest} stream when it subscribes to exactly `topics`, in this order (a
     * refresh then keeps it), else null.
     */
    carrying(topics: readonly string[]): HubStream | null {
        const live = this.latest();
        return live !== null && live.topics.length === topics.length && live.topics.every((topic, index) => topic === topics[index]) ? live : null;
    }

    /**
     * Take a newly created stream: it is `current` when there is none, else the candidate (an older
     * candidate that never opened is retired). A candidate is watched for its open deadline, and so is a
     * `fallback` stream (the one that replaced a stalled candidate).
     */
    add(stream: HubStream, fallback = false): void {
        this.retireCandidate();
        if (this.current === null) this.current = stream;
        else this.candidate = stream;
        if (stream === this.candidate || fallback) this.#watch(stream, stream === this.candidate ? "replacement" : "fallback");
    }

    /**
     * Make room for one new stream among at most `room` held ones (the connection budget less the whisper
     * streams): the candidate goes (the new stream replaces it), the oldest drains end early, and when the
     * current stream alone leaves no room it is retired too, so the new stream breaks before it makes.
     * Returns the current stream it retired, or null.
     */
    makeRoom(room: number): HubStream | null {
        this.retireCandidate();
        this.trimDrains(room - 1);
        const current = this.current;
        if (current === null || this.held() < room) return null;
        this.retireCurrent();
        return current;
    }

    /**
     * End the oldest drains until at most `room` streams are held (a whisper stream needs the connection).
     */
    trimDrains(room: number): void {
        for (let oldest = this.#drains[0]; oldest !== undefined && this.held() > room; oldest = this.#drains[0]) this.endDrain(oldest.stream);
    }

    /**
     * A stream fired `open`; a candidate is promoted and the stream it replaces starts draining. Returns
     * true when `stream` is now the current stream.
     */
    opened(stream: HubStream): boolean {
        this.#unwatch(stream);
        if (stream === this.candidate) {
            this.#startDrain(this.current);
            this.current = stream;
            this.candidate = null;
        }
        return stream === this.current;
    }

    /**
     * Note that `stream` delivered event `id`; ends every drain that caught up with a newer stream through it.
     */
    delivered(stream: HubStream, id: string): void {
        if (this.#drains.length === 0) return;
        for (const drain of [...this.#drains]) {
            if (drain.stream === stream) {
                if (drain.newIds.has(id)) this.endDrain(stream);
                else if (drain.oldIds.size < DRAIN_ID_LIMIT) drain.oldIds.add(id);
            } else if (stream.id > drain.stream.id) {
                // A stream created after the drained one: its replacement or a later one.
                if (drain.oldIds.has(id)) this.endDrain(drain.stream);
                else if (drain.newIds.size < DRAIN_ID_LIMIT) drain.newIds.add(id);
            }
        }
    }

    /**
     * Whether `stream` is draining.
     */
    isDraining(stream: HubStream): boolean {
        return this.#drains.some((drain) => drain.stream === stream);
    }

    /**
     * Retire a draining stream now; every draining stream when none is given.
     */
    endDrain(stream?: HubStream): void {
        for (const drain of [...this.#drains]) {
            if (stream !== undefined && drain.stream !== stream) continue;
            clearTimeout(drain.timer);
            drain.stream.retire();
            this.#drains.splice(this.#drains.indexOf(drain), 1);
            this.#drained?.(drain.stream);
        }
    }

    /**
     * A stream reported an error (`closed`: it will not reconnect by itself). Retires what can no longer
     * serve and says what the error means for the connection:
     * - `ignored`: a draining stream (retired: it was replaced anyway), a candidate retrying by itself, a
     *   stream no longer held;
     * - `replacement_refused`: the candidate gave up (retired); the current stream still serves;
     * - `interrupted`: the current stream is reconnecting by itself;
     * - `closed`: the current stream gave up (retired); a pending candidate may still take over.
     */
    failed(stream: HubStream, closed: boolean): "ignored" | "replacement_refused" | "interrupted" | "closed" {
        if (this.isDraining(stream)) {
            this.endDrain(stream);
            return "ignored";
        }
        if (stream === this.candidate) {
            if (!closed) return "ignored";
            this.retireCandidate();
            return "replacement_refused";
        }
        if (stream !== this.current) return "ignored";
        if (!closed) return "interrupted";
        this.retireCurrent();
        return "closed";
    }

    /**
     * Retire the candidate (it was refused, or a newer one replaces it).
     */
    retireCandidate(): void {
        if (this.candidate !== null) this.#retire(this.candidate);
        this.candidate = null;
    }

    /**
     * Retire the current stream (it failed for good); a pending candidate may still take over.
     */
    retireCurrent(): void {
        if (this.current !== null) this.#retire(this.current);
        this.current = null;
    }

    /**
     * Retire every stream.
     */
    closeAll(): void {
        this.endDrain();
        this.retireCandidate();
        this.retireCurrent();
    }

    /** How many streams are held: current, candidate and draining. */
    held(): number {
        return (this.current === null ? 0 : 1) + (this.candidate === null ? 0 : 1) + this.#drains.length;
    }

    /** Report `stream` as stalled if it is still held and has not opened {@link OPEN_DEADLINE_MS} from now. */
    #watch(stream: HubStream, stall: Stall): void {
        const timer = setClampedTimeout(() => {
            this.#deadlines.delete(stream);
            if (stream === this.candidate || stream === this.current) this.#stalled(stream, stall);
        }, OPEN_DEADLINE_MS);
        this.#deadlines.set(stream, timer);
    }

    /** Forget the open deadline of `stream` (it opened, or leaves). */
    #unwatch(stream: HubStream): void {
        clearTimeout(this.#deadlines.get(stream));
        this.#deadlines.delete(stream);
    }

    /** Retire a stream that leaves the switch. */
    #retire(stream: HubStream): void {
        this.#unwatch(stream);
        stream.retire();
    }

    /** Let `stream` keep delivering until it caught up, or for {@link DRAIN_MS}. */
    #startDrain(stream: HubStream | null): void {
        if (stream === null) return;
        const timer = setClampedTimeout(() => this.endDrain(stream), DRAIN_MS);
        this.#drains.push({ stream, oldIds: new Set(), newIds: new Set(), timer });
        const oldest = this.#drains[0];
        if (this.#drains.length > MAX_DRAINS && oldest !== undefined) this.endDrain(oldest.stream);
    }
}
