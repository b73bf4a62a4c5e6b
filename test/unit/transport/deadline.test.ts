import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { within } from "../../../src/transport/deadline";

beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
    vi.useRealTimers();
});

describe("within()", () => {
    it("settles with the work's value or failure, also for a synchronous throw", async () => {
        const signal = new AbortController().signal;
        await expect(within(() => 1, 10, signal)).resolves.toEqual({ kind: "done", value: 1 });
        await expect(within(async () => 2, 10, signal)).resolves.toEqual({ kind: "done", value: 2 });
        const cause = new Error("boom");
        await expect(within(() => Promise.reject(cause), 10, signal)).resolves.toEqual({ kind: "failed", cause });
        await expect(
            within(() => {
                throw cause;
            }, 10, signal),
        ).resolves.toEqual({ kind: "failed", cause });
    });

    it("ends at the deadline although the work never settles nor listens to its signal, and aborts that signal", async () => {
        let inner: AbortSignal | undefined;
        const result = within((signal) => {
            inner = signal;
            return new Promise(() => undefined);
        }, 1_000, new AbortController().signal);
        let settled: unknown = null;
        void result.then((value) => (settled = value));
        await vi.advanceTimersByTimeAsync(999);
        expect(settled).toBeNull();
        expect(inner?.aborted).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
        expect(settled).toEqual({ kind: "timeout" });
        expect(inner?.aborted).toBe(true);
    });

    it("ends at once when the caller aborts, before or during the work", async () => {
        const before = new AbortController();
        before.abort();
        const work = vi.fn(() => 1);
        await expect(within(work, 1_000, before.signal)).resolves.toEqual({ kind: "aborted" });
        expect(work).not.toHaveBeenCalled();

        const during = new AbortController();
        let inner: AbortSignal | undefined;
        const result = within((signal) => {
            inner = signal;
            return new Promise(() => undefined);
        }, 1_000, during.signal);
        during.abort();
        await expect(result).resolves.toEqual({ kind: "aborted" });
        expect(inner?.aborted).toBe(true);
        expect(vi.getTimerCount()).toBe(0); // its deadline timer is gone
    });

    it("caps a deadline past what setTimeout can wait instead of firing at once", async () => {
        let settled: unknown = null;
        void within(() => new Promise(() => undefined), Number.MAX_SAFE_INTEGER, new AbortController().signal).then((value) => (settled = value));
        await vi.advanceTimersByTimeAsync(60_000);
        expect(settled).toBeNull();
    });
});
