import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubStream } from "../../../src/transport/hub-stream";
import { DRAIN_MS, StreamSwitch } from "../../../src/transport/stream-switch";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

let EventSource: FakeEventSourceClass;
const handlers = { open: () => undefined, message: () => undefined, subscription: () => undefined, error: () => undefined };
const stream = (name: string) => new HubStream(EventSource, `https://hub.test/?match=${name}`, [name], [name], handlers);

beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    EventSource = createFakeEventSource();
});
afterEach(() => vi.useRealTimers());

describe("StreamSwitch", () => {
    it("makes the first stream current and later ones candidates, retiring a candidate that never opened", () => {
        const streams = new StreamSwitch();
        const a = stream("a");
        const b = stream("b");
        const c = stream("c");
        streams.add(a);
        streams.add(b);
        expect([streams.current, streams.candidate, streams.latest()]).toEqual([a, b, b]);
        streams.add(c);
        expect(b.isRetired()).toBe(true);
        expect(streams.latest()).toBe(c);
    });

    it("promotes a candidate that opens and drains the stream it replaces until both delivered one id", () => {
        const streams = new StreamSwitch();
        const a = stream("a");
        const b = stream("b");
        streams.add(a);
        streams.add(b);
        expect(streams.opened(a)).toBe(true);
        expect(streams.opened(b)).toBe(true);
        expect(streams.current).toBe(b);
        expect(streams.isDraining(a)).toBe(true);
        streams.delivered(a, "1");
        streams.delivered(b, "2");
        expect(a.isRetired()).toBe(false);
        streams.delivered(a, "2");
        expect(a.isRetired()).toBe(true);
        expect(streams.isDraining(a)).toBe(false);
    });

    it("ends a drain after DRAIN_MS", () => {
        const streams = new StreamSwitch();
        const [a, b] = [stream("a"), stream("b")];
        streams.add(a);
        streams.add(b);
        streams.opened(b);
        vi.advanceTimersByTime(DRAIN_MS - 1);
        expect(a.isRetired()).toBe(false);
        vi.advanceTimersByTime(1);
        expect(a.isRetired()).toBe(true);
    });

    it("keeps several replaced streams draining, each until it caught up with a newer stream or its own DRAIN_MS passed", () => {
        const streams = new StreamSwitch();
        const [a, b, c] = [stream("a"), stream("b"), stream("c")];
        streams.add(a);
        streams.add(b);
        streams.opened(b);
        vi.advanceTimersByTime(500);
        streams.add(c);
        streams.opened(c);
        expect([streams.isDraining(a), streams.isDraining(b)]).toEqual([true, true]);
        streams.delivered(a, "1"); // written to `a` before `b` registered: still read
        streams.delivered(c, "2");
        streams.delivered(b, "2"); // `b` caught up with `c`
        expect([a.isRetired(), b.isRetired()]).toEqual([false, true]);
        streams.delivered(a, "2"); // `a` caught up with `c`, a stream of its replacement chain
        expect(a.isRetired()).toBe(true);
        expect(streams.isDraining(a)).toBe(false);
        const d = stream("d");
        streams.add(d);
        streams.opened(d);
        vi.advanceTimersByTime(DRAIN_MS - 1);
        expect(c.isRetired()).toBe(false);
        vi.advanceTimersByTime(1);
        expect(c.isRetired()).toBe(true);
    });

    it("counts an id two draining streams share for the older one only", () => {
        const streams = new StreamSwitch();
        const [a, b, c] = [stream("a"), stream("b"), stream("c")];
        streams.add(a);
        streams.add(b);
        streams.opened(b);
        streams.add(c);
        streams.opened(c);
        streams.delivered(a, "1");
        streams.delivered(b, "1"); // `b` caught up with `a`: says nothing about `b` and `c`, but `a` caught up with `b`
        expect([a.isRetired(), b.isRetired()]).toEqual([true, false]);
    });

    it("retires everything on closeAll()", () => {
        const streams = new StreamSwitch();
        const [a, b, c] = [stream("a"), stream("b"), stream("c")];
        streams.add(a);
        streams.add(b);
        streams.opened(b);
        streams.add(c);
        streams.closeAll();
        expect([a, b, c].map((s) => s.isRetired())).toEqual([true, true, true]);
        expect(streams.latest()).toBeNull();
    });
});
