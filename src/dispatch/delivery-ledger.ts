/**
 * Remembers which channels already received each recent event id, so that an update arriving on two
 * streams (during a make-before-break overlap, or replayed after a reconnect) reaches each channel once.
 *
 * Bounded in two generations: the ids of the current one and of the one before, each up to `capacity`, so at
 * least the last `capacity` ids are remembered and none older than the last `2 × capacity`. Every message
 * claims here, so a claim costs two map lookups and, once per `capacity` ids, a new map (no eviction per id).
 */
export class DeliveryLedger {
    /**
     * Event id → the channel it was delivered to, or the channels when more than one (a broadcast names a few): no
     * array for the common single-channel update. For the current generation.
     */
    #current = new Map<string, string | string[]>();

    /** The same for the generation before. */
    #previous = new Map<string, string | string[]>();

    /** How many ids a generation holds. */
    readonly #capacity: number;

    /**
     * Create a ledger that remembers at least the last `capacity` event ids.
     */
    constructor(capacity = 1024) {
        this.#capacity = capacity;
    }

    /**
     * Record that `id` is being delivered to `channel`; returns false when that pair was delivered already.
     */
    claim(id: string, channel: string): boolean {
        const current = this.#current.get(id);
        const channels = current ?? this.#previous.get(id);
        if (channels === undefined) {
            if (this.#current.size >= this.#capacity) {
                this.#previous = this.#current;
                this.#current = new Map();
            }
            this.#current.set(id, channel);
            return true;
        }
        if (channels === channel || (typeof channels !== "string" && channels.includes(channel))) return false;
        const grown = typeof channels === "string" ? [channels, channel] : [...channels, channel];
        // Kept in the generation it was found in (a remembered id stays as old as it was).
        (current !== undefined ? this.#current : this.#previous).set(id, grown);
        return true;
    }

    /**
     * Forget everything (after `disconnect()`).
     */
    clear(): void {
        this.#current.clear();
        this.#previous.clear();
    }
}
