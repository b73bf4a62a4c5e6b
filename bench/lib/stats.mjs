// Small statistics for the bench: every figure is a median over repetitions, latencies are quantiles.

/** The value at quantile `q` (0..1) of `values`, nearest rank; NaN for no values. */
export function quantile(values, q) {
    if (values.length === 0) return Number.NaN;
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median of `values` (the mean of the two middle values for an even count). */
export function median(values) {
    if (values.length === 0) return Number.NaN;
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Poll `probe` every `interval` ms until it returns a truthy value and resolve with it; throw, naming `what`,
 * after `timeout` ms. Every wait of the bench is bounded by one of these.
 */
export async function waitFor(what, probe, { timeout = 30_000, interval = 20 } = {}) {
    const deadline = Date.now() + timeout;
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() >= deadline) throw new Error(`bench: timed out after ${timeout} ms waiting for ${what}`);
        await sleep(interval);
    }
}

/** `promise`, or a rejection naming `what` after `ms` milliseconds (the timer is cleared either way). */
export async function withTimeout(promise, ms, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`bench: timed out after ${ms} ms waiting for ${what}`)), ms);
    });
    try {
        return await Promise.race([promise, timeout]);
    } finally {
        clearTimeout(timer);
    }
}
