import { afterEach, describe, expect, it, vi } from "vitest";
import type { ToEngine } from "../../../src/share/protocol";
import { HANDOVER_GRACE_MS, ShareClient } from "../../../src/share/virtual-source";

const HUB = "https://hub.test/.well-known/mercure";

describe("ShareClient: the engine's events to its virtual streams", () => {
    it("hands a replay (s) to its one stream only, a live event to every open stream, and moves only the receivers' cursors", () => {
        const posted: ToEngine[] = [];
        const client = new ShareClient({ post: (_client, message) => posted.push(message), deadline: () => 60_000 });
        const got: Record<string, unknown[]> = { a: [], b: [] };
        for (const name of ["a", "b"] as const) {
            const source = new client.EventSource(`${HUB}?match=news&last_event_id=id-1`);
            source.onmessage = (event: MessageEvent) => got[name]!.push(event.data);
        }
        const [a, b] = posted.filter((message) => message.t === "open").map((message) => (message as { s: string }).s);
        for (const s of [a!, b!]) client.receive({ t: "state", s, state: 1 });
        client.receive({ t: "event", w: null, type: "message", data: "replayed", id: "id-2", s: a! });
        client.receive({ t: "event", w: null, type: "message", data: "live", id: "id-3" });
        client.receive({ t: "event", w: null, type: "message", data: "for b", id: "id-4", s: b! });
        expect(got).toEqual({ a: ["replayed", "live"], b: ["live", "for b"] });
        // After a handover each stream resumes from the last event it was handed.
        posted.length = 0;
        client.resync();
        const resumed = posted.filter((message) => message.t === "open").map((message) => new URL((message as { url: string }).url).searchParams.get("last_event_id"));
        expect(resumed).toEqual(["id-3", "id-4"]);
    });

    it("resumes a stream the engine interrupted while it was open from the cursor the engine gave with it, not one that was connecting (seed 3119: the next engine started from an older cursor)", () => {
        const posted: ToEngine[] = [];
        const client = new ShareClient({ post: (_client, message) => posted.push(message), deadline: () => 60_000 });
        for (let n = 0; n < 3; n++) new client.EventSource(`${HUB}?match=news&last_event_id=id-1`);
        const [open, late, forged] = posted.filter((message) => message.t === "open").map((message) => (message as { s: string }).s);
        client.receive({ t: "state", s: open!, state: 1 });
        client.receive({ t: "state", s: forged!, state: 1 });
        client.receive({ t: "event", w: null, type: "message", data: "", id: "id-2" });
        // The engine's real stream failed (the hub went down): it had forwarded up to id-5 (id-3 … id-5 were other channels').
        client.receive({ t: "state", s: open!, state: 0, id: "id-5" });
        client.receive({ t: "state", s: late!, state: 0, id: "id-5" });
        client.receive({ t: "state", s: forged!, state: 0 });
        posted.length = 0;
        client.resync();
        const resumed = posted.filter((message) => message.t === "open").map((message) => new URL((message as { url: string }).url).searchParams.get("last_event_id"));
        expect(resumed).toEqual(["id-5", "id-1", "id-2"]);
    });

    it("keeps a request's channels while the stream it opens is not there yet: an older stream closing narrows nothing, a newer one does (seed 1179)", async () => {
        const posted: ToEngine[] = [];
        const client = new ShareClient({ post: (_client, message) => posted.push(message), deadline: () => 60_000 });
        const topic = (name: string) => `https://app.test/echo/channel/${name}`;
        const answer = async (names: string[]) => {
            const request = client.authorize(names, new AbortController().signal);
            const asked = posted.filter((message) => message.t === "auth").at(-1) as { r: number };
            client.receive({ t: "granted", c: client.id, r: asked.r, result: { kind: "error", status: null, cause: new Error("not read here") } });
            await request;
        };
        const hellos = () => posted.filter((message) => message.t === "hello").map((message) => (message as { names: readonly string[] }).names);
        await answer(["private-a"]);
        const first = new client.EventSource(`${HUB}?match=${encodeURIComponent(topic("private-a"))}`);
        const whisper = new client.whisperEventSource(`${HUB}?match=${encodeURIComponent("https://app.test/echo/whisper/private-a")}`);
        await answer(["private-a", "presence-b"]);
        // The whisper stream of a channel closes before the main stream of the new set opens: presence-b stays announced.
        whisper.close();
        expect(hellos()).toEqual([]);
        first.close(); // Make-before-break undone: no main stream at all until the new one opens.
        expect(hellos()).toEqual([]);
        const second = new client.EventSource(`${HUB}?match=${encodeURIComponent(topic("private-a"))}&match=${encodeURIComponent(topic("presence-b"))}`);
        expect(hellos()).toEqual([]);
        // A leave without a request: the stream opened since the set narrows it, and closing the last one empties it.
        const third = new client.EventSource(`${HUB}?match=${encodeURIComponent(topic("presence-b"))}`);
        second.close();
        expect(hellos()).toEqual([["presence-b"]]);
        third.close();
        expect(hellos()).toEqual([["presence-b"], []]);
        // A renewal keeps its stream, which carries the whole set: closing it (the last channel left) still empties the set.
        await answer(["private-a"]);
        const kept = new client.EventSource(`${HUB}?match=${encodeURIComponent(topic("private-a"))}`);
        await answer(["private-a"]);
        kept.close();
        expect(hellos()).toEqual([["presence-b"], [], []]);
    });
});

