import { setClampedTimeout } from "../timers";

/**
 * Run one request against a deadline and the caller's `signal`, and resolve with whichever settles first:
 * `send`'s own result, `timedOut()` once `timeout` ms have passed, or `aborted` when `signal` aborts (at once
 * when it already has). The deadline and the abort race the request rather than rely on it, so a `fetch`
 * wrapper that ignores its signal still ends on time; `send` gets the signal of the request's own
 * `AbortController`, which is aborted when the deadline or `signal` beat the request. `send` must not reject:
 * it classifies its own failures. Used by the batch auth request and the presence snapshot.
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
