import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clampDelay, MAX_TIMER_DELAY_MS, setClampedTimeout } from "../../src/timers";

beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
afterEach(() => vi.useRealTimers());

describe("clamped timers", () => {
    it("clamp delays into what setTimeout honours", () => {
        expect(MAX_TIMER_DELAY_MS).toBe(2_147_483_647);
        expect([clampDelay(-5), clampDelay(Number.NaN), clampDelay(1_000), clampDelay(2 ** 31), clampDelay(Infinity)]).toEqual([
            0,
            0,
            1_000,
            MAX_TIMER_DELAY_MS,
            MAX_TIMER_DELAY_MS,
        ]);
    });

    it("do not fire at once for a delay beyond 2^31 − 1 ms, as a bare setTimeout does", () => {
        let bare = 0;
        let clamped = 0;
        setTimeout(() => bare++, 2 ** 32);
        setClampedTimeout(() => clamped++, 2 ** 32);
        vi.advanceTimersByTime(1_000);
        expect(bare).toBe(1); // the platform's behaviour, which the fake timers reproduce
        expect(clamped).toBe(0);
        vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
        expect(clamped).toBe(1);
    });
});
