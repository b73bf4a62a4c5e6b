import { describe, expect, it } from "vitest";
import { MercureError } from "../../../src/errors";
import { allToken, bearer, cookie, detail, metadataUrl, post, startHub, subscribe, token } from "./helpers";

const T = "https://example.com/t";

describe("publish authorization", () => {
    it("answers 401 with a bare challenge without a token", async () => {
        const hub = await startHub();
        const response = await post(hub, [["topic", T]]);
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl(hub)}"`);
    });

    it("answers 401 invalid_token for an invalid token and 400 invalid_request for a malformed header", async () => {
        const hub = await startHub();
        const invalid = await post(hub, [["topic", T]], bearer(token(hub, [detail(["publish"], ["*"])], {}, { key: "nope" })));
        expect(invalid.status).toBe(401);
        expect(invalid.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl(hub)}"`);
        const malformed = await post(hub, [["topic", T]], { authorization: "Basic Zm9vOmJhcg==" });
        expect(malformed.status).toBe(400);
        expect(malformed.headers.get("www-authenticate")).toBe(`Bearer error="invalid_request", resource_metadata="${metadataUrl(hub)}"`);
    });

    it("verifies publishers with publisherJwtKey when keys are split", async () => {
        const hub = await startHub({ publisherJwtKey: "pub-key", subscriberJwtKey: "sub-key" });
        const grants = [detail(["publish"], ["*"])];
        expect((await post(hub, [["topic", T]], bearer(token(hub, grants, {}, { key: "pub-key" })))).status).toBe(200);
        expect((await post(hub, [["topic", T]], bearer(token(hub, grants, {}, { key: "sub-key" })))).status).toBe(401);
    });

    it("answers 403 insufficient_scope and dispatches nothing unless every topic is granted", async () => {
        const hub = await startHub({ anonymous: true });
        const watcher = await subscribe(hub, [["match", "*"]]);
        const jwt = token(hub, [
            detail(["publish"], [T]),
            detail(["subscribe"], ["urn:alt"]),
            detail(["publish"], [{ match: "https://example.com/ok/:id", match_type: "urlpattern" }]),
        ]);
        for (const topics of [[T, "urn:alt"], ["urn:alt"], ["https://example.com/nope"]]) {
            const response = await post(hub, topics.map((t) => ["topic", t]), bearer(jwt));
            expect(response.status).toBe(403);
            expect(response.headers.get("www-authenticate")).toBe(
                `Bearer error="insufficient_scope", resource_metadata="${metadataUrl(hub)}"`,
            );
        }
        await watcher.expectNone(50);
        expect(hub.hub.stats.publishes).toBe(0);
        expect((await post(hub, [["topic", T], ["topic", "https://example.com/ok/1"]], bearer(jwt))).status).toBe(200);
        expect(await watcher.next(1)).toHaveLength(1);
        expect(hub.hub.stats.publishes).toBe(1);
    });
});

