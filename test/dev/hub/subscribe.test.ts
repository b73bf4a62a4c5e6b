import { describe, expect, it } from "vitest";
import { openSse } from "./sse-client";
import { bearer, detail, publish, sleep, startHub, subscribe, subscribeUrl, token } from "./helpers";

describe("subscribe request validation", () => {
    const badQueries: [string, string][] = [
        ["no matcher at all", ""],
        ["only unrelated parameters", "foo=bar&last_event_id=x"],
        ["the 0.x topic parameter", "topic=https%3A%2F%2Fexample.com%2Fa"],
        ["topic next to a valid matcher", "match=a&topic=b"],
        ["a case variant of match", "Match=a"],
        ["an unknown match_ type", "match_uritemplate=a"],
        ["any other name starting with match", "matches=a"],
        ["an empty matcher value", "match="],
        ["a C0 control in a matcher", "match=a%01b"],
        ["DEL in a matcher", "match=a%7Fb"],
        ["a C1 control in a matcher", "match=a%C2%85b"],
        ["a Unicode format character in a matcher", "match=a%E2%80%8Bb"],
        ["invalid UTF-8 in a matcher", "match=a%FFb"],
        ["an invalid URL pattern", "match_urlpattern=https%3A%2F%2Fexample.com%2F("],
        ["a 4097-byte pattern", `match=${"a".repeat(4097)}`],
        ["101 matchers", Array.from({ length: 101 }, (_, i) => `match=t${i}`).join("&")],
    ];

    it.each(badQueries)("answers 400 for %s", async (_name, query) => {
        const hub = await startHub({ anonymous: true });
        const response = await fetch(`${hub.url}?${query}`);
        expect(response.status).toBe(400);
        await response.text();
    });

    it("accepts 100 matchers and a 4096-byte pattern", async () => {
        const hub = await startHub({ anonymous: true });
        const params: [string, string][] = Array.from({ length: 99 }, (_, i) => ["match", `t${i}`]);
        params.push(["match", "a".repeat(4096)]);
        const stream = await subscribe(hub, params);
        expect(stream.status).toBe(200);
    });

    it("ignores unrelated parameters, including an access_token", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", "a"], ["foo", "bar"], ["access_token", "x.y.z"]]);
        expect(stream.status).toBe(200);
    });
});

describe("event stream", () => {
    it("answers text/event-stream with no-cache headers and an initial comment so open fires", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", "https://example.com/a"]]);
        expect(stream.status).toBe(200);
        expect(stream.headers.get("content-type")).toBe("text/event-stream");
        expect(stream.headers.get("cache-control")).toBe("private, no-cache, no-store, must-revalidate, max-age=0");
        expect(stream.headers.get("x-accel-buffering")).toBe("no");
        expect(stream.headers.get("mercure-last-event-id")).toBeNull();
        await stream.waitFor((s) => s.comments >= 1);
        expect(stream.raw.startsWith(":\n")).toBe(true);
    });

    it("sends keep-alive comments while idle", async () => {
        const hub = await startHub({ anonymous: true, heartbeatMs: 40 });
        const stream = await subscribe(hub, [["match", "a"]]);
        await stream.waitFor((s) => s.comments >= 4, 1000);
    });

    it("answers HEAD with the stream headers and no stream", async () => {
        const hub = await startHub({ anonymous: true });
        const response = await fetch(subscribeUrl(hub, [["match", "a"]]), { method: "HEAD" });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("text/event-stream");
        expect(hub.hub.stats.openConnections).toBe(0);
    });

    it("serializes id on every event, event only for a published type, retry when published, one data line per line", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", "t"]]);
        const plainId = await publish(hub, [["topic", "t"], ["data", "a\nb\r\nc\rd"]]);
        await publish(hub, [["topic", "t"], ["data", ""], ["type", "custom"], ["retry", "2500"], ["id", "my-id"]]);
        const [plain, typed] = await stream.next(2);
        expect(plainId).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
        expect(plain).toMatchObject({ type: "message", data: "a\nb\nc\nd", lastEventId: plainId, hadId: true });
        expect(plain!.retry).toBeUndefined();
        expect(typed).toMatchObject({ type: "custom", data: "", lastEventId: "my-id", hadId: true, retry: 2500 });
        expect(stream.raw).toContain(`id: ${plainId}\ndata: a\ndata: b\ndata: c\ndata: d\n\n`);
        expect(stream.raw).toContain("event: custom\nretry: 2500\nid: my-id\ndata: \n\n");
        expect(stream.raw).not.toContain("event: message");
    });
});

