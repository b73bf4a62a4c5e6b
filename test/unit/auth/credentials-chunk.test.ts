import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";

/*
 * The code that reads credentials at each request is a lazy chunk (src/auth/load-credentials.ts), loaded only when a
 * credential is a function, after a 419, or for the XSRF-TOKEN cookie. Here it fails to load as often as
 * `chunk.failures` says (a flaky network, a deploy in between), then loads.
 */
const chunk = vi.hoisted(() => ({ failures: 0, loads: 0 }));
vi.mock("../../../src/auth/credentials", async (importOriginal) => {
    chunk.loads++;
    if (chunk.failures > 0) {
        chunk.failures--;
        throw new TypeError("Failed to fetch dynamically imported module");
    }
    return importOriginal();
});

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** Let the loads and zero-delay timers run until `done()` holds (see {@link settleLoadsUntil}). */
const settle = (done?: () => boolean): Promise<void> => settleLoadsUntil(done);

describe("the credentials chunk", () => {
    it("is not loaded for string credentials (Echo's headers are sent as they are)", async () => {
        const h = createHarness({ bearerToken: "abc" });
        h.connector.channel("news");
        await settle(() => h.auth.requests.length > 0);
        expect(h.auth.requests[0]!.headers["Authorization"]).toBe("Bearer abc");
        expect(chunk.loads).toBe(0);
        h.connector.disconnect();
    });

    it("failing to load fails the batch as auth_failed and is retried with backoff", async () => {
        chunk.failures = 1;
        const h = createHarness({ bearerToken: () => "abc" });
        h.track(h.connector.channel("news"));
        await settle(() => h.errors.length > 0);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed"]);
        expect(h.auth.requests).toHaveLength(0);
        // The first backoff is 1 s ± 20 %.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle(() => h.auth.requests.length > 0);
        expect(h.auth.requests.map((request) => request.headers["Authorization"])).toEqual(["Bearer abc"]);
        h.connector.disconnect();
    });
});
