import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubTokenSource } from "../../../src/auth/hub-token";
import { createHarness, settleLoads, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** An unsigned JWT-shaped token living ten minutes (the connector never verifies it). */
function jwt(): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256" })}.${part({ exp: Math.floor(Date.now() / 1_000) + 600 })}.c2lnbmF0dXJl`;
}

describe("a hubToken function that never settles", () => {
    it("fails the call after the deadline, and the next get() calls the function again", async () => {
        let calls = 0;
        const source = new HubTokenSource(() => (++calls === 1 ? new Promise<string>(() => undefined) : jwt()), 1_000);
        const first = source.get().then(
            () => "resolved",
            (error: { code: string; message: string }) => `${error.code}: ${error.message}`,
        );
        await vi.advanceTimersByTimeAsync(999);
        expect(source.get()).toBe(source.get()); // still one call in flight
        await vi.advanceTimersByTimeAsync(1);
        expect(await first).toBe("auth_failed: The `hubToken` function gave no token within 1000 ms; retrying with backoff.");
        expect(await source.get()).toBe(jwt());
        expect(calls).toBe(2);
    });

    it("does not stall the connector: the batch fails as a transient auth failure, is retried, and later joins go through", async () => {
        let calls = 0;
        const h = createHarness({ hubToken: () => (++calls === 1 ? new Promise<string>(() => undefined) : jwt()) });
        h.track(h.connector.channel("a"));
        await settleLoads();
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(0);
        await vi.advanceTimersByTimeAsync(15_000); // the default deadline, that of the auth request
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed"]);
        expect(h.errors[0]!.error.message).toContain("`hubToken` function gave no token within 15000 ms");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        h.connector.channel("b");
        await vi.advanceTimersByTimeAsync(2_000); // the first backoff is 1 s ± 20 %
        await settleLoads();
        expect(calls).toBe(2);
        expect(h.auth.lastNames()).toEqual(["a", "b"]);
        expect(h.EventSource.live()).toHaveLength(1);
        h.connector.disconnect();
    });
});