describe("matchers", () => {
    it("delivers by exact match, byte for byte and without normalization", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", "https://example.com/books/1"]]);
        await publish(hub, [["topic", "https://example.com/Books/1"]]);
        await publish(hub, [["topic", "https://example.com/books/x/../1"]]);
        await publish(hub, [["topic", "https://EXAMPLE.com/books/1"]]);
        await publish(hub, [["topic", "https://example.com/books/1"], ["data", "hit"]]);
        const [event] = await stream.next(1);
        expect(event!.data).toBe("hit");
        await stream.expectNone(100);
    });

    it("treats match_exact like match", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match_exact", "topic/a"]]);
        await publish(hub, [["topic", "topic/b"]]);
        await publish(hub, [["topic", "topic/a"], ["data", "hit"]]);
        expect((await stream.next(1))[0]!.data).toBe("hit");
    });

    it("delivers by URL pattern", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match_urlpattern", "https://example.com/books/:id"]]);
        await publish(hub, [["topic", "https://example.com/authors/1"]]);
        await publish(hub, [["topic", "https://example.com/books/1/2"]]);
        await publish(hub, [["topic", "https://example.com/books/42"], ["data", "hit"]]);
        expect((await stream.next(1))[0]!.data).toBe("hit");
        await stream.expectNone(100);
    });

    it("resolves relative patterns and topics against http://mercure.invalid, never against the request's host", async () => {
        const hub = await startHub({ anonymous: true });
        const relative = await subscribe(hub, [["match_urlpattern", "/rooms/:id"]]);
        const absolute = await subscribe(hub, [["match_urlpattern", `${hub.origin}/rooms/:id`]]);
        await publish(hub, [["topic", "/rooms/1"], ["data", "relative"]]);
        await publish(hub, [["topic", `${hub.origin}/rooms/2`], ["data", "absolute"]]);
        await publish(hub, [["topic", "https://elsewhere.example/rooms/3"]]);
        expect((await relative.next(1)).map((e) => e.data)).toEqual(["relative"]);
        expect((await absolute.next(1)).map((e) => e.data)).toEqual(["absolute"]);
        await Promise.all([relative.expectNone(100), absolute.expectNone(100)]);
    });

    it("resolves them against the resource identifier when it is the full hub URL", async () => {
        const hub = await startHub({ anonymous: true, resource: "https://hub.example/.well-known/mercure" });
        const absolute = await subscribe(hub, [["match_urlpattern", "https://hub.example/rooms/:id"]]);
        hub.hub.publish({ topics: ["/rooms/1"], data: "relative" });
        expect((await absolute.next(1)).map((e) => e.data)).toEqual(["relative"]);

        const other = await startHub({ anonymous: true, resource: "https://hub.example/not-the-hub-path" });
        const unresolved = await subscribe(other, [["match_urlpattern", "https://hub.example/rooms/:id"]]);
        other.hub.publish({ topics: ["/rooms/1"] });
        await unresolved.expectNone(100);
    });

    it("delivers subscription events to a relative pattern but not to an absolute one naming the hub's host", async () => {
        const hub = await startHub();
        const observer = token(hub, [detail(["subscribe"], ["*"])]);
        const relative = await subscribe(hub, [["match_urlpattern", "/.well-known/mercure/subscriptions/:t/:m/:s"]], bearer(observer));
        const absolute = await subscribe(hub, [["match_urlpattern", `${hub.url}/subscriptions/:t/:m/:s`]], bearer(observer));
        await subscribe(hub, [["match", "https://example.com/watched"]], bearer(observer));
        await relative.waitFor((s) => s.events.some((e) => e.type === "mercure" && e.data.includes("example.com/watched")));
        expect(absolute.events).toEqual([]);
        await absolute.expectNone(100);
    });

    it.each(["match", "match_exact", "match_urlpattern"])("treats * in %s as every topic", async (name) => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [[name, "*"]]);
        await publish(hub, [["topic", "urn:anything"]]);
        await publish(hub, [["topic", "https://example.com/x"]]);
        expect(await stream.next(2)).toHaveLength(2);
    });

    it("ORs matchers and delivers an update once even when several topics and matchers hit", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", "a"], ["match", "b"], ["match_urlpattern", "*"]]);
        await publish(hub, [["topic", "a"], ["topic", "b"], ["data", "once"]]);
        await publish(hub, [["topic", "zzz"], ["topic", "b"], ["data", "alternate"]]);
        expect((await stream.next(2)).map((e) => e.data)).toEqual(["once", "alternate"]);
        await stream.expectNone(100);
    });

    it("cleans up when the client disconnects", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await openSse(subscribeUrl(hub, [["match", "a"]]));
        expect(hub.hub.stats.openConnections).toBe(1);
        stream.close();
        for (let i = 0; i < 50 && hub.hub.stats.openConnections > 0; i++) await sleep(10);
        expect(hub.hub.stats.openConnections).toBe(0);
        await publish(hub, [["topic", "a"]]);
    });
});