describe("ShareClient: a handover (the engine this tab followed goes away)", () => {
    /** A client with one open main stream; the types of the error events the stream reported. */
    function openStream() {
        const posted: ToEngine[] = [];
        const client = new ShareClient({ post: (_client, message) => posted.push(message), deadline: () => 60_000 });
        const source = new client.EventSource(`${HUB}?match=news`);
        const errors: string[] = [];
        source.onerror = (event: Event) => errors.push(event.type);
        const s = (posted.find((message) => message.t === "open") as { s: string }).s;
        client.receive({ t: "state", s, state: 1 });
        return { client, source, errors, s };
    }

    afterEach(() => vi.useRealTimers());

    it(`reports the interruption as a "handover", and an error of its own only when it is not open again within ${HANDOVER_GRACE_MS} ms`, async () => {
        vi.useFakeTimers();
        const { client, source, errors } = openStream();
        client.down();
        expect([source.readyState, errors]).toEqual([0, ["handover"]]);
        client.resync(); // The next engine is up: the stream is asked for again, and stays connecting.
        await vi.advanceTimersByTimeAsync(HANDOVER_GRACE_MS - 1);
        expect(errors).toEqual(["handover"]);
        await vi.advanceTimersByTimeAsync(1);
        expect([source.readyState, errors]).toEqual([0, ["handover", "error"]]);
        await vi.advanceTimersByTimeAsync(60_000);
        expect(errors).toEqual(["handover", "error"]);
    });

    it("reports nothing more once the next engine opens it in time, nor after it was closed", async () => {
        vi.useFakeTimers();
        const opened = openStream();
        opened.client.down();
        await vi.advanceTimersByTimeAsync(100);
        opened.client.receive({ t: "state", s: opened.s, state: 1 });
        const closed = openStream();
        closed.client.down();
        closed.source.close();
        await vi.advanceTimersByTimeAsync(60_000);
        expect([opened.source.readyState, opened.errors, closed.errors]).toEqual([1, ["handover"], ["handover"]]);
    });

    it("reports the next engine's failure to connect as such, once: the grace ends with it", async () => {
        vi.useFakeTimers();
        const { client, errors, s } = openStream();
        client.down();
        client.receive({ t: "state", s, state: 0 }); // The next engine's real stream failed to connect (the hub is down).
        await vi.advanceTimersByTimeAsync(60_000);
        expect(errors).toEqual(["handover", "error"]);
    });
});

describe("ShareClient: re-registering with a new engine (issue 49's simulation, seed 2061)", () => {
    it("says `resync` on its hello when it re-sends no request, so that the engine authorizes a set its cookie may have lost; not with one pending", async () => {
        const posted: ToEngine[] = [];
        const client = new ShareClient({ post: (_client, message) => posted.push(message), deadline: () => 60_000 });
        const hello = () => posted.filter((message) => message.t === "hello").at(-1) as { names: readonly string[]; resync?: boolean } | undefined;
        const request = client.authorize(["private-a"], new AbortController().signal);
        const asked = posted.find((message) => message.t === "auth") as { r: number };
        posted.length = 0;
        client.resync(); // An engine is up while the request waits: it is re-sent, and carries the set.
        expect(hello()?.resync).toBeUndefined();
        expect(posted.filter((message) => message.t === "auth")).toHaveLength(1);
        client.receive({ t: "granted", c: client.id, r: asked.r, result: { kind: "error", status: null, cause: new Error("not read here") } });
        await request;
        posted.length = 0;
        client.resync(); // The next engine: nothing pending.
        expect(hello()).toMatchObject({ names: ["private-a"], resync: true });
        expect(posted.filter((message) => message.t === "auth")).toEqual([]);
    });
});
