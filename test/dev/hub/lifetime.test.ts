import { describe, expect, it } from "vitest";
import { DEFAULT_DISPATCH_TIMEOUT_MS, DEFAULT_WRITE_TIMEOUT_MS, streamClosesAt } from "../../../src/dev/hub/lifetime";
import type { StreamLifetimePolicy } from "../../../src/dev/hub/lifetime";
import { bearer, startHub, subscribe, token } from "./helpers";

const T = "https://example.com/t";
const NOW = 1_800_000_000_000;

/** The reference defaults with a fixed fraction (0 = 80 %, 1 = 100 %). */
function policy(fraction: number, overrides: Partial<StreamLifetimePolicy> = {}): StreamLifetimePolicy {
    return {
        dispatchTimeout: DEFAULT_DISPATCH_TIMEOUT_MS,
        writeTimeout: DEFAULT_WRITE_TIMEOUT_MS,
        lifetimeFraction: () => fraction,
        ...overrides,
    };
}

/** Wait for a stream's body to end, or resolve "open" after `ms`. */
function endedWithin(finished: Promise<string>, ms: number): Promise<string> {
    return Promise.race([finished, new Promise<string>((resolve) => setTimeout(() => resolve("open"), ms))]);
}

describe("stream lifetime, as the reference hub computes it", () => {
    it("ends a 300 s token's stream between 80 % and 100 % of its life, one dispatch timeout early", () => {
        const exp = NOW + 300_000;
        expect(streamClosesAt(NOW, exp, policy(0))).toBe(NOW + 235_000);
        expect(streamClosesAt(NOW, exp, policy(0.5))).toBe(NOW + 265_000);
        expect(streamClosesAt(NOW, exp, policy(1))).toBe(NOW + 295_000);
    });

    it("caps every stream at 80-100 % of the write timeout, with or without a token", () => {
        expect(streamClosesAt(NOW, null, policy(0))).toBe(NOW + 475_000);
        expect(streamClosesAt(NOW, null, policy(1))).toBe(NOW + 595_000);
        expect(streamClosesAt(NOW, NOW + 3_600_000, policy(0))).toBe(NOW + 475_000);
    });

    it("falls back to the deadline itself when one dispatch timeout before it is already past (short tokens)", () => {
        // A 6 s token: 100 % → 6 s - 5 s = 1 s after opening; 80 % → 4.8 s is nearer than 5 s, so 4.8 s.
        expect(streamClosesAt(NOW, NOW + 6_000, policy(1))).toBe(NOW + 1_000);
        expect(streamClosesAt(NOW, NOW + 6_000, policy(0))).toBe(NOW + 4_800);
        expect(streamClosesAt(NOW, NOW + 20_000, policy(1, { dispatchTimeout: 1_000 }))).toBe(NOW + 19_000);
    });

    it("ends at the deadline without a dispatch timeout, and never without a write timeout or a token", () => {
        expect(streamClosesAt(NOW, NOW + 10_000, policy(1, { dispatchTimeout: 0 }))).toBe(NOW + 10_000);
        expect(streamClosesAt(NOW, null, policy(1, { writeTimeout: 0 }))).toBeNull();
        expect(streamClosesAt(NOW, NOW + 10_000, policy(0, { writeTimeout: 0 }))).toBe(NOW + 3_000);
    });

    it("clamps fractions outside [0, 1]", () => {
        expect(streamClosesAt(NOW, NOW + 300_000, policy(-3))).toBe(NOW + 235_000);
        expect(streamClosesAt(NOW, NOW + 300_000, policy(7))).toBe(NOW + 295_000);
        expect(streamClosesAt(NOW, NOW + 300_000, policy(Number.NaN))).toBe(NOW + 235_000);
    });
});

describe("stream lifetime on the hub", () => {
    it("uses the reference timing by default: a 300 s token's stream ends 80-100 % into its life minus 5 s", async () => {
        const hub = await startHub();
        const exp = Math.floor(Date.now() / 1000) + 300;
        const stream = await subscribe(hub, [["match", T]], bearer(token(hub, [], { exp })));
        expect(stream.status).toBe(200);
        const [record] = hub.hub.stats.subscribeConnections;
        const remaining = exp * 1000 - record!.at;
        expect(record!.closesAt).toBeGreaterThanOrEqual(record!.at + Math.floor(0.8 * remaining) - 5_000);
        expect(record!.closesAt).toBeLessThanOrEqual(record!.at + remaining - 5_000);
    });

    it("ends a token's stream one dispatch timeout before the randomised deadline, long before exp", async () => {
        const hub = await startHub({ dispatchTimeout: 8_000, lifetimeFraction: () => 1 });
        const exp = Math.floor(Date.now() / 1000) + 10;
        const stream = await subscribe(hub, [["match", T]], bearer(token(hub, [], { exp })));
        expect(stream.status).toBe(200);
        expect(hub.hub.stats.subscribeConnections[0]!.closesAt).toBe(exp * 1000 - 8_000);
        expect(await endedWithin(stream.finished, 7_000)).toBe("end");
        // A hub that held the stream until exp would still be 6 s or more away from closing it here.
        expect(Date.now()).toBeLessThan(exp * 1000 - 4_000);
        expect(hub.hub.stats.openConnections).toBe(0);
        expect(hub.hub.stats.expiredStreams).toBe(1);
    });

    it("ends a stream without a token within the write timeout", async () => {
        const hub = await startHub({ anonymous: true, writeTimeout: 1_000, lifetimeFraction: () => 0 });
        const stream = await subscribe(hub, [["match", T]]);
        expect(stream.status).toBe(200);
        const [record] = hub.hub.stats.subscribeConnections;
        // 80 % of 1 s; one 5 s dispatch timeout earlier would be in the past, so the deadline itself.
        expect(record!.closesAt).toBe(record!.at + 800);
        expect(await endedWithin(stream.finished, 10_000)).toBe("end");
        expect(hub.hub.stats.openConnections).toBe(0);
        expect(hub.hub.stats.expiredStreams).toBe(1);
    });

    it("keeps a stream open without a write timeout and without a token", async () => {
        const hub = await startHub({ anonymous: true, writeTimeout: 0 });
        const stream = await subscribe(hub, [["match", T]]);
        expect(hub.hub.stats.subscribeConnections[0]!.closesAt).toBeNull();
        expect(await endedWithin(stream.finished, 200)).toBe("open");
        stream.close();
        await stream.finished;
        expect(hub.hub.stats.expiredStreams).toBe(0);
    });

    it("refuses negative or non-numeric timeouts", async () => {
        await expect(startHub({ dispatchTimeout: -1 })).rejects.toThrow(/dispatchTimeout/);
        await expect(startHub({ writeTimeout: Number.NaN })).rejects.toThrow(/writeTimeout/);
    });
});
