/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How long and how often {@link waitUntil} polls. */
export interface WaitOptions {
    /** Deadline in milliseconds. Default 5000. */
    timeout?: number;
    /** Delay between probes in milliseconds. Default 25. */
    interval?: number;
}

/**
 * Poll `probe` until it returns a truthy value and resolve with it; past the deadline, throw an error that
 * says what was awaited and shows the last value seen (`describe` may summarize it).
 */
export async function waitUntil<T>(
    what: string,
    probe: () => T | Promise<T>,
    options: WaitOptions & { describe?: () => unknown } = {},
): Promise<NonNullable<T>> {
    const timeout = options.timeout ?? 5_000;
    const interval = options.interval ?? 25;
    const deadline = Date.now() + timeout;
    let last: T | undefined;
    for (;;) {
        last = await probe();
        if (last) return last as NonNullable<T>;
        if (Date.now() >= deadline) break;
        await sleep(interval);
    }
    const seen = options.describe !== undefined ? await options.describe() : last;
    throw new Error(`Timed out after ${timeout} ms waiting for ${what}; last seen: ${JSON.stringify(seen)}`);
}
