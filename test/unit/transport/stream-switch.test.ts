import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubStream } from "../../../src/transport/hub-stream";
import { DRAIN_MS, StreamSwitch } from "../../../src/transport/stream-switch";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

let EventSource: FakeEventSourceClass;
const handlers = { open: () => undefined, message: () => undefined, error: () => undefined };
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

    it("ends a drain after DRAIN_MS, and a newer switch ends an older drain", () => {
        const streams = new StreamSwitch();
        const [a, b, c] = [stream("a"), stream("b"), stream("c")];
        streams.add(a);
        streams.add(b);
        streams.opened(b);
        streams.add(c);
        streams.opened(c);
        expect(a.isRetired()).toBe(true);
        expect(streams.isDraining(b)).toBe(true);
        vi.advanceTimersByTime(DRAIN_MS - 1);
        expect(b.isRetired()).toBe(false);
        vi.advanceTimersByTime(1);
        expect(b.isRetired()).toBe(true);
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
