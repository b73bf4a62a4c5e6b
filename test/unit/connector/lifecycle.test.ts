import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureError } from "../../../src/errors";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** A harness with private channel `a` joined and its stream open. */
async function connectedWithA() {
    const h = createHarness();
    const a = h.connector.privateChannel("a");
    await h.flush();
    h.stream().emitOpen();
    return { h, a };
}

describe("disconnect() called from a user callback", () => {
    it("stays disconnected when an error() callback disconnects on auth_rejected (logout)", async () => {
        const { h, a } = await connectedWithA();
        a.error((error: MercureError) => {
            if (error.code === "auth_rejected") h.connector.disconnect();
        });
        h.auth.handler = () => ({ status: 401 });
        h.stream().emitError(true); // the hub refuses the stream: re-authorize, which is rejected
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.EventSource.live()).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("opens no stream when an auth_denied callback disconnects while the rest of the batch was granted", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, {}, ["private-no"]);
        h.connector.privateChannel("ok");
        h.connector.privateChannel("no").error(() => h.connector.disconnect());
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.EventSource.live()).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("does not hammer a failing auth endpoint when every auth_failed callback disconnects", async () => {
        const h = createHarness();
        h.auth.handler = () => ({ status: 503 });
        h.connector.channel("a").error(() => h.connector.disconnect());
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("stays disconnected when an onConnectionChange('reconnecting') callback disconnects on a refused stream", async () => {
        const { h } = await connectedWithA();
        h.connector.onConnectionChange((status) => {
            if (status === "reconnecting") h.connector.disconnect();
        });
        h.stream().emitError(true);
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.live()).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });
});

describe("subscribed() across disconnect() and connect()", () => {
    it("does not fire at once for a callback registered while disconnected, and fires again after connect()", async () => {
        const { h, a } = await connectedWithA();
        const fired: string[] = [];
        a.subscribed(() => fired.push("early"));
        h.connector.disconnect();
        a.subscribed(() => fired.push("while disconnected"));
        expect(fired).toEqual(["early"]);
        h.connector.connect();
        await h.flush();
        h.stream().emitOpen();
        expect(fired).toEqual(["early", "early", "while disconnected"]);
    });

    it("does not fire when onConnectionChange('connected') disconnects", async () => {
        const h = createHarness();
        let fired = 0;
        h.connector.channel("a").subscribed(() => fired++);
        h.connector.onConnectionChange((status) => {
            if (status === "connected") h.connector.disconnect();
        });
        await h.flush();
        h.stream().emitOpen();
        expect(fired).toBe(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });
});

describe("a channel left and joined again in the same tick", () => {
    it("fires subscribed() on the new channel object though the stream is kept", async () => {
        const { h } = await connectedWithA();
        h.connector.leaveChannel("private-a");
        const again = h.connector.privateChannel("a");
        let fired = 0;
        again.subscribed(() => fired++);
        await h.flush();
        expect(h.EventSource.instances).toHaveLength(1); // same topics: no reopen
        expect(fired).toBe(1);
    });
});

describe("leaving after disconnect()", () => {
    it("does not reconnect the remaining channels; a new join does", async () => {
        const h = createHarness();
        h.connector.channel("a");
        h.connector.channel("b");
        await h.flush();
        h.stream().emitOpen();
        h.connector.disconnect();
        h.connector.leaveChannel("a");
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.live()).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        h.connector.channel("c");
        await h.flush();
        expect(h.auth.lastNames()).toEqual(["b", "c"]);
        expect(h.EventSource.live()).toHaveLength(1);
    });
});

describe("a fresh start after leaving every channel", () => {
    it("reports connecting, not reconnecting", async () => {
        const h = createHarness();
        const seen: string[] = [];
        h.connector.onConnectionChange((status) => seen.push(status));
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        h.connector.leaveChannel("a");
        await h.flush();
        h.connector.channel("b");
        await h.flush();
        expect(seen).toEqual(["connecting", "connected", "disconnected", "connecting"]);
    });
});
