import { describe, expect, it } from "vitest";
import type { ToEngine } from "../../../src/share/protocol";
import { ShareClient } from "../../../src/share/virtual-source";

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
});