describe("publish request", () => {
    it("answers 200 text/plain with a generated urn:uuid id, or the id given", async () => {
        const hub = await startHub();
        const generated = await post(hub, [["topic", T], ["data", "x"]], bearer(allToken(hub)));
        expect(generated.status).toBe(200);
        expect(generated.headers.get("content-type")).toBe("text/plain; charset=utf-8");
        expect(await generated.text()).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        const given = await post(hub, [["topic", T], ["id", "urn:my:id"]], bearer(allToken(hub)));
        expect(await given.text()).toBe("urn:my:id");
    });

    it("ignores unknown fields and treats an empty id, type or retry as absent", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", T]]);
        const response = await post(hub, [["topic", T], ["colour", "blue"], ["id", ""], ["type", ""], ["retry", ""]], bearer(allToken(hub)));
        expect(response.status).toBe(200);
        const [event] = await stream.next(1);
        expect(event).toMatchObject({ type: "message", lastEventId: await response.text() });
    });

    const invalid: [string, [string, string][]][] = [
        ["no topic", [["data", "x"]]],
        ["an empty topic", [["topic", ""]]],
        ["the * topic", [["topic", "*"]]],
        ["a topic with a control character", [["topic", "a\nb"]]],
        ["a topic with a format character", [["topic", "a\u200Eb"]]],
        ["the hub path as topic", [["topic", "/.well-known/mercure"]]],
        ["a topic under the hub path", [["topic", "/.well-known/mercure/subscriptions/exact/a/b"]]],
        ["a reserved topic on another host", [["topic", "https://other.example/.well-known/mercure/x"]]],
        ["a reserved topic behind dot segments", [["topic", "/foo/../.well-known/mercure"]]],
        ["a reserved topic behind encoded dot segments", [["topic", "/foo/%2e%2E/.well-known/mercure/x"]]],
        ["a reserved topic with encoded unreserved characters", [["topic", "/.well-known/%6Dercure/x"]]],
        ["a relative reserved topic", [["topic", "mercure/x"]]],
        ["a reserved alternate topic", [["topic", T], ["topic", "/.well-known/mercure/x"]]],
        ["an id starting with #", [["topic", T], ["id", "#frag"]]],
        ["the id earliest", [["topic", T], ["id", "earliest"]]],
        ["an id with a control character", [["topic", T], ["id", "a\rb"]]],
        ["the type mercure", [["topic", T], ["type", "mercure"]]],
        ["a type with a newline", [["topic", T], ["type", "a\nb"]]],
        ["a non-numeric retry", [["topic", T], ["retry", "1.5"]]],
        ["a negative retry", [["topic", T], ["retry", "-1"]]],
    ];

    it.each(invalid)("answers 400 for %s", async (_name, fields) => {
        const hub = await startHub({ anonymous: true });
        const watcher = await subscribe(hub, [["match", "*"]]);
        const response = await post(hub, fields, bearer(allToken(hub)));
        expect(response.status).toBe(400);
        await watcher.expectNone(30);
    });

    it("accepts topics that merely resemble the hub path", async () => {
        const hub = await startHub();
        for (const topic of ["/.well-known/mercurex", "https://example.com/.well-known/other", "urn:.well-known:mercure"]) {
            expect((await post(hub, [["topic", topic]], bearer(allToken(hub)))).status).toBe(200);
        }
    });

    it("answers 400 for invalid UTF-8 and for a body that is not form-urlencoded", async () => {
        const hub = await startHub();
        const headers = { ...bearer(allToken(hub)), "content-type": "application/x-www-form-urlencoded" };
        expect((await fetch(hub.url, { method: "POST", headers, body: "topic=a&data=%FF" })).status).toBe(400);
        const json = await fetch(hub.url, {
            method: "POST",
            headers: { ...bearer(allToken(hub)), "content-type": "application/json" },
            body: JSON.stringify({ topic: "a" }),
        });
        expect(json.status).toBe(400);
        expect((await fetch(hub.url, { method: "POST", headers, body: "topic=a&data=%C3%A9" })).status).toBe(200);
    });

    it("answers 413 for a body over 1 MiB", async () => {
        const hub = await startHub();
        const response = await post(hub, [["topic", T], ["data", "x".repeat(1024 * 1024)]], bearer(allToken(hub)));
        expect(response.status).toBe(413);
    });

    it("answers 405 for other methods", async () => {
        const hub = await startHub();
        expect((await fetch(hub.url, { method: "PUT" })).status).toBe(405);
    });
});

