/**
 * Bounds of an exponential backoff, in milliseconds.
 */
export interface BackoffRange {
    /** The first delay, and the floor of every delay. */
    min: number;
    /** The ceiling of every delay. */
    max: number;
}

/** The reconnect backoff the connector uses: 1 s doubling up to 30 s. */
export const RECONNECT_BACKOFF: BackoffRange = { min: 1_000, max: 30_000 };

/**
 * Compute the delay before retry number `attempt` (0-based): `min × 2^attempt` capped at `max`, with
 * ±20 % jitter so that many clients dropped at once do not come back in lockstep, clamped to the range.
 */
export function backoff(attempt: number, range: BackoffRange, random: () => number = Math.random): number {
    const exponent = Math.max(0, Math.min(Math.floor(attempt), 30));
    const base = Math.min(range.max, range.min * 2 ** exponent);
    const jittered = base * (0.8 + 0.4 * random());
    return Math.round(Math.min(range.max, Math.max(range.min, jittered)));
}
