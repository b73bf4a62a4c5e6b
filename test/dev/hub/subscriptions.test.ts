import { describe, expect, it } from "vitest";
import { rawUrlEncode } from "../../../src/topic/encode";
import type { DevHub } from "../../../src/dev/hub";
import { bearer, cookie, detail, metadataUrl, startHub, subscribe, token } from "./helpers";
import type { SseEvent } from "./sse-client";

const SUBS = "/.well-known/mercure/subscriptions";
const ALL_SUBSCRIPTIONS_PATTERN = `${SUBS}/:match_type/:match/:subscriber`;

/** A token (and matcher) that sees every subscription event and may call the whole API. */
function observerToken(hub: DevHub): string {
    return token(hub, [detail(["subscribe"], [{ match: `${SUBS}{/*}?`, match_type: "urlpattern" }])]);
}

/** Open an observer stream and consume the announcement of its own subscription. */
async function observe(hub: DevHub, ownEvent = true) {
    const stream = await subscribe(hub, [["match_urlpattern", ALL_SUBSCRIPTIONS_PATTERN]], bearer(observerToken(hub)));
    if (ownEvent) {
        const [own] = await stream.next(1);
        expect(json(own!)).toMatchObject({ match: ALL_SUBSCRIPTIONS_PATTERN, match_type: "urlpattern", active: true });
    }
    return stream;
}

function json(event: SseEvent): Record<string, unknown> {
    return JSON.parse(event.data) as Record<string, unknown>;
}

describe("subscription events", () => {
    it("announce each matcher of a connection as a private mercure event, active then inactive", async () => {
        const hub = await startHub({ anonymous: true });
        const observer = await observe(hub);
        const match = "https://example.com/rooms/1 *'()!";
        const watched = await subscribe(hub, [["match", match], ["match_urlpattern", "https://example.com/books/:id"]]);
        const [exact, pattern] = await observer.next(2);
        const exactDoc = json(exact!);
        const subscriber = exactDoc["subscriber"] as string;
        expect(subscriber).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
        const exactTopic = `${SUBS}/exact/${rawUrlEncode(match)}/${rawUrlEncode(subscriber)}`;
        expect(exactTopic).toContain("%20%2A%27%28%29%21/urn%3Auuid%3A");
        expect(exact!.type).toBe("mercure");
        expect(exactDoc).toEqual({ id: exactTopic, type: "subscription", subscriber, match, match_type: "exact", active: true });
        expect(Object.keys(exactDoc)).toEqual(["id", "type", "subscriber", "match", "match_type", "active"]);
        expect(pattern!.type).toBe("mercure");
        expect(json(pattern!)).toEqual({
            id: `${SUBS}/urlpattern/${rawUrlEncode("https://example.com/books/:id")}/${rawUrlEncode(subscriber)}`,
            type: "subscription",
            subscriber,
            match: "https://example.com/books/:id",
            match_type: "urlpattern",
            active: true,
        });

        watched.close();
        const ended = await observer.next(2);
        expect(ended.map((e) => json(e)["active"])).toEqual([false, false]);
        expect(json(ended[0]!)["id"]).toBe(exactTopic);
    });

    it("are pretty-printed over several data: lines, as the reference hub writes them", async () => {
        const hub = await startHub({ anonymous: true });
        const observer = await observe(hub);
        await subscribe(hub, [["match", "https://example.com/a"]], bearer(token(hub, [detail(["subscribe"], ["*"], { name: "<b>Ann & Ben</b>" })])));
        const [event] = await observer.next(1);
        const document = json(event!);
        const lines = [
            "{",
            `  "id": "${document["id"] as string}",`,
            '  "type": "subscription",',
            `  "subscriber": "${document["subscriber"] as string}",`,
            '  "match": "https://example.com/a",',
            '  "match_type": "exact",',
            '  "active": true,',
            '  "payload": {',
            '    "name": "\\u003cb\\u003eAnn \\u0026 Ben\\u003c/b\\u003e"',
            "  }",
            "}",
        ];
        expect(event!.data).toBe(lines.join("\n"));
        expect(observer.raw).toContain(lines.map((line) => `data: ${line}\n`).join(""));
        expect(document["payload"]).toEqual({ name: "<b>Ann & Ben</b>" });
        // The subscription API indents its documents the same way.
        const api = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(observerToken(hub)) });
        expect(await api.text()).toMatch(/^\{\n {2}"id": "\/\.well-known\/mercure\/subscriptions",\n {2}"type": "subscriptions",\n/);
    });

    it("omit a null payload, as the reference hub's omitempty does", async () => {
        const hub = await startHub({ anonymous: true });
        const observer = await observe(hub);
        await subscribe(hub, [["match", "https://example.com/a"]], bearer(token(hub, [detail(["subscribe"], ["*"], null)])));
        const [event] = await observer.next(1);
        expect(Object.keys(json(event!))).toEqual(["id", "type", "subscriber", "match", "match_type", "active"]);
    });

    it("give each connection its own subscriber id", async () => {
        const hub = await startHub({ anonymous: true });
        const observer = await observe(hub);
        await subscribe(hub, [["match", "a"]]);
        await subscribe(hub, [["match", "a"]]);
        const [first, second] = await observer.next(2);
        expect(json(first!)["subscriber"]).not.toBe(json(second!)["subscriber"]);
    });

    it("are private: matchers without a covering subscribe grant see nothing", async () => {
        const hub = await startHub({ anonymous: true });
        const anonymous = await subscribe(hub, [["match_urlpattern", ALL_SUBSCRIPTIONS_PATTERN]]);
        const wrongGrant = await subscribe(hub, [["match", "*"]], bearer(token(hub, [detail(["subscribe"], ["https://example.com/a"])])));
        await subscribe(hub, [["match", "https://example.com/a"]]);
        await Promise.all([anonymous.expectNone(100), wrongGrant.expectNone(0)]);
    });

    it("carry the payload of the first subscribe detail that matches the matcher string", async () => {
        const hub = await startHub({ anonymous: true });
        const observer = await observe(hub);
        const jwt = token(hub, [
            detail(["publish"], ["https://example.com/room"], { from: "publish-only" }),
            detail(["subscribe"], ["https://example.com/other"], { from: "other" }),
            detail(["subscribe"], ["https://example.com/room"], { from: "room" }),
            detail(["subscribe"], [{ match: "https://example.com/:x", match_type: "urlpattern" }], { from: "pattern" }),
            detail(["subscribe"], ["https://example.com/nopayload"]),
            detail(["subscribe"], ["*"], "fallback"),
        ]);
        await subscribe(hub, [
            ["match", "https://example.com/room"],
            ["match", "https://example.com/zzz"],
            ["match", "urn:elsewhere"],
            ["match", "https://example.com/nopayload/x"],
        ], bearer(jwt));
        const docs = (await observer.next(4)).map(json);
        expect(docs.map((d) => d["payload"])).toEqual([{ from: "room" }, { from: "pattern" }, "fallback", "fallback"]);

        await subscribe(hub, [["match", "https://example.com/room"]], bearer(token(hub, [detail(["subscribe"], ["https://example.com/x"], 1)])));
        const [none] = (await observer.next(1)).map(json);
        expect(none).not.toHaveProperty("payload");
    });

    it("are not sent when active subscriptions are off", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const observer = await observe(hub, false);
        await subscribe(hub, [["match", "a"]]);
        await observer.expectNone(100);
        const response = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(observerToken(hub)) });
        expect(response.status).toBe(404);
    });
});