describe("cookie-authenticated publish (CSRF)", () => {
    const jwt = (hub: Parameters<typeof token>[0]) => token(hub, [detail(["publish"], ["*"])]);

    it("needs an Origin or Referer", async () => {
        const hub = await startHub();
        const response = await post(hub, [["topic", T]], cookie(jwt(hub)));
        expect(response.status).toBe(400);
        expect(response.headers.get("www-authenticate")).toBe(`Bearer error="invalid_request", resource_metadata="${metadataUrl(hub)}"`);
    });

    it("refuses a foreign Origin, and the hub's own origin unless it is listed, as the reference hub does", async () => {
        const hub = await startHub({ publishOrigins: ["http://app.test"] });
        const foreign = await post(hub, [["topic", T]], { ...cookie(jwt(hub)), origin: "http://evil.test" });
        expect(foreign.status).toBe(400);
        expect(foreign.headers.get("www-authenticate")).toBe(`Bearer error="invalid_request", resource_metadata="${metadataUrl(hub)}"`);
        expect((await post(hub, [["topic", T]], { ...cookie(jwt(hub)), origin: hub.origin })).status).toBe(400);
        expect((await post(hub, [["topic", T]], { ...cookie(jwt(hub)), origin: "http://app.test" })).status).toBe(200);

        const own = await startHub({ publishOrigins: [] });
        expect((await post(own, [["topic", T]], { ...cookie(jwt(own)), origin: own.origin })).status).toBe(400);
        const listed = await startHub({ publishOrigins: ["http://placeholder.test"] });
        expect((await post(listed, [["topic", T]], { ...cookie(jwt(listed)), origin: "http://placeholder.test" })).status).toBe(200);
    });

    it("checks the origin before the token: an expired cookie from a refused origin is 400, from a listed one 401", async () => {
        const hub = await startHub({ publishOrigins: ["http://app.test"] });
        const expired = token(hub, [detail(["publish"], ["*"])], { exp: Math.floor(Date.now() / 1000) - 10 });
        expect((await post(hub, [["topic", T]], { ...cookie(expired), origin: "http://evil.test" })).status).toBe(400);
        expect((await post(hub, [["topic", T]], { ...cookie("not-a-jwt"), origin: "http://evil.test" })).status).toBe(400);
        const listed = await post(hub, [["topic", T]], { ...cookie(expired), origin: "http://app.test" });
        expect(listed.status).toBe(401);
        expect(listed.headers.get("www-authenticate")).toBe(`Bearer error="invalid_token", resource_metadata="${metadataUrl(hub)}"`);
    });

    it("accepts any origin when the list holds *", async () => {
        const hub = await startHub({ publishOrigins: ["*"] });
        expect((await post(hub, [["topic", T]], { ...cookie(jwt(hub)), origin: "http://anywhere.test" })).status).toBe(200);
    });

    it("falls back to the Referer's origin", async () => {
        const hub = await startHub({ publishOrigins: ["http://app.test"] });
        expect((await post(hub, [["topic", T]], { ...cookie(jwt(hub)), referer: "http://app.test/page?x=1" })).status).toBe(200);
        expect((await post(hub, [["topic", T]], { ...cookie(jwt(hub)), referer: "http://evil.test/page" })).status).toBe(400);
    });

    it("does not apply to header authentication", async () => {
        const hub = await startHub();
        expect((await post(hub, [["topic", T]], { ...bearer(jwt(hub)), origin: "http://evil.test" })).status).toBe(200);
    });
});

describe("in-process publish", () => {
    it("delivers without authorization and returns the id", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", T]]);
        const id = hub.hub.publish({ topics: [T], data: "line1\nline2", type: "note", retry: 100 });
        expect(id).toMatch(/^urn:uuid:/);
        expect(hub.hub.publish({ topics: [T], id: "given" })).toBe("given");
        const [first, second] = await stream.next(2);
        expect(first).toMatchObject({ type: "note", data: "line1\nline2", lastEventId: id, retry: 100 });
        expect(second).toMatchObject({ data: "", lastEventId: "given" });
        expect(hub.hub.stats.publishes).toBe(2);
    });

    it.each([
        ["no topic", { topics: [] }],
        ["the * topic", { topics: ["*"] }],
        ["a reserved topic", { topics: ["/.well-known/mercure/subscriptions"] }],
        ["the mercure type", { topics: [T], type: "mercure" }],
        ["a # id", { topics: [T], id: "#x" }],
        ["a fractional retry", { topics: [T], retry: 1.5 }],
        ["a lone surrogate in data", { topics: [T], data: "\uD800" }],
    ])("throws on %s", async (_name, update) => {
        const hub = await startHub();
        expect(() => hub.hub.publish(update)).toThrow(MercureError);
        expect(hub.hub.stats.publishes).toBe(0);
    });

    it("publishes a burst in order, each stream receiving every update of it, and stops at an invalid one", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", T]]);
        const ids = hub.hub.publishBurst([1, 2, 3].map((n) => ({ topics: [T], data: `n${n}` })));
        expect(ids).toHaveLength(3);
        const events = await stream.next(3);
        expect(events.map((event) => [event.data, event.lastEventId])).toEqual(ids.map((id, i) => [`n${i + 1}`, id]));
        expect(() => hub.hub.publishBurst([{ topics: [T], data: "n4" }, { topics: [] }, { topics: [T], data: "n6" }])).toThrow(MercureError);
        expect((await stream.next(1))[0]!.data).toBe("n4");
        await stream.expectNone(50);
        expect(hub.hub.stats.publishes).toBe(4);
        // The stream is writable again after the burst (uncorked): a later publish reaches it at once.
        hub.hub.publish({ topics: [T], data: "n7" });
        expect((await stream.next(1))[0]!.data).toBe("n7");
    });

    it("delivers private updates only to granted subscribers", async () => {
        const hub = await startHub({ anonymous: true });
        const granted = await subscribe(hub, [["match", T]], bearer(token(hub, [detail(["subscribe"], [T])])));
        const anonymous = await subscribe(hub, [["match", T]]);
        hub.hub.publish({ topics: [T], data: "secret", private: true });
        expect((await granted.next(1))[0]!.data).toBe("secret");
        await anonymous.expectNone(50);
    });
});
