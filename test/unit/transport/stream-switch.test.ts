import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubStream } from "../../../src/transport/hub-stream";
import { DRAIN_MS, OPEN_DEADLINE_MS, StreamSwitch, type Stall } from "../../../src/transport/stream-switch";
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

describe("StreamSwitch: the connection budget", () => {
    /** A switch holding a current stream `a` and `drains` replaced streams still draining, in order. */
    function withDrains(drains: number) {
        const streams = new StreamSwitch();
        const held = [stream("a")];
        streams.add(held[0]!);
        streams.opened(held[0]!);
        for (let index = 1; index <= drains; index++) {
            const next = stream(`d${index}`);
            streams.add(next);
            streams.opened(next);
            held.unshift(next);
        }
        return { streams, current: held[0]!, drained: held.slice(1).reverse() };
    }

    it("makeRoom(): ends the oldest drains first, and keeps make-before-break while the current stream leaves room", () => {
        const { streams, current, drained } = withDrains(2);
        expect(streams.makeRoom(3)).toBeNull();
        expect(drained.map((s) => s.isRetired())).toEqual([true, false]);
        expect(current.isRetired()).toBe(false);
        expect(streams.makeRoom(2)).toBeNull();
        expect(drained.map((s) => s.isRetired())).toEqual([true, true]);
        expect(current.isRetired()).toBe(false);
    });

    it("makeRoom(): retires the candidate it replaces, then the current stream when only one stream fits (break before make)", () => {
        const streams = new StreamSwitch();
        const [a, b] = [stream("a"), stream("b")];
        streams.add(a);
        streams.opened(a);
        streams.add(b);
        expect(streams.makeRoom(1)).toBe(a);
        expect([a.isRetired(), b.isRetired(), streams.latest()]).toEqual([true, true, null]);
        const c = stream("c");
        streams.add(c);
        expect(streams.current).toBe(c); // nothing left to replace: current at once, not a candidate
        expect(new StreamSwitch().makeRoom(0)).toBeNull(); // nothing held: nothing to retire
    });

    it("trimDrains(): ends drains, oldest first, never the current stream or the candidate", () => {
        const { streams, current, drained } = withDrains(3);
        const candidate = stream("c");
        streams.add(candidate);
        streams.trimDrains(3);
        expect(drained.map((s) => s.isRetired())).toEqual([true, true, false]);
        streams.trimDrains(0);
        expect(drained.map((s) => s.isRetired())).toEqual([true, true, true]);
        expect([current.isRetired(), candidate.isRetired()]).toEqual([false, false]);
    });
});

describe("StreamSwitch: the open deadline", () => {
    /** A switch that records the streams reported stalled. */
    function watched() {
        const stalls: Array<[HubStream, Stall]> = [];
        const streams = new StreamSwitch((s, stall) => stalls.push([s, stall]));
        return { streams, stalls };
    }

    it("reports a candidate that has not opened after OPEN_DEADLINE_MS as a stalled replacement, once", () => {
        const { streams, stalls } = watched();
        const [a, b] = [stream("a"), stream("b")];
        streams.add(a);
        streams.opened(a);
        streams.add(b);
        vi.advanceTimersByTime(OPEN_DEADLINE_MS - 1);
        expect(stalls).toEqual([]);
        vi.advanceTimersByTime(1);
        expect(stalls).toEqual([[b, "replacement"]]);
        vi.advanceTimersByTime(OPEN_DEADLINE_MS * 2);
        expect(stalls).toHaveLength(1);
    });

    it("does not watch a first stream; watches a fallback stream as such", () => {
        const { streams, stalls } = watched();
        const [a, b] = [stream("a"), stream("b")];
        streams.add(a);
        vi.advanceTimersByTime(OPEN_DEADLINE_MS);
        expect(stalls).toEqual([]);
        streams.closeAll();
        streams.add(b, true);
        vi.advanceTimersByTime(OPEN_DEADLINE_MS);
        expect(stalls).toEqual([[b, "fallback"]]);
    });

    it("forgets the deadline of a stream that opens, is replaced, refused or closed", () => {
        const { streams, stalls } = watched();
        const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map(stream) as [HubStream, HubStream, HubStream, HubStream, HubStream];
        streams.add(a);
        streams.opened(a);
        streams.add(b);
        streams.opened(b); // opened in time
        streams.add(c);
        streams.add(d); // replaces c
        streams.failed(d, true); // refused
        streams.add(e);
        streams.closeAll();
        vi.advanceTimersByTime(OPEN_DEADLINE_MS * 2);
        expect(stalls).toEqual([]);
    });
});
