import type { Update } from "./update";

/** The reserved cursor meaning "from the start of retained history". */
export const EARLIEST = "earliest";

/** What a cursor resolves to. */
export interface Replay {
    /** Value of the `Mercure-Last-Event-ID` response header. */
    readonly lastEventId: string;
    /** Retained updates after the cursor, oldest first (not yet filtered for the subscriber). */
    readonly updates: readonly Update[];
}

/** Bounded in-memory history of dispatched updates, used to replay after a cursor. */
export class History {
    /** Retained updates, oldest first. */
    private readonly entries: Update[] = [];

    /** Id of the last dispatched update (tracked even when retention is off), or `null` before the first. */
    private last: string | null = null;

    /** Create a history; with `enabled` false nothing is retained (like the Go hub's local transport). */
    constructor(
        private readonly enabled: boolean,
        private readonly size: number,
    ) {}

    /** Record a dispatched update, evicting the oldest beyond the size limit. */
    add(update: Update): void {
        this.last = update.id;
        if (!this.enabled) return;
        this.entries.push(update);
        if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size);
    }

    /** Id of the last dispatched update, or `earliest` when none. */
    get lastEventId(): string {
        return this.last ?? EARLIEST;
    }

    /**
     * Resolve a cursor: `earliest` replays everything retained; a known id replays what follows its earliest
     * occurrence; an unknown id (or disabled history) replays nothing and answers `earliest`.
     */
    replay(cursor: string): Replay {
        // [spec] §1.4: Mercure-Last-Event-ID is the id just before the first event sent, or `earliest`.
        if (!this.enabled) return { lastEventId: EARLIEST, updates: [] };
        if (cursor === EARLIEST) return { lastEventId: EARLIEST, updates: [...this.entries] };
        const index = this.entries.findIndex((update) => update.id === cursor);
        if (index === -1) return { lastEventId: EARLIEST, updates: [] };
        return { lastEventId: cursor, updates: this.entries.slice(index + 1) };
    }
}
