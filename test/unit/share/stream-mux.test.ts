import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StreamMux } from "../../../src/share/stream-mux";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

const HUB = new URL("https://hub.test/.well-known/mercure");

let ES: FakeEventSourceClass;
let sent: Array<Record<string, unknown>>;
let mux: StreamMux;

beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    ES = createFakeEventSource();
    sent = [];
    mux = new StreamMux({ hub: HUB, EventSource: ES, send: (message) => sent.push(message as Record<string, unknown>), refused: () => undefined });
});

afterEach(() => {
    mux.closeAll();
    vi.useRealTimers();
});

/** A virtual main stream's subscribe URL on topic `news`, resuming from `cursor`. */
const url = (cursor?: string) => `${HUB.href}?match=news${cursor === undefined ? "" : `&last_event_id=${cursor}`}`;

/** The events replayed to virtual stream `s` (targeted to it), by id. */
const replayed = (s: string) => sent.filter((message) => message["t"] === "event" && message["s"] === s).map((message) => message["id"]);

describe("StreamMux: replaying to a virtual stream that opens late", () => {
    it("replays from a late stream's cursor what it keeps (at least the last 512 events), from its first cursor on, and nothing for an unknown cursor", async () => {
        mux.open("a", "a/1", url(), false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        for (let n = 1; n <= 1_100; n++) real.emitMessage("{}", `id-${n}`);
        // 1 100 forwarded: the oldest 512 were dropped at the 1 025th, so id-512 is where the kept ones start.
        for (const [stream, cursor] of [["b/1", "id-600"], ["c/1", "id-100"], ["d/1", "id-512"], ["e/1", undefined]] as const) {
            mux.open(stream.slice(0, 1), stream, url(cursor), false);
        }
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.live()).toEqual([real]); // The same union: no reopen, each is told open at once.
        expect(replayed("b/1")).toEqual(Array.from({ length: 500 }, (_, i) => `id-${601 + i}`));
        expect(replayed("c/1")).toEqual([]);
        expect(replayed("d/1")).toHaveLength(588);
        expect(replayed("d/1")[0]).toBe("id-513");
        expect(replayed("e/1")).toEqual([]);
        // Once only: a reconnect of the real stream tells them open again without a replay.
        const before = sent.length;
        real.emitError(false);
        real.emitOpen();
        expect(sent.slice(before).filter((message) => message["t"] === "event")).toEqual([]);
    });

    it("opens the real stream for a late stream's new topics from its cursor when the engine forwarded past it", async () => {
        mux.open("a", "a/1", url("id-0"), false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        real.emitMessage("{}", "id-1");
        real.emitMessage("{}", "id-2");
        mux.open("b", "b/1", `${HUB.href}?match=news&match=sports&last_event_id=id-1`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.last().param("last_event_id")).toBe("id-1");
        ES.last().emitOpen(); // b is told open: it waits no more.
        // A cursor the engine does not know (older than what it keeps, or never forwarded) leaves the engine's own.
        mux.open("c", "c/1", `${HUB.href}?match=news&match=sports&match=weather&last_event_id=elsewhere`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.last().param("last_event_id")).toBe("id-2");
    });
});
