import { describe, expect, it, vi } from "vitest";
import { backoff, RECONNECT_BACKOFF } from "../../../src/status/backoff";
import { StatusStore } from "../../../src/status/status-store";

describe("backoff", () => {
    it("doubles from min to max, with jitter of ±20 % clamped to the range", () => {
        const low = () => 0;
        const high = () => 0.999999;
        expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => backoff(attempt, RECONNECT_BACKOFF, () => 0.5))).toEqual([
            1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
        ]);
        expect(backoff(0, RECONNECT_BACKOFF, low)).toBe(1_000); // floor
        expect(backoff(1, RECONNECT_BACKOFF, low)).toBe(1_600);
        expect(backoff(1, RECONNECT_BACKOFF, high)).toBe(2_400);
        expect(backoff(10, RECONNECT_BACKOFF, high)).toBe(30_000); // ceiling
    });

    it("stays finite for absurd attempts", () => {
        expect(backoff(1e9, { min: 10, max: 100 })).toBeLessThanOrEqual(100);
        expect(backoff(-3, { min: 10, max: 100 }, () => 0.5)).toBe(10);
    });
});

describe("StatusStore", () => {
    it("notifies on change only, isolates throwing listeners, and unsubscribes", () => {
        const store = new StatusStore();
        const seen: string[] = [];
        const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
        store.subscribe(() => {
            throw new Error("boom");
        });
        const off = store.subscribe((status) => seen.push(status));
        store.set("connecting");
        store.set("connecting");
        store.set("connected");
        off();
        store.set("disconnected");
        expect(seen).toEqual(["connecting", "connected"]);
        expect(store.get()).toBe("disconnected");
        expect(error).toHaveBeenCalledTimes(3);
        error.mockRestore();
    });
});
