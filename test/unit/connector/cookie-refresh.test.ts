import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_HUB_TIMEOUTS, renewalDelay } from "../../../src/auth/cookie-refresh";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, envelope, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the proactive cookie refresh", () => {
    const renewal = renewalDelay(300, DEFAULT_HUB_TIMEOUTS);

    it("re-authorizes before the hub may close the stream and reopens make-before-break with the cursor", async () => {
        const h = createHarness();
        h.connector.privateChannel("a");
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        first.emitMessage(envelope(["private-a"], "x"), "urn:7");
        await vi.advanceTimersByTimeAsync(renewal - 1);
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.auth.lastNames()).toEqual(["private-a"]);
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(second.param("last_event_id")).toBe("urn:7");
        expect(first.closed).toBe(false);
        second.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
        await vi.advanceTimersByTimeAsync(renewal - 1_500);
        expect(h.auth.requests).toHaveLength(3);
    });

    it("waits at least 5 seconds", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, { expires_in: 2 });
        h.connector.channel("a");
        await h.flush();
        await vi.advanceTimersByTimeAsync(4_900);
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(100);
        expect(h.auth.requests).toHaveLength(2);
    });

    it("without a usable expires_in, renews only for the hub's write timeout", async () => {
        for (const expiresIn of [undefined, 0, -5, "300", Number.NaN]) {
            const h = createHarness();
            h.auth.handler = (names) => grant(names, { expires_in: expiresIn });
            h.connector.channel("a");
            await h.flush();
            await vi.advanceTimersByTimeAsync(renewalDelay(null, DEFAULT_HUB_TIMEOUTS) - 1);
            expect(h.auth.requests).toHaveLength(1);
            await vi.advanceTimersByTimeAsync(1);
            expect(h.auth.requests).toHaveLength(2);
            h.connector.disconnect();
        }
    });

    it("rebuilds the connection make-before-break when it fires after the cookie expired (the machine slept)", async () => {
        const h = createHarness();
        const subscribed: number[] = [];
        h.connector.privateChannel("a").subscribed(() => subscribed.push(Date.now()));
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        h.auth.hold();
        vi.setSystemTime(Date.now() + 400_000); // the wall clock jumps, timers fire late
        await vi.advanceTimersByTimeAsync(renewal);
        expect(h.connector.connectionStatus()).toBe("reconnecting"); // the old stream is not relied on any more
        expect(first.closed).toBe(false); // but it delivers what it still gets until the replacement opens
        h.auth.release();
        await h.flush();
        h.EventSource.last().emitOpen();
        expect(subscribed).toHaveLength(2);
        expect(h.connector.connectionStatus()).toBe("connected");
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
    });

    it("does nothing after disconnect()", async () => {
        const h = createHarness();
        h.connector.channel("a");
        await h.flush();
        h.connector.disconnect();
        await vi.advanceTimersByTimeAsync(600_000);
        expect(h.auth.requests).toHaveLength(1);
    });
});

/** Time from now until the next auth request, in 100 ms steps, up to `limit` ms. */
async function timeToNextAuth(h: ReturnType<typeof createHarness>, limit: number): Promise<number> {
    const before = h.auth.requests.length;
    for (let waited = 0; waited <= limit; waited += 100) {
        if (h.auth.requests.length > before) return waited;
        await vi.advanceTimersByTimeAsync(100);
    }
    throw new Error(`no auth request within ${limit} ms`);
}

describe("the stream renewal against the reference hub's closing times", () => {
    it("does not loop on an expires_in beyond the 24.8-day timer limit, and still renews within the hub's write timeout", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, { expires_in: 60 * 24 * 3600 }); // subscribe_expiration of 60 days
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        await vi.advanceTimersByTimeAsync(200);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        // [spec] mercure-hub §1.5: whatever the token says, the hub may end the stream at 0.8 × 600 s − 5 s.
        const waited = await timeToNextAuth(h, 475_000);
        expect(waited).toBeLessThanOrEqual(475_000 * 0.9);
        expect(h.auth.requests).toHaveLength(2);
    });

    it("replaces a 300 s cookie's stream well before 0.8 × 300 s − 5 s = 235 s", async () => {
        const h = createHarness();
        h.connector.privateChannel("a");
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        const waited = await timeToNextAuth(h, 235_000);
        expect(waited).toBeGreaterThanOrEqual(200_000);
        expect(waited).toBeLessThanOrEqual(235_000 * 0.9);
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        second.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
    });

    it("replaces an hour-long cookie's stream before the write timeout's 475 s", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, { expires_in: 3_600 });
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        const waited = await timeToNextAuth(h, 475_000);
        expect(waited).toBeLessThanOrEqual(475_000 * 0.9);
    });

    it("follows the hubTimeouts option for a hub with other timings", async () => {
        const h = createHarness({ hubTimeouts: { dispatch: 500, write: 20_000 } });
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        // 0.8 × min(300 s, 20 s) − 0.5 s = 15.5 s
        const waited = await timeToNextAuth(h, 15_500);
        expect(waited).toBeLessThanOrEqual(15_500 - 1_000);
        const short = createHarness({ hubTimeouts: { dispatch: 500 } });
        short.auth.handler = (names) => grant(names, { expires_in: 10 });
        short.connector.channel("a");
        await short.flush();
        short.stream().emitOpen();
        // 0.8 × 10 s − 0.5 s = 7.5 s
        expect(await timeToNextAuth(short, 7_500)).toBeLessThanOrEqual(7_500 - 1_000);
    });
});