describe("subscription API", () => {
    it("answers 401 without a token, 403 without a grant on the path, 400 for an unknown match type", async () => {
        const hub = await startHub({ anonymous: true });
        const bare = await fetch(`${hub.origin}${SUBS}`);
        expect(bare.status).toBe(401);
        expect(bare.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl(hub)}"`);
        const invalid = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(token(hub, [], {}, { key: "x" })) });
        expect(invalid.status).toBe(401);
        const narrow = token(hub, [detail(["subscribe"], [`${SUBS}/exact/a`])]);
        const forbidden = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(narrow) });
        expect(forbidden.status).toBe(403);
        expect(forbidden.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", resource_metadata="${metadataUrl(hub)}"`);
        expect((await fetch(`${hub.origin}${SUBS}/exact/a`, { headers: bearer(narrow) })).status).toBe(200);
        const publishOnly = token(hub, [detail(["publish"], ["*"])]);
        expect((await fetch(`${hub.origin}${SUBS}/exact/a`, { headers: bearer(publishOnly) })).status).toBe(403);
        expect((await fetch(`${hub.origin}${SUBS}/regex/a`, { headers: bearer(observerToken(hub)) })).status).toBe(400);
    });

    it("resolves relative grants against http://mercure.invalid: an absolute grant naming the hub's host covers nothing", async () => {
        const hub = await startHub({ anonymous: true });
        const absolute = token(hub, [detail(["subscribe"], [{ match: `${hub.url}/subscriptions{/*}?`, match_type: "urlpattern" }])]);
        expect((await fetch(`${hub.origin}${SUBS}`, { headers: bearer(absolute) })).status).toBe(403);
        expect((await fetch(`${hub.origin}${SUBS}`, { headers: bearer(observerToken(hub)) })).status).toBe(200);
    });

    it("matches grants against the path as sent, percent-encoded and without the query", async () => {
        const hub = await startHub({ anonymous: true });
        const encoded = `${SUBS}/exact/${rawUrlEncode("https://example.com/a")}`;
        const jwt = token(hub, [detail(["subscribe"], [encoded])]);
        expect((await fetch(`${hub.origin}${encoded}?x=1`, { headers: bearer(jwt) })).status).toBe(200);
        const differentlyEncoded = `${SUBS}/exact/https%3A%2F%2Fexample.com%2Fa`.replace("%3A", "%3a");
        expect((await fetch(`${hub.origin}${differentlyEncoded}`, { headers: bearer(jwt) })).status).toBe(403);
    });

    it("lists active subscriptions as JSON with a Link carrying the last event id", async () => {
        const hub = await startHub({ anonymous: true });
        const empty = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(observerToken(hub)) });
        expect(empty.headers.get("link")).toBe(
            `<${hub.url}>; rel="mercure"; last-event-id="earliest"; type="mercure"; content-type="application/json"`,
        );
        expect(await empty.json()).toEqual({ id: SUBS, type: "subscriptions", subscriptions: [] });

        const observer = await subscribe(hub, [["match_urlpattern", ALL_SUBSCRIPTIONS_PATTERN]], bearer(observerToken(hub)));
        await subscribe(hub, [["match", "https://example.com/a"], ["match_urlpattern", "https://example.com/:x"]], bearer(token(hub, [detail(["subscribe"], ["*"], { p: 1 })])));
        const second = await subscribe(hub, [["match", "https://example.com/a"]]);
        const events = await observer.next(4);
        const last = events[3]!.lastEventId;

        const response = await fetch(`${hub.origin}${SUBS}`, { headers: bearer(observerToken(hub)) });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("application/json");
        expect(response.headers.get("link")).toBe(
            `<${hub.url}>; rel="mercure"; last-event-id="${last}"; type="mercure"; content-type="application/json"`,
        );
        const body = (await response.json()) as { id: string; type: string; subscriptions: Record<string, unknown>[] };
        expect(body.id).toBe(SUBS);
        expect(body.type).toBe("subscriptions");
        // The observer's own subscription, then the three announced ones, all as their event documents.
        expect(body.subscriptions).toEqual(events.map(json));

        const path = `${SUBS}/exact/${rawUrlEncode("https://example.com/a")}`;
        const filtered = (await (await fetch(`${hub.origin}${path}`, { headers: bearer(observerToken(hub)) })).json()) as typeof body;
        expect(filtered.id).toBe(path);
        expect(filtered.subscriptions.map((s) => s["match_type"])).toEqual(["exact", "exact"]);
        expect(filtered.subscriptions[0]!["payload"]).toEqual({ p: 1 });
        expect(filtered.subscriptions[1]).not.toHaveProperty("payload");

        const single = filtered.subscriptions[1]!;
        const one = await fetch(`${hub.origin}${single["id"]}`, { headers: bearer(observerToken(hub)) });
        expect(one.status).toBe(200);
        expect(one.headers.get("link")).toContain('rel="mercure"');
        expect(await one.json()).toEqual(single);

        second.close();
        await observer.next(1);
        expect((await fetch(`${hub.origin}${single["id"]}`, { headers: bearer(observerToken(hub)) })).status).toBe(404);
        expect((await fetch(`${hub.origin}${SUBS}/exact/a/b/c`, { headers: bearer(observerToken(hub)) })).status).toBe(404);
    });
});

