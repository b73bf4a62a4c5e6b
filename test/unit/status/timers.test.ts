import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CookieRefreshTimer, DEFAULT_HUB_TIMEOUTS, earliestHubClose, renewalDelay } from "../../../src/auth/cookie-refresh";
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

describe("the renewal schedule", () => {
    it("counts the reference hub's earliest close from both the token lifetime and the write timeout", () => {
        const hub = DEFAULT_HUB_TIMEOUTS;
        expect([300, 3_600, null, 1e300].map((expiresIn) => earliestHubClose(expiresIn, hub))).toEqual([235_000, 475_000, 475_000, 475_000]);
        expect(earliestHubClose(300, { dispatch: 500, write: 20_000 })).toBe(15_500);
    });

    it("renews 10 % (at least 1 s) before the earliest close, never sooner than 5 s", () => {
        const hub = DEFAULT_HUB_TIMEOUTS;
        expect([300, 3_600, null, 1e300, 6, 1].map((expiresIn) => renewalDelay(expiresIn, hub))).toEqual([211_500, 427_500, 427_500, 427_500, 5_000, 5_000]);
        expect(renewalDelay(10, { dispatch: 500, write: 600_000 })).toBe(6_500);
    });
});

describe("CookieRefreshTimer", () => {
    const hub = DEFAULT_HUB_TIMEOUTS;

    it("renews at the renewal delay counted from the auth request, and reports a renewal after the cookie expired", () => {
        const timer = new CookieRefreshTimer();
        const calls: Array<[number, boolean]> = [];
        const start = Date.now();
        timer.authorized(start, 300);
        timer.arm(hub, (expired) => calls.push([Date.now() - start, expired]));
        vi.advanceTimersByTime(211_500);
        timer.authorized(Date.now() - 1_000, 1); // requested a second ago
        timer.arm(hub, (expired) => calls.push([Date.now() - start, expired]));
        vi.advanceTimersByTime(4_000);
        expect(calls).toEqual([
            [211_500, false],
            [215_500, true], // the 1 s cookie had expired when the 5 s floor let it run
        ]);
    });

    it("replaces an earlier schedule, and arms nothing before an auth", () => {
        const timer = new CookieRefreshTimer();
        let fired = 0;
        timer.arm(hub, () => fired++);
        vi.advanceTimersByTime(3_600_000);
        expect(fired).toBe(0);
        timer.authorized(Date.now(), 300);
        timer.arm(hub, () => (fired += 10));
        timer.arm(hub, () => fired++);
        vi.advanceTimersByTime(211_500);
        expect(fired).toBe(1);
    });

    it("checks the wall clock: runs a renewal that is due or whose cookie expired, once", () => {
        const timer = new CookieRefreshTimer();
        const calls: boolean[] = [];
        timer.authorized(Date.now(), 300);
        timer.arm(hub, (expired) => calls.push(expired));
        expect(timer.check()).toBe(false);
        vi.setSystemTime(Date.now() + 211_500); // the timer has not run: the tab was throttled
        expect(timer.check()).toBe(true);
        expect(timer.check()).toBe(false);
        timer.arm(hub, (expired) => calls.push(expired));
        vi.setSystemTime(Date.now() + 100_000);
        expect(timer.isExpired()).toBe(true);
        expect(timer.check()).toBe(true);
        vi.advanceTimersByTime(3_600_000);
        expect(calls).toEqual([false, true]);
    });

    it("keeps what it knows of the cookie on cancel(), and forgets it on reset()", () => {
        const timer = new CookieRefreshTimer();
        timer.authorized(Date.now() - 301_000, 300);
        timer.cancel();
        expect(timer.isExpired()).toBe(true);
        timer.reset();
        expect(timer.isExpired()).toBe(false);
        timer.authorized(Date.now() - 301_000, null);
        expect(timer.isExpired()).toBe(false); // no lifetime: never known to be expired
    });
});