describe("the wall-clock check after a sleep", () => {
    /** A private channel on an open stream, with a count of its subscribed() calls. */
    async function sleeper() {
        const h = createHarness();
        let subscribed = 0;
        h.connector.privateChannel("a").subscribed(() => subscribed++);
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        return { h, first, subscribed: () => subscribed };
    }

    it("does not accept a native reconnect made with an expired cookie: it re-authorizes and reopens make-before-break", async () => {
        const { h, first, subscribed } = await sleeper();
        first.emitError(false); // the connection dropped as the machine went to sleep
        vi.setSystemTime(Date.now() + 400_000); // it wakes 400 s later; no timer has run yet
        first.emitOpen(); // the EventSource reconnected by itself, with the expired cookie
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        expect(subscribed()).toBe(1);
        await h.flush();
        expect(h.auth.requests).toHaveLength(2);
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(first.closed).toBe(false);
        second.emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
        expect(subscribed()).toBe(2);
    });

    for (const signal of ["online", "visibilitychange", "pageshow"] as const) {
        it(`re-authorizes at once on ${signal} when the cookie expired during the sleep`, async () => {
            const { h, first } = await sleeper();
            vi.setSystemTime(Date.now() + 400_000);
            (signal === "visibilitychange" ? document : window).dispatchEvent(new Event(signal));
            await h.flush();
            expect(h.auth.requests).toHaveLength(2);
            expect(h.connector.connectionStatus()).toBe("reconnecting");
            h.EventSource.last().emitOpen();
            expect(h.connector.connectionStatus()).toBe("connected");
            expect(first.closed).toBe(false); // it drains
        });
    }

    it("renews make-before-break, still connected, when only the renewal deadline passed (a throttled tab)", async () => {
        const { h, first, subscribed } = await sleeper();
        vi.setSystemTime(Date.now() + 230_000);
        document.dispatchEvent(new Event("visibilitychange"));
        await h.flush();
        expect(h.auth.requests).toHaveLength(2);
        expect(h.connector.connectionStatus()).toBe("connected");
        h.EventSource.last().emitOpen();
        expect(subscribed()).toBe(1);
        expect(first.closed).toBe(false);
    });

    it("does nothing on these signals before the renewal is due, nor after disconnect()", async () => {
        const { h } = await sleeper();
        vi.setSystemTime(Date.now() + 60_000);
        window.dispatchEvent(new Event("online"));
        document.dispatchEvent(new Event("visibilitychange"));
        window.dispatchEvent(new Event("pageshow"));
        await h.flush();
        expect(h.auth.requests).toHaveLength(1);
        h.connector.disconnect();
        vi.setSystemTime(Date.now() + 400_000);
        window.dispatchEvent(new Event("online"));
        document.dispatchEvent(new Event("visibilitychange"));
        window.dispatchEvent(new Event("pageshow"));
        await h.flush();
        expect(h.auth.requests).toHaveLength(1);
    });

    it("adds its window listeners at first use, not at construction, and removes them on disconnect()", async () => {
        const added = vi.spyOn(window, "addEventListener");
        const removed = vi.spyOn(window, "removeEventListener");
        const h = createHarness();
        const types = (spy: typeof added) => spy.mock.calls.map((call) => call[0]).filter((type) => type === "online" || type === "pageshow");
        expect(types(added)).toEqual([]);
        h.connector.channel("a");
        await h.flush();
        expect(types(added).sort()).toEqual(["online", "pageshow"]);
        h.connector.disconnect();
        expect(types(removed).sort()).toEqual(["online", "pageshow"]);
        added.mockRestore();
        removed.mockRestore();
    });
});
