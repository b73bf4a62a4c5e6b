/** Poll `condition` every 10 ms until it holds; throws with `what` after `timeout` ms. */
export async function waitFor(condition: () => boolean, what: string, timeout = 5_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
        await sleep(10);
    }
}

/** Wait `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
