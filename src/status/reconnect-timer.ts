import { setClampedTimeout } from "../timers";
import { backoff, RECONNECT_BACKOFF, type BackoffRange } from "./backoff";

/** A stream must stay open this long before the reconnect backoff starts again from its minimum. */
export const STABLE_CONNECTION_MS = 5_000;

/**
 * The one pending reconnect of a connector: jittered exponential backoff between attempts, reset only
 * once a connection has stayed up for {@link STABLE_CONNECTION_MS} (a hub that accepts and then drops
 * every stream must not be hammered every second).
 */
export class ReconnectTimer {
    /** Attempts since the last stable connection. */
    #attempt = 0;

    /** The pending retry and its callback. */
    #pending: { timer: ReturnType<typeof setTimeout>; retry: () => void } | null = null;

    /** Resets the attempt count once a connection has stayed up. */
    #stableTimer: ReturnType<typeof setTimeout> | undefined;

    /** The backoff range between attempts. */
    readonly #range: BackoffRange;

    /**
     * Create a timer with the given backoff range.
     */
    constructor(range: BackoffRange = RECONNECT_BACKOFF) {
        this.#range = range;
    }

    /**
     * Whether a retry is pending.
     */
    isPending(): boolean {
        return this.#pending !== null;
    }

    /**
     * Call `retry` after the next backoff delay; does nothing while a retry is pending.
     */
    schedule(retry: () => void): void {
        if (this.#pending !== null) return;
        const timer = setClampedTimeout(() => {
            this.#pending = null;
            retry();
        }, backoff(this.#attempt++, this.#range));
        this.#pending = { timer, retry };
    }

    /**
     * Run the pending retry now (the browser came back online); false when none is pending.
     */
    retryNow(): boolean {
        const pending = this.#pending;
        if (pending === null) return false;
        this.cancel();
        pending.retry();
        return true;
    }

    /**
     * Drop the pending retry (a refresh is running anyway).
     */
    cancel(): void {
        clearTimeout(this.#pending?.timer);
        this.#pending = null;
    }

    /**
     * A connection opened: start the backoff over if `stillUp()` holds {@link STABLE_CONNECTION_MS} later.
     */
    connected(stillUp: () => boolean): void {
        clearTimeout(this.#stableTimer);
        this.#stableTimer = setClampedTimeout(() => {
            this.#stableTimer = undefined;
            if (stillUp()) this.#attempt = 0;
        }, STABLE_CONNECTION_MS);
    }

    /**
     * Forget everything: no pending retry, backoff from its minimum (after `disconnect()`).
     */
    reset(): void {
        this.cancel();
        clearTimeout(this.#stableTimer);
        this.#stableTimer = undefined;
        this.#attempt = 0;
    }
}
