/**
 * Remembers which channels already received each recent event id, so that an update arriving on two
 * streams (during a make-before-break overlap, or replayed after a reconnect) reaches each channel once.
 *
 * Bounded in two generations: the ids of the current one and of the one before, each up to `capacity`, so at
 * least the last `capacity` ids are remembered and none older than the last `2 × capacity`. Every message
 * claims here, so a claim costs two map lookups and, once per `capacity` ids, a new map (no eviction per id).
 */
export class DeliveryLedger {
    /** Event id → the channels it was delivered to (a broadcast names a few), for the current generation. */
    private current = new Map<string, string[]>();

    /** The same for the generation before. */
    private previous = new Map<string, string[]>();

    /**
     * Create a ledger that remembers at least the last `capacity` event ids.
     */
    constructor(private readonly capacity = 1024) {}

    /**
     * Record that `id` is being delivered to `channel`; returns false when that pair was delivered already.
     */
    claim(id: string, channel: string): boolean {
        let channels = this.current.get(id) ?? this.previous.get(id);
        if (channels === undefined) {
            if (this.current.size >= this.capacity) {
                this.previous = this.current;
                this.current = new Map();
            }
            channels = [];
            this.current.set(id, channels);
        }
        if (channels.includes(channel)) return false;
        channels.push(channel);
        return true;
    }

    /**
     * Forget everything (after `disconnect()`).
     */
    clear(): void {
        this.current.clear();
        this.previous.clear();
    }
}
