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
