import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, envelope, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the proactive cookie refresh", () => {
    it("re-authorizes at 80 % of expires_in and reopens make-before-break with the cursor", async () => {
        const h = createHarness();
        h.connector.privateChannel("a");
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        first.emitMessage(envelope(["private-a"], "x"), "urn:7");
        await vi.advanceTimersByTimeAsync(239_000);
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.auth.lastNames()).toEqual(["private-a"]);
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(second.param("last_event_id")).toBe("urn:7");
        expect(first.closed).toBe(false);
        second.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
        await vi.advanceTimersByTimeAsync(238_500);
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

    it("is not scheduled without a usable expires_in", async () => {
        for (const expiresIn of [undefined, 0, -5, "300", Number.NaN]) {
            const h = createHarness();
            h.auth.handler = (names) => grant(names, { expires_in: expiresIn });
            h.connector.channel("a");
            await h.flush();
            await vi.advanceTimersByTimeAsync(3_600_000);
            expect(h.auth.requests).toHaveLength(1);
            h.connector.disconnect();
        }
    });

    it("rebuilds the connection when it fires after the cookie expired (the machine slept)", async () => {
        const h = createHarness();
        const subscribed: number[] = [];
        h.connector.privateChannel("a").subscribed(() => subscribed.push(Date.now()));
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        h.auth.hold();
        vi.setSystemTime(Date.now() + 400_000); // the wall clock jumps, timers fire late
        await vi.advanceTimersByTimeAsync(240_000);
        expect(first.closed).toBe(true); // not relied on any more
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        h.auth.release();
        await h.flush();
        h.EventSource.last().emitOpen();
        expect(subscribed).toHaveLength(2);
        expect(h.connector.connectionStatus()).toBe("connected");
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
