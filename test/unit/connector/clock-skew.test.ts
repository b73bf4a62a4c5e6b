import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tokenLifetime } from "../../../src/auth/hub-token";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, settleLoads, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";

/*
 * Issue 29, "Tokens and clocks": renewal timing must not depend on the page's clock agreeing with the server's, and no
 * path may renew in a loop. The page's clock here runs two minutes ahead of the server that mints the tokens (fake
 * timers: `Date.now` is the page's clock, the server's is `Date.now() - SKEW`); the hub accepts every stream at once.
 */

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** How far the page's clock runs ahead of the server's. */
const SKEW = 120_000;

/** An unsigned JWT-shaped token with these claims (the connector never verifies one). */
function jwt(claims: Record<string, unknown>): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256", typ: "at+jwt" })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** A `hubToken` function minting 60 s tokens on the server's clock (with `iat` unless `withIat` is false), counting its calls. */
function serverMinter(withIat = true) {
    const calls = { count: 0 };
    const mint = () => {
        calls.count++;
        const now = Math.floor((Date.now() - SKEW) / 1_000);
        return jwt(withIat ? { iat: now, exp: now + 60 } : { exp: now + 60 });
    };
    return { mint, calls };
}

/**
 * Run the page for `ms` in 100 ms steps, the hub opening every new stream 100 ms after it was created (as fast as a
 * real hub answers); resolves with how many auth requests and EventSources there were.
 */
async function runFor(h: Harness, ms: number): Promise<{ auths: number; streams: number }> {
    for (let elapsed = 0; elapsed < ms; elapsed += 100) {
        for (const stream of h.EventSource.live()) if (stream.readyState === 0) stream.emitOpen();
        await settleLoads(0, 2);
        await vi.advanceTimersByTimeAsync(100);
    }
    return { auths: h.auth.requests.length, streams: h.EventSource.instances.length };
}

describe("a token's lifetime on the page's clock", () => {
    it("is exp − iat from when it was received, whatever the page's clock says", () => {
        const received = Date.now();
        const serverNow = Math.floor((received - SKEW) / 1_000);
        expect(tokenLifetime(jwt({ iat: serverNow, exp: serverNow + 60 }), received)).toBe(60_000);
        // Without iat, exp is read on the page's clock; one that reads as past there is unknown, not expired.
        expect(tokenLifetime(jwt({ exp: serverNow + 60 }), received)).toBeNull();
        expect(tokenLifetime(jwt({ exp: Math.floor(received / 1_000) + 60 }), received)).toBe(60_000 - (received % 1_000));
        expect(tokenLifetime("not-a-jwt", received)).toBeNull();
    });
});

describe("hubToken with the page's clock two minutes ahead of the server's", () => {
    for (const withIat of [true, false]) {
        it(`connects once and renews on the token's real schedule, not in a loop (${withIat ? "with" : "without"} iat)`, async () => {
            const { mint, calls } = serverMinter(withIat);
            const h = createHarness({ hubToken: mint });
            const subscribed: string[] = [];
            h.track(h.connector.privateChannel("orders.1")).subscribed(() => subscribed.push("private-orders.1"));
            const { auths, streams } = await runFor(h, 30_000);
            // Before the fix: an auth request, a hubToken call and an EventSource per open, as fast as the hub answered.
            expect({ auths, streams, calls: calls.count }).toEqual({ auths: 1, streams: 1, calls: 1 });
            expect(subscribed).toEqual(["private-orders.1"]);
            expect(h.connector.connectionStatus()).toBe("connected");
            expect(h.errors).toEqual([]);
            // With iat the 60 s token is renewed before 0.8 × 60 s − 5 s = 43 s; without, the cookie's 300 s schedule holds.
            const later = await runFor(h, 15_000);
            expect(later.auths).toBe(withIat ? 2 : 1);
            h.connector.disconnect();
        });
    }
});

describe("a cookie whose lifetime is shorter than a round trip (the same class of bug on the cookie path)", () => {
    it("renews at most once per 5 s floor even when every stream opens after the cookie reads as expired", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, { expires_in: 0.05 });
        const subscribed: number[] = [];
        h.connector.channel("news").subscribed(() => subscribed.push(Date.now()));
        const { auths } = await runFor(h, 30_000);
        // Before the fix every open read the 50 ms cookie as expired and renewed at once: an auth per 100 ms step.
        expect(auths).toBeGreaterThanOrEqual(2);
        expect(auths).toBeLessThanOrEqual(7);
        // Each renewal's stream opened and was announced (the last one may still be on its way at 30 s).
        expect(subscribed.length).toBeGreaterThanOrEqual(auths - 1);
        h.connector.disconnect();
    });
});