describe("Laravel presence channels end to end", () => {
    const PREFIX = "https://laravel.alt/echo/";
    const channelTopic = (name: string) => `${PREFIX}channel/${rawUrlEncode(name)}`;
    // What the Laravel broadcaster grants (laravel-mercure.md §2.7) and what the Echo client subscribes with (§3).
    const grantPattern = (name: string) => `${SUBS}/:match_type/${rawUrlEncode(channelTopic(name))}{/:subscriber}?`;
    const clientPattern = (name: string) => `${SUBS}/:match_type/${rawUrlEncode(channelTopic(name))}/:subscriber`;
    const snapshotPath = (name: string) => `${SUBS}/exact/${rawUrlEncode(channelTopic(name))}`;

    function laravelCookie(hub: DevHub, userId: string, channels: string[]): Record<string, string> {
        const details = [
            detail(["subscribe"], [channelTopic("private-inbox." + userId)]),
            ...channels.map((name) =>
                detail(
                    ["subscribe"],
                    [channelTopic(name), { match: grantPattern(name), match_type: "urlpattern" }],
                    { user_id: userId, user_info: { id: Number(userId), room: name } },
                ),
            ),
            detail(["subscribe", "publish"], channels.map((name) => `${PREFIX}whisper/${rawUrlEncode(name)}`)),
        ];
        return cookie(token(hub, details));
    }

    async function join(hub: DevHub, userId: string, channel: string) {
        return subscribe(hub, [["match", channelTopic(channel)], ["match_urlpattern", clientPattern(channel)]], laravelCookie(hub, userId, [channel]));
    }

    async function snapshot(hub: DevHub, userId: string, channel: string, as = [channel]) {
        return fetch(`${hub.origin}${snapshotPath(channel)}`, { headers: laravelCookie(hub, userId, as) });
    }

    it("authorizes the snapshot and delivers member joins and leaves", async () => {
        const hub = await startHub();
        expect(grantPattern("presence-room.1")).toBe(
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1{/:subscriber}?",
        );
        const alice = await join(hub, "42", "presence-room.1");
        expect(alice.status).toBe(200);
        // Alice's matcher also routes the announcement of her own exact subscription.
        const [self] = await alice.next(1);
        expect(json(self!)).toMatchObject({ match_type: "exact", active: true, payload: { user_id: "42" } });

        // The client fetches the snapshot after open; it holds alice's own exact subscription with her payload.
        const first = await snapshot(hub, "42", "presence-room.1");
        expect(first.status).toBe(200);
        const members = ((await first.json()) as { subscriptions: Record<string, unknown>[] }).subscriptions;
        expect(members).toHaveLength(1);
        expect(members[0]).toMatchObject({
            match: channelTopic("presence-room.1"),
            match_type: "exact",
            active: true,
            payload: { user_id: "42", user_info: { id: 42, room: "presence-room.1" } },
        });

        const bob = await join(hub, "43", "presence-room.1");
        // Alice sees bob's exact subscription only (his urlpattern subscription has another topic).
        const [joined] = await alice.next(1);
        expect(joined!.type).toBe("mercure");
        const joinedDoc = json(joined!);
        expect(joinedDoc).toMatchObject({ match_type: "exact", active: true, payload: { user_id: "43" } });
        expect(joinedDoc["id"]).toBe(`${snapshotPath("presence-room.1")}/${rawUrlEncode(joinedDoc["subscriber"] as string)}`);
        await alice.expectNone(50);

        // Bob's urlpattern subscription also carries the payload (the grant pattern matches the pattern string).
        const bobSnapshot = await fetch(`${hub.origin}${SUBS}/urlpattern/${rawUrlEncode(clientPattern("presence-room.1"))}`, {
            headers: cookie(token(hub, [detail(["subscribe"], ["*"])])),
        });
        const patternSubs = ((await bobSnapshot.json()) as { subscriptions: Record<string, unknown>[] }).subscriptions;
        expect(patternSubs.map((s) => s["payload"])).toEqual([
            { user_id: "42", user_info: { id: 42, room: "presence-room.1" } },
            { user_id: "43", user_info: { id: 43, room: "presence-room.1" } },
        ]);

        const both = ((await (await snapshot(hub, "43", "presence-room.1")).json()) as { subscriptions: Record<string, unknown>[] }).subscriptions;
        expect(both.map((s) => (s["payload"] as { user_id: string }).user_id)).toEqual(["42", "43"]);

        bob.close();
        const [left] = await alice.next(1);
        expect(json(left!)).toMatchObject({ subscriber: joinedDoc["subscriber"], active: false, payload: { user_id: "43" } });
    });

    it("keeps other rooms' members and snapshots out of reach", async () => {
        const hub = await startHub();
        const carol = await join(hub, "44", "presence-room.2");
        await carol.next(1);
        // Carol also routes room.1's events, but her grants only cover room.2.
        const spying = await subscribe(hub, [["match_urlpattern", clientPattern("presence-room.1")]], laravelCookie(hub, "44", ["presence-room.2"]));
        await join(hub, "42", "presence-room.1");
        await Promise.all([carol.expectNone(100), spying.expectNone(0)]);
        expect((await snapshot(hub, "44", "presence-room.1", ["presence-room.2"])).status).toBe(403);
        expect((await snapshot(hub, "44", "presence-room.2")).status).toBe(200);
    });
});
