import { describe, expect, it } from "vitest";
import { bearer, detail, publish, startHub, subscribe, token } from "./helpers";

const T = "https://example.com/t";

async function publishThree(hub: Awaited<ReturnType<typeof startHub>>): Promise<string[]> {
    return [await publish(hub, [["topic", T], ["data", "1"]]), await publish(hub, [["topic", T], ["data", "2"]]), await publish(hub, [["topic", T], ["data", "3"]])];
}

describe("history replay", () => {
    it("replays what follows the last_event_id query cursor and echoes it in Mercure-Last-Event-ID", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const [a] = await publishThree(hub);
        const stream = await subscribe(hub, [["match", T], ["last_event_id", a!]]);
        expect(stream.headers.get("mercure-last-event-id")).toBe(a);
        expect((await stream.next(2)).map((e) => e.data)).toEqual(["2", "3"]);
        await stream.expectNone(50);
    });

    it("lets the Last-Event-ID header win over the query parameter", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const [a, b] = await publishThree(hub);
        const stream = await subscribe(hub, [["match", T], ["last_event_id", a!]], { "last-event-id": b! });
        expect(stream.headers.get("mercure-last-event-id")).toBe(b);
        expect((await stream.next(1)).map((e) => e.data)).toEqual(["3"]);
        await stream.expectNone(50);
    });

    it("replays all retained updates for earliest", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        await publishThree(hub);
        const stream = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]]);
        expect(stream.headers.get("mercure-last-event-id")).toBe("earliest");
        expect((await stream.next(3)).map((e) => e.data)).toEqual(["1", "2", "3"]);
    });

    it("answers earliest and replays nothing for an unknown or empty cursor, and sends no header without a cursor", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        await publishThree(hub);
        const unknown = await subscribe(hub, [["match", T], ["last_event_id", "urn:unknown"]]);
        expect(unknown.headers.get("mercure-last-event-id")).toBe("earliest");
        const empty = await subscribe(hub, [["match", T], ["last_event_id", ""]]);
        expect(empty.headers.get("mercure-last-event-id")).toBe("earliest");
        const none = await subscribe(hub, [["match", T]]);
        expect(none.headers.get("mercure-last-event-id")).toBeNull();
        await Promise.all([unknown.expectNone(50), empty.expectNone(50), none.expectNone(50)]);
    });

    it("answers the cursor itself when nothing follows it", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const [, , c] = await publishThree(hub);
        const stream = await subscribe(hub, [["match", T]], { "last-event-id": c! });
        expect(stream.headers.get("mercure-last-event-id")).toBe(c);
    });

    it("answers earliest on an empty history", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const stream = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]]);
        expect(stream.headers.get("mercure-last-event-id")).toBe("earliest");
    });

    it("filters replay by matchers and re-checks private updates against the current token", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        await publish(hub, [["topic", "urn:other"], ["data", "other"]]);
        await publish(hub, [["topic", T], ["data", "secret"], ["private", "on"]]);
        await publish(hub, [["topic", T], ["data", "public"]]);
        const anonymous = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]]);
        expect((await anonymous.next(1)).map((e) => e.data)).toEqual(["public"]);
        await anonymous.expectNone(50);
        const granted = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]], bearer(token(hub, [detail(["subscribe"], [T])])));
        expect((await granted.next(2)).map((e) => e.data)).toEqual(["secret", "public"]);
    });

    it("starts after the earliest occurrence of a duplicated id", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        await publish(hub, [["topic", T], ["id", "dup"], ["data", "1"]]);
        await publish(hub, [["topic", T], ["data", "2"]]);
        await publish(hub, [["topic", T], ["id", "dup"], ["data", "3"]]);
        const stream = await subscribe(hub, [["match", T], ["last_event_id", "dup"]]);
        expect((await stream.next(2)).map((e) => e.data)).toEqual(["2", "3"]);
    });

    it("keeps at most historySize updates", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false, historySize: 2 });
        const [a, b] = await publishThree(hub);
        const all = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]]);
        expect((await all.next(2)).map((e) => e.data)).toEqual(["2", "3"]);
        await all.expectNone(50);
        const evicted = await subscribe(hub, [["match", T], ["last_event_id", a!]]);
        expect(evicted.headers.get("mercure-last-event-id")).toBe("earliest");
        const kept = await subscribe(hub, [["match", T], ["last_event_id", b!]]);
        expect(kept.headers.get("mercure-last-event-id")).toBe(b);
    });

    it("with history off, never replays and answers earliest even for a known id", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false, history: false });
        const [a] = await publishThree(hub);
        const stream = await subscribe(hub, [["match", T], ["last_event_id", a!]]);
        expect(stream.headers.get("mercure-last-event-id")).toBe("earliest");
        await stream.expectNone(50);
        await publish(hub, [["topic", T], ["data", "live"]]);
        expect((await stream.next(1))[0]!.data).toBe("live");
    });

    it("neither loses nor repeats updates published right around the subscription", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const [a] = await publishThree(hub);
        const opening = subscribe(hub, [["match", T], ["last_event_id", a!]]);
        const racing = (async () => {
            await publish(hub, [["topic", T], ["data", "4"]]);
            await publish(hub, [["topic", T], ["data", "5"]]);
        })();
        const stream = await opening;
        await racing;
        hub.hub.publish({ topics: [T], data: "6" });
        expect((await stream.next(5)).map((e) => e.data)).toEqual(["2", "3", "4", "5", "6"]);
        await stream.expectNone(50);
    });

    it("replays at most 1 000 updates on one connection and then ends the stream, as the Go hub's buffer does; the last id continues", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const ids: string[] = [];
        for (let n = 1; n <= 1_002; n++) {
            ids.push(hub.hub.publish({ topics: [T], data: String(n) }));
            hub.hub.publish({ topics: ["urn:other"], data: "not matched: not counted" });
        }
        const first = await subscribe(hub, [["match", T], ["last_event_id", "earliest"]]);
        expect(await first.finished).toBe("end");
        expect(first.events.map((e) => e.data)).toEqual(Array.from({ length: 1_000 }, (_, i) => String(i + 1)));
        const rest = await subscribe(hub, [["match", T]], { "last-event-id": first.events.at(-1)!.lastEventId });
        expect(rest.headers.get("mercure-last-event-id")).toBe(ids[999]);
        expect((await rest.next(2)).map((e) => e.data)).toEqual(["1001", "1002"]);
        // With 1 000 or fewer to replay, the stream stays open for live updates.
        hub.hub.publish({ topics: [T], data: "live" });
        expect((await rest.next(1)).map((e) => e.data)).toEqual(["live"]);
    });
});
