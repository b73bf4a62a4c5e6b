/**
 * User callbacks (`error()`, `subscribed()`, `onConnectionChange()`) held back until the connector's
 * state is settled.
 *
 * The connector changes its state first and defers every user callback here; each of its entry points
 * (a public method, a stream event, a timer, an auth answer) flushes the queue as its last step. A
 * callback that calls back into the connector (`disconnect()` on `auth_rejected`, say) therefore finds
 * a consistent state, and nothing the connector was doing carries on behind it. Callbacks deferred while
 * the queue flushes run in the same flush, in order.
 */
export class CallbackQueue {
    /** Callbacks waiting for the next flush, in order. */
    readonly #pending: Array<() => void> = [];

    /** Whether a flush is running (a nested flush returns at once; the running one continues). */
    #flushing = false;

    /** How many {@link CallbackQueue.run} calls are in progress; the outermost flushes. */
    #depth = 0;

    /**
     * Run a state change, then flush, unless it runs inside another `run()`: the outermost one flushes,
     * once the whole change is done.
     */
    run<T>(change: () => T): T {
        this.#depth++;
        try {
            return change();
        } finally {
            if (--this.#depth === 0) this.flush();
        }
    }

    /**
     * Queue a callback for the next flush.
     */
    defer(callback: () => void): void {
        this.#pending.push(callback);
    }

    /**
     * Run the queued callbacks, and those they queue, in order.
     */
    flush(): void {
        if (this.#flushing) return;
        this.#flushing = true;
        try {
            for (let next = this.#pending.shift(); next !== undefined; next = this.#pending.shift()) next();
        } finally {
            this.#flushing = false;
        }
    }
}
