import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_HUB_TIMEOUTS, renewalDelay } from "../../../src/auth/cookie-refresh";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, topic, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("a hub without a write timeout (hubTimeouts.write = Infinity) and a server without expires_in", () => {
    it("schedules no renewal instead of a NaN delay", () => {
        expect(renewalDelay(null, { dispatch: 5_000, write: Infinity })).toBe(Infinity);
        expect(renewalDelay(300, { dispatch: 5_000, write: Infinity })).toBe(renewalDelay(300, { dispatch: 5_000, write: 600_000 }));
    });

    it("keeps its one stream instead of re-authorizing and reopening in a loop", async () => {
        const h = createHarness({ hubTimeouts: { write: Infinity } });
        h.auth.handler = (names) => grant(names, { expires_in: undefined });
        h.connector.channel("a");
        await h.flush();
        expect(h.EventSource.instances).toHaveLength(1);
        h.stream().emitOpen();
        await vi.advanceTimersByTimeAsync(3_600_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("connected");
    });
});

describe("the renewal's auth answer", () => {
    const renewal = renewalDelay(300, DEFAULT_HUB_TIMEOUTS);

    // [spec] laravel-mercure §8 and §9 item 9: a channel revoked mid-session is seen on the renewal and evicted.
    it("evicts a channel revoked since the last auth and reopens without it, keeping the others", async () => {
        const h = createHarness();
        h.track(h.connector.privateChannel("a"));
        h.track(h.connector.privateChannel("b"));
        await h.flush();
        h.stream().emitOpen();
        h.auth.handler = (names) => grant(names, {}, ["private-a"]);
        await vi.advanceTimersByTimeAsync(renewal);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([["private-a", "auth_denied"]]);
        expect(Object.keys(h.connector.channels)).toEqual(["private-b"]);
        h.EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(2_000);
        expect(h.stream().matches()).toEqual([topic("private-b")]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    // [spec] laravel-mercure §8: `disconnected` after a fully denied batch.
    it("closes everything and reports disconnected when every channel is revoked", async () => {
        const h = createHarness();
        h.track(h.connector.privateChannel("a"));
        await h.flush();
        h.stream().emitOpen();
        h.auth.handler = (names) => grant(names, {}, names);
        await vi.advanceTimersByTimeAsync(renewal);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_denied"]);
        expect(h.EventSource.live()).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        await vi.advanceTimersByTimeAsync(600_000);
        expect(h.auth.requests).toHaveLength(2);
    });

    it("schedules the next renewal from the expires_in it carries", async () => {
        const h = createHarness();
        h.connector.privateChannel("a");
        await h.flush();
        h.stream().emitOpen();
        h.auth.handler = (names) => grant(names, { expires_in: 60 });
        await vi.advanceTimersByTimeAsync(renewal);
        expect(h.auth.requests).toHaveLength(2);
        h.EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(renewalDelay(60, DEFAULT_HUB_TIMEOUTS) - 1);
        expect(h.auth.requests).toHaveLength(2);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.auth.requests).toHaveLength(3);
    });
});

describe("the auth request's headers", () => {
    // [spec] laravel-mercure §1.2: `auth.headers` are merged after the defaults, so they can override them.
    it("lets auth.headers override the default Accept and Content-Type", async () => {
        const h = createHarness({ auth: { headers: { Accept: "application/vnd.app+json", "Content-Type": "application/json; charset=utf-8" } } });
        h.connector.channel("news");
        await h.flush();
        expect(h.auth.requests[0]!.headers).toEqual({ Accept: "application/vnd.app+json", "Content-Type": "application/json; charset=utf-8" });
    });

    it("reads auth.headers at each request, so a token set on the connector's options after a login is sent", async () => {
        const h = createHarness();
        h.connector.channel("news");
        await h.flush();
        h.connector.options.auth.headers["Authorization"] = "Bearer later";
        h.connector.privateChannel("inbox");
        await h.flush();
        expect(h.auth.requests[1]!.headers["Authorization"]).toBe("Bearer later");
    });
});
