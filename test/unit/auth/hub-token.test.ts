import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubTokenSource, tokenExpiry } from "../../../src/auth/hub-token";
import { MercureError } from "../../../src/errors";
import { useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** An unsigned JWT-shaped token whose payload is `claims` (the source never verifies). */
function jwt(claims: Record<string, unknown>): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256", typ: "at+jwt" })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** A token function that mints tokens living `life` seconds, numbered in `n`, counting its calls. */
function minter(life: number) {
    const calls = { count: 0 };
    const mint = () => {
        calls.count++;
        return jwt({ exp: Math.floor(Date.now() / 1_000) + life, n: calls.count });
    };
    return { mint, calls };
}

describe("tokenExpiry", () => {
    it("reads exp from the payload without verifying, and null from anything else", () => {
        expect(tokenExpiry(jwt({ exp: 1_900_000_000 }))).toBe(1_900_000_000);
        expect(tokenExpiry(jwt({ sub: "1" }))).toBeNull();
        expect(tokenExpiry(jwt({ exp: "soon" }))).toBeNull();
        expect(tokenExpiry("not-a-jwt")).toBeNull();
        expect(tokenExpiry("a.%%%.c")).toBeNull();
    });
});

describe("HubTokenSource", () => {
    it("reuses a token for the first third of its life, then asks the function for a new one", async () => {
        vi.setSystemTime(1_800_000_000_000);
        const { mint, calls } = minter(60);
        const source = new HubTokenSource(mint);
        const first = await source.get();
        expect(source.current()).toBe(first);
        vi.advanceTimersByTime(19_000);
        expect(await source.get()).toBe(first);
        expect(calls.count).toBe(1);
        vi.advanceTimersByTime(2_000);
        const second = await source.get();
        expect(second).not.toBe(first);
        expect(calls.count).toBe(2);
    });

    it("calls the function once for concurrent askers (single flight)", async () => {
        let resolve: (token: string) => void = () => undefined;
        let calls = 0;
        const source = new HubTokenSource(() => {
            calls++;
            return new Promise<string>((r) => (resolve = r));
        });
        const both = Promise.all([source.get(), source.get()]);
        resolve(jwt({ exp: Math.floor(Date.now() / 1_000) + 60 }));
        const [a, b] = await both;
        expect(a).toBe(b);
        expect(calls).toBe(1);
    });

    it("asks for a new token after the hub refused the last one with 401", async () => {
        const { mint, calls } = minter(600);
        const source = new HubTokenSource(mint);
        const first = await source.get();
        source.refused();
        // Kept for a polyfill reconnecting meanwhile (an expired token gets 401 and a re-auth; an empty one a fatal 400).
        expect(source.current()).toBe(first);
        expect(await source.get()).not.toBe(first);
        expect(calls.count).toBe(2);
    });

    it("takes a plain string too, and a token without exp is reused until refused", async () => {
        const token = jwt({ sub: "1" });
        const source = new HubTokenSource(token);
        expect(await source.get()).toBe(token);
        vi.advanceTimersByTime(3_600_000);
        expect(await source.get()).toBe(token);
        expect(source.lifetime(Date.now(), 30)).toBe(30);
    });

    it("rejects with auth_failed when the function throws, and invalid_option for something that is not a bare JWT", async () => {
        const failing = new HubTokenSource(() => Promise.reject(new Error("offline")));
        await expect(failing.get()).rejects.toMatchObject({ code: "auth_failed" });
        const prefixed = new HubTokenSource(() => "Bearer abc.def.ghi");
        const error = await prefixed.get().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MercureError);
        expect((error as MercureError).code).toBe("invalid_option");
        expect((error as MercureError).message).toContain("`hubToken`");
    });

    it("says how long the token lives from a moment, capped by the auth response's expires_in", async () => {
        vi.setSystemTime(1_800_000_000_000);
        const source = new HubTokenSource(minter(60).mint);
        expect(source.lifetime(Date.now(), 300)).toBe(300);
        await source.get();
        expect(source.lifetime(Date.now(), 300)).toBe(60);
        expect(source.lifetime(Date.now() + 10_000, 30)).toBe(30);
        expect(source.lifetime(Date.now() + 40_000, null)).toBe(20);
    });
});
