import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CookieRefreshTimer } from "../../../src/auth/cookie-refresh";
import { ReconnectTimer, STABLE_CONNECTION_MS } from "../../../src/status/reconnect-timer";

beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.spyOn(Math, "random").mockReturnValue(0.5);
});
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
});

describe("ReconnectTimer", () => {
    it("keeps one pending retry, doubling the delay per attempt", () => {
        const timer = new ReconnectTimer({ min: 100, max: 1_000 });
        const fired: number[] = [];
        timer.schedule(() => fired.push(Date.now()));
        timer.schedule(() => fired.push(-1)); // ignored: one pending at a time
        vi.advanceTimersByTime(100);
        timer.schedule(() => fired.push(Date.now()));
        vi.advanceTimersByTime(200);
        expect(fired.map((at) => at - fired[0]!)).toEqual([0, 200]);
    });

    it("starts over only after a connection stayed up", () => {
        const timer = new ReconnectTimer({ min: 100, max: 1_000 });
        let fired = 0;
        for (let i = 0; i < 3; i++) {
            timer.schedule(() => fired++);
            vi.advanceTimersByTime(1_000);
        }
        let up = false;
        timer.connected(() => up);
        vi.advanceTimersByTime(STABLE_CONNECTION_MS);
        timer.schedule(() => fired++);
        vi.advanceTimersByTime(799);
        expect(fired).toBe(3); // still 800 ms: the connection did not stay up
        vi.advanceTimersByTime(1);
        up = true;
        timer.connected(() => up);
        vi.advanceTimersByTime(STABLE_CONNECTION_MS);
        timer.schedule(() => fired++);
        vi.advanceTimersByTime(100);
        expect(fired).toBe(5);
    });

    it("runs the pending retry at once on retryNow(), and forgets it on cancel()", () => {
        const timer = new ReconnectTimer();
        let fired = 0;
        expect(timer.retryNow()).toBe(false);
        timer.schedule(() => fired++);
        expect(timer.retryNow()).toBe(true);
        expect(fired).toBe(1);
        timer.schedule(() => fired++);
        timer.cancel();
        vi.advanceTimersByTime(60_000);
        expect(fired).toBe(1);
        expect(timer.isPending()).toBe(false);
    });
});

describe("CookieRefreshTimer", () => {
    it("fires at 80 % of expires_in, at least 5 s, and reports a late firing", () => {
        const timer = new CookieRefreshTimer();
        const calls: Array<[number, boolean]> = [];
        const start = Date.now();
        timer.arm(300, (late) => calls.push([Date.now() - start, late]));
        vi.advanceTimersByTime(240_000);
        timer.arm(1, (late) => calls.push([Date.now() - start, late]));
        vi.advanceTimersByTime(5_000);
        expect(calls).toEqual([
            [240_000, false],
            [245_000, true], // the 1 s cookie had expired when the 5 s floor let it fire
        ]);
    });

    it("schedules nothing without a lifetime and replaces an earlier schedule", () => {
        const timer = new CookieRefreshTimer();
        let fired = 0;
        timer.arm(10, () => fired++);
        timer.arm(null, () => fired++);
        vi.advanceTimersByTime(3_600_000);
        expect(fired).toBe(0);
    });
});
