import { setClampedTimeout } from "../timers";

/**
 * How a bounded wait ended: the work's value, its failure, the deadline, or the caller's abort.
 */
export type Waited<T> =
    | { kind: "done"; value: T }
    | { kind: "failed"; cause: unknown }
    | { kind: "timeout" }
    | { kind: "aborted" };

/**
 * Run `work` and wait for it at most `ms` milliseconds, or until `signal` aborts; never rejects.
 *
 * The deadline does not rely on the work honouring its own signal (a `fetch` wrapper may ignore it):
 * the wait ends on time regardless, and the work's signal is aborted so that a well-behaved one stops.
 */
export function within<T>(work: (signal: AbortSignal) => T | PromiseLike<T>, ms: number, signal: AbortSignal): Promise<Waited<T>> {
    const inner = new AbortController();
    return new Promise<Waited<T>>((resolve) => {
        if (signal.aborted) return resolve({ kind: "aborted" });
        const finish = (result: Waited<T>) => {
            clearTimeout(timer);
            signal.removeEventListener("abort", onAbort);
            if (result.kind === "timeout" || result.kind === "aborted") inner.abort();
            resolve(result);
        };
        const onAbort = () => finish({ kind: "aborted" });
        // Clamped: a deadline past what a timer can wait is capped there instead of overflowing to "at once".
        const timer = setClampedTimeout(() => finish({ kind: "timeout" }), ms || 0);
        signal.addEventListener("abort", onAbort);
        new Promise<T>((run) => run(work(inner.signal))).then(
            (value) => finish({ kind: "done", value }),
            (cause: unknown) => finish({ kind: "failed", cause }),
        );
    });
}
