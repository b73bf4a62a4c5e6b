/**
 * Remembers which channels already received each recent event id, so that an update arriving on two
 * streams (during a make-before-break overlap, or replayed after a reconnect) reaches each channel once.
 *
 * Bounded: only the last `capacity` ids are kept, oldest forgotten first.
 */
export class DeliveryLedger {
    /** Event id → channels it was delivered to; insertion order is age order. */
    private readonly delivered = new Map<string, Set<string>>();

    /**
     * Create a ledger that remembers the last `capacity` event ids.
     */
    constructor(private readonly capacity = 1024) {}

    /**
     * Record that `id` is being delivered to `channel`; returns false when that pair was delivered already.
     */
    claim(id: string, channel: string): boolean {
        let channels = this.delivered.get(id);
        if (channels === undefined) {
            channels = new Set();
            this.delivered.set(id, channels);
            if (this.delivered.size > this.capacity) {
                const oldest = this.delivered.keys().next().value;
                if (oldest !== undefined) this.delivered.delete(oldest);
            }
        }
        if (channels.has(channel)) return false;
        channels.add(channel);
        return true;
    }

    /**
     * Forget everything (after `disconnect()`).
     */
    clear(): void {
        this.delivered.clear();
    }
}
