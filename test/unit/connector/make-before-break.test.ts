import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, envelope, topic, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** A harness with `news` open on one stream and a log of what each channel received. */
async function openWithNews() {
    const h = createHarness();
    const log: string[] = [];
    const listen = (name: string) => h.connector.channel(name).listen(".tick", (payload: { n: number }) => log.push(`${name}:${payload.n}`));
    listen("news");
    await h.flush();
    const first = h.stream();
    first.emitOpen();
    return { h, log, listen, first };
}

describe("a voluntary reopen (make before break)", () => {
    it("opens the replacement first and retires the old stream only once the replacement is open and the old one caught up", async () => {
        const { h, log, listen, first } = await openWithNews();
        listen("sports");
        await h.flush();
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(first.closed).toBe(false);
        expect(second.matches()).toEqual([topic("news"), topic("sports")]);
        second.emitOpen();
        expect(first.closed).toBe(false);
        // Written to the old stream before the replacement registered, read after it opened: not lost.
        first.emitMessage(envelope(["news"], "tick", { n: 1 }), "urn:1");
        second.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2");
        expect(first.closed).toBe(false);
        first.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2"); // both saw urn:2: caught up
        expect(first.closed).toBe(true);
        expect(log).toEqual(["news:1", "news:2"]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("keeps delivering updates in flight on the first stream when two reopens come close together", async () => {
        const { h, log, listen, first } = await openWithNews();
        listen("b");
        await h.flush();
        const second = h.EventSource.last();
        second.emitOpen();
        listen("c");
        await h.flush();
        const third = h.EventSource.last();
        third.emitOpen();
        expect(first.closed).toBe(false);
        // Written to the first stream before the second registered, read after the third opened: not lost.
        first.emitMessage(envelope(["news"], "tick", { n: 1 }), "urn:1");
        third.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2");
        second.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2");
        first.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2");
        expect(log).toEqual(["news:1", "news:2"]);
        expect([first.closed, second.closed, third.closed]).toEqual([true, true, false]);
    });

    it("retires the replaced stream after 1.5 s when the two never share an event", async () => {
        const { h, listen, first } = await openWithNews();
        h.connector.leaveChannel("news");
        listen("sports");
        await h.flush();
        h.EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(1_499);
        expect(first.closed).toBe(false);
        await vi.advanceTimersByTimeAsync(1);
        expect(first.closed).toBe(true);
        expect(h.EventSource.live()).toEqual([h.EventSource.last()]);
    });

    it("drops a draining stream that fails instead of treating it as the connection", async () => {
        const { h, listen, first } = await openWithNews();
        listen("sports");
        await h.flush();
        h.EventSource.last().emitOpen();
        first.emitError(true);
        expect(first.closed).toBe(true);
        expect(h.connector.connectionStatus()).toBe("connected");
        await vi.advanceTimersByTimeAsync(5_000);
        expect(h.auth.requests).toHaveLength(2);
    });

    it("delivers an update seen on both streams once per channel", async () => {
        const { h, log, listen, first } = await openWithNews();
        listen("sports");
        await h.flush();
        const second = h.EventSource.last();
        // One public update to both channels: the old stream only carries news, the new one both.
        first.emitMessage(envelope(["news", "sports"], "tick", { n: 1 }), "urn:1");
        second.emitMessage(envelope(["news", "sports"], "tick", { n: 1 }), "urn:1");
        second.emitOpen();
        second.emitMessage(envelope(["news"], "tick", { n: 2 }), "urn:2");
        expect(log).toEqual(["news:1", "sports:1", "news:2"]);
    });

    it("does not deliver updates for a channel that was left, from either stream", async () => {
        const { h, log, listen, first } = await openWithNews();
        listen("sports");
        await h.flush();
        h.EventSource.last().emitOpen();
        const second = h.EventSource.last();
        second.emitMessage(envelope(["sports"], "tick", { n: 1 }), "urn:1");
        h.connector.leaveChannel("sports");
        second.emitMessage(envelope(["sports"], "tick", { n: 2 }), "urn:2");
        await h.flush();
        const third = h.EventSource.last();
        expect(third.matches()).toEqual([topic("news")]);
        second.emitMessage(envelope(["sports"], "tick", { n: 3 }), "urn:3");
        expect(log).toEqual(["sports:1"]);
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
    });

    it("ignores every callback of a retired stream", async () => {
        const { h, log, listen, first } = await openWithNews();
        listen("sports");
        await h.flush();
        const second = h.EventSource.last();
        second.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        first.emitMessage(envelope(["news"], "tick", { n: 9 }), "urn:9");
        first.onerror?.(new Event("error"));
        expect(log).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("connected");
        expect(h.EventSource.live()).toEqual([second]);
    });

    it("replaces a pending replacement when the topology changes again before it opens", async () => {
        const { h, listen, first } = await openWithNews();
        listen("b");
        await h.flush();
        const pending = h.EventSource.last();
        listen("c");
        await h.flush();
        const latest = h.EventSource.last();
        expect(pending.closed).toBe(true);
        expect(first.closed).toBe(false);
        latest.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
        expect(h.EventSource.live()).toEqual([latest]);
    });

    it("keeps the old stream when the replacement is refused, and retries with backoff", async () => {
        const { h, listen, first } = await openWithNews();
        const errors: string[] = [];
        listen("sports").error((error: { code: string }) => errors.push(error.code));
        await h.flush();
        h.EventSource.last().emitError(true);
        expect(first.closed).toBe(false);
        expect(errors).toEqual(["stream_error"]);
        expect(h.connector.connectionStatus()).toBe("connected");
        await vi.advanceTimersByTimeAsync(1_300);
        expect(h.auth.requests).toHaveLength(3);
        const retry = h.EventSource.last();
        retry.emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(first.closed).toBe(true);
        expect(retry.matches()).toEqual([topic("news"), topic("sports")]);
    });

    it("fires subscribed() for newly carried channels only, not again for kept ones", async () => {
        const h = createHarness();
        const fired: string[] = [];
        h.connector.channel("news").subscribed(() => fired.push("news"));
        await h.flush();
        h.stream().emitOpen();
        h.connector.channel("sports").subscribed(() => fired.push("sports"));
        await h.flush();
        h.EventSource.last().emitOpen();
        expect(fired).toEqual(["news", "sports"]);
        h.connector.channel("news").subscribed(() => fired.push("late"));
        expect(fired).toEqual(["news", "sports", "late"]);
    });
});
