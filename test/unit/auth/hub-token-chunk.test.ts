import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";

/*
 * The `hubToken` machinery is a lazy chunk (src/auth/load-hub-token.ts) that the connector loads before its first
 * auth request, only when the option is set. Here the chunk's module fails to load as often as `chunk.failures` says
 * (what a browser sees when the download fails: offline, a deploy in between), then loads.
 */
const chunk = vi.hoisted(() => ({ failures: 0, loads: 0 }));
vi.mock("../../../src/auth/hub-token", async (importOriginal) => {
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

/** An unsigned JWT-shaped token living ten minutes (the connector never verifies it). */
function jwt(): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256" })}.${part({ exp: Math.floor(Date.now() / 1_000) + 600 })}.c2lnbmF0dXJl`;
}

describe("the hubToken chunk", () => {
    it("is not loaded by a connector without hubToken", async () => {
        const h = createHarness();
        h.connector.channel("news");
        await settle();
        expect(h.auth.requests).toHaveLength(1);
        expect(chunk.loads).toBe(0);
        h.connector.disconnect();
    });

    it("failing to load gives every joined channel a load_failed error naming hubToken, then is retried with backoff like a failed auth", async () => {
        chunk.failures = 1;
        const h = createHarness({ hubToken: () => jwt() });
        h.track(h.connector.privateChannel("orders.1"));
        h.track(h.connector.channel("news"));
        await settle(() => h.errors.length >= 2);
        expect(h.errors.map((entry) => [entry.error.code, entry.error.channel])).toEqual([
            ["load_failed", "private-orders.1"],
            ["load_failed", "news"],
        ]);
        expect(h.errors[0]!.error.message).toContain("`hubToken`");
        expect(h.errors[0]!.error.cause).toBeInstanceOf(Error);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        expect(h.auth.requests).toHaveLength(0);
        expect(h.EventSource.instances).toHaveLength(0);
        // The first backoff is 1 s ± 20 %: the retry loads the chunk, then authorizes both channels in one request.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle(() => h.auth.requests.length > 0);
        expect(chunk.failures).toBe(0);
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "news"]]);
        h.stream().emitOpen();
        await settle();
        expect(h.connector.connectionStatus()).toBe("connected");
        expect(h.errors).toHaveLength(2);
        h.connector.disconnect();
    });
});
