import type { HubStream } from "./hub-stream";

/** How long a replaced stream keeps delivering, at most, while it catches up with its replacement. */
export const DRAIN_MS = 1_500;

/** How many event ids a drain remembers per stream while looking for the catch-up point. */
const DRAIN_ID_LIMIT = 4_096;

/** A replaced stream that still delivers, and the ids each side delivered since the switch. */
interface Drain {
    stream: HubStream;
    oldIds: Set<string>;
    newIds: Set<string>;
    timer: ReturnType<typeof setTimeout>;
}

/**
 * The streams of one connector across a make-before-break reopen.
 *
 * - `current`: the stream relied on.
 * - `candidate`: its replacement, opening next to it; it becomes `current` when it opens.
 * - the draining stream: the one just replaced. The hub may have written updates to it just before
 *   the replacement registered, and a hub without history never replays them, so it keeps delivering
 *   until it caught up (both streams delivered one same event id: TCP keeps each stream in order, so
 *   it has read everything written to it before) or {@link DRAIN_MS} passed.
 *
 * Every stream leaving the switch is retired, which silences its callbacks.
 */
export class StreamSwitch {
    /** The stream relied on, or null. */
    current: HubStream | null = null;

    /** The replacement opening next to {@link StreamSwitch.current}, or null. */
    candidate: HubStream | null = null;

    /** The replaced stream still delivering, or null. */
    private drain: Drain | null = null;

    /**
     * The stream the next reopen is compared with: the candidate if there is one, else the current one.
     */
    latest(): HubStream | null {
        return this.candidate ?? this.current;
    }

    /**
     * Take a newly created stream: it is `current` when there is none, else the candidate (an older
     * candidate that never opened is retired).
     */
    add(stream: HubStream): void {
        this.retireCandidate();
        if (this.current === null) this.current = stream;
        else this.candidate = stream;
    }

    /**
     * A stream fired `open`; a candidate is promoted and the stream it replaces starts draining. Returns
     * true when `stream` is now the current stream.
     */
    opened(stream: HubStream): boolean {
        if (stream === this.candidate) {
            this.startDrain(this.current);
            this.current = stream;
            this.candidate = null;
        }
        return stream === this.current;
    }

    /**
     * Note that `stream` delivered event `id`; ends the drain once both streams have delivered it.
     */
    delivered(stream: HubStream, id: string): void {
        const drain = this.drain;
        if (drain === null) return;
        const [mine, theirs] = stream === drain.stream ? [drain.oldIds, drain.newIds] : [drain.newIds, drain.oldIds];
        if (theirs.has(id)) this.endDrain();
        else if (mine.size < DRAIN_ID_LIMIT) mine.add(id);
    }

    /**
     * Whether `stream` is the draining one.
     */
    isDraining(stream: HubStream): boolean {
        return this.drain?.stream === stream;
    }

    /**
     * Retire the draining stream now.
     */
    endDrain(): void {
        if (this.drain === null) return;
        clearTimeout(this.drain.timer);
        this.drain.stream.retire();
        this.drain = null;
    }

    /**
     * Retire the candidate (it was refused, or a newer one replaces it).
     */
    retireCandidate(): void {
        this.candidate?.retire();
        this.candidate = null;
    }

    /**
     * Retire the current stream (it failed for good); a pending candidate may still take over.
     */
    retireCurrent(): void {
        this.current?.retire();
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

    /** Let `stream` keep delivering until it caught up, or for {@link DRAIN_MS}. */
    private startDrain(stream: HubStream | null): void {
        this.endDrain(); // A drain older than this one has had its chance.
        if (stream === null) return;
        const timer = setTimeout(() => this.endDrain(), DRAIN_MS);
        this.drain = { stream, oldIds: new Set(), newIds: new Set(), timer };
    }
}
