import { raceDeadline } from "./timers";

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
    return raceDeadline<Waited<T>>(
        signal,
        ms || 0,
        (inner) =>
            new Promise<T>((run) => run(work(inner))).then(
                (value): Waited<T> => ({ kind: "done", value }),
                (cause: unknown): Waited<T> => ({ kind: "failed", cause }),
            ),
        () => ({ kind: "timeout" }),
        { kind: "aborted" },
    );
}
