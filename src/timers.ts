/**
 * The longest delay `setTimeout` honours. Browsers and Node.js store the delay as a signed 32-bit
 * integer and run any longer delay after 1 ms, so an unclamped long timer fires at once.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Clamp a delay in milliseconds into what `setTimeout` honours: `NaN` and negative values become 0,
 * anything above {@link MAX_TIMER_DELAY_MS} (about 24.8 days) becomes that maximum.
 */
export function clampDelay(ms: number): number {
    return ms > 0 ? Math.min(ms, MAX_TIMER_DELAY_MS) : 0;
}

/**
 * `setTimeout` with its delay clamped by {@link clampDelay}; every timer of the package goes through it.
 */
export function setClampedTimeout(callback: () => void, ms: number): ReturnType<typeof setTimeout> {
    return setTimeout(callback, clampDelay(ms));
}

/**
 * Run one request against a deadline and the caller's `signal`, and resolve with whichever settles first:
 * `send`'s own result, `timedOut()` once `timeout` ms have passed, or `aborted` when `signal` aborts (at once
 * when it already has). The deadline and the abort race the request rather than rely on it, so a `fetch`
 * wrapper that ignores its signal still ends on time; `send` gets the signal of the request's own
 * `AbortController`, which is aborted when the deadline or `signal` beat the request. `send` must not reject:
 * it classifies its own failures. Used by the batch auth request and the presence snapshot, and through
 * `within()` (transport/deadline.ts) by the lazy chunks.
 */
export async function raceDeadline<T>(
    signal: AbortSignal,
    timeout: number,
    send: (signal: AbortSignal) => Promise<T>,
    timedOut: () => T,
    aborted: T,
): Promise<T> {
    if (signal.aborted) return aborted;
    const controller = new AbortController();
    let settle: (result: T) => void = () => undefined;
    const outcome = new Promise<T>((resolve) => (settle = resolve));
    /** The deadline or the caller won: cancel the request, then settle. */
    const cancel = (result: T): void => {
        controller.abort();
        settle(result);
    };
    const abort = () => cancel(aborted);
    signal.addEventListener("abort", abort, { once: true });
    const timer = setClampedTimeout(() => cancel(timedOut()), timeout);
    void send(controller.signal).then(settle);
    try {
        return await outcome;
    } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", abort);
    }
}
