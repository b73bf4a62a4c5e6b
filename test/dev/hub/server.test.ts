import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { MercureHub } from "../../../src/dev/hub";
import { MercureError } from "../../../src/errors";
import { allToken, bearer, detail, ISSUER, KEY, publish, sleep, startHub, subscribe, subscribeUrl, token } from "./helpers";
import { openSse } from "./sse-client";

const T = "https://example.com/t";
const METADATA = "/.well-known/oauth-protected-resource/.well-known/mercure";

/** Send raw bytes over TCP and return what the server answered before closing or the timeout. */
function rawRequest(port: number, text: string, waitMs = 300): Promise<string> {
    return new Promise((resolve) => {
        const socket = connect(port, "127.0.0.1", () => socket.write(text));
        let answer = "";
        socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
        socket.on("error", () => undefined);
        const done = (): void => resolve(answer);
        socket.on("close", done);
        setTimeout(() => {
            socket.destroy();
            done();
        }, waitMs);
    });
}

describe("protected resource metadata", () => {
    it("is served as RFC 9728 JSON at /.well-known/oauth-protected-resource<hub path>", async () => {
        const hub = await startHub();
        const response = await fetch(hub.origin + METADATA);
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("application/json");
        expect(await response.json()).toEqual({
            resource: hub.url,
            authorization_details_types_supported: ["https://mercure.rocks/authorization-detail"],
            bearer_methods_supported: ["header"],
            mercure_cookie: "mercure_access_token",
            mercure_subscriptions: true,
        });
    });

    it("reflects the resource, cookie name, subscriptions flag and hub path options", async () => {
        const hub = await startHub({ resource: "https://hub.test/hub", cookieName: "jwt", subscriptions: false, path: "/hub" });
        expect(hub.url).toBe(`${hub.origin}/hub`);
        const document = (await (await fetch(`${hub.origin}/.well-known/oauth-protected-resource/hub`)).json()) as Record<string, unknown>;
        expect(document).toMatchObject({ resource: "https://hub.test/hub", mercure_cookie: "jwt", mercure_subscriptions: false });
        const challenge = await fetch(subscribeUrl(hub, [["match", T]]));
        // On the pinned resource identifier's origin, as the Go hub names it.
        expect(challenge.headers.get("www-authenticate")).toBe('Bearer resource_metadata="https://hub.test/.well-known/oauth-protected-resource/hub"');
    });
});

describe("CORS", () => {
    const APP = "http://app.test";

    it("answers an allowlisted origin explicitly with credentials and exposed headers", async () => {
        const hub = await startHub({ anonymous: true, corsOrigins: [APP] });
        const stream = await subscribe(hub, [["match", T], ["last_event_id", "x"]], { origin: APP });
        expect(stream.headers.get("access-control-allow-origin")).toBe(APP);
        expect(stream.headers.get("access-control-allow-credentials")).toBe("true");
        // Only Link, as on the reference hub: cross-origin fetch clients cannot read Mercure-Last-Event-ID there.
        expect(stream.headers.get("access-control-expose-headers")).toBe("Link");
        expect(stream.headers.get("vary")).toBe("Origin");
        for (const path of [METADATA, "/.well-known/mercure/subscriptions"]) {
            const response = await fetch(hub.origin + path, { headers: { origin: APP } });
            expect(response.headers.get("access-control-allow-origin")).toBe(APP);
        }
    });

    it("gives unknown origins no CORS headers", async () => {
        const hub = await startHub({ anonymous: true, corsOrigins: [APP] });
        const stream = await subscribe(hub, [["match", T]], { origin: "http://evil.test" });
        expect(stream.status).toBe(200);
        expect(stream.headers.get("access-control-allow-origin")).toBeNull();
        expect(stream.headers.get("access-control-allow-credentials")).toBeNull();
    });

    it("answers preflights with the allowed methods and headers for allowlisted origins only", async () => {
        const hub = await startHub({ corsOrigins: [APP] });
        const preflight = (origin: string, path = "/.well-known/mercure") =>
            fetch(hub.origin + path, {
                method: "OPTIONS",
                headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization" },
            });
        const allowed = await preflight(APP);
        expect(allowed.status).toBe(204);
        expect(allowed.headers.get("access-control-allow-origin")).toBe(APP);
        expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
        expect(allowed.headers.get("access-control-allow-methods")).toBe("GET, HEAD, POST");
        expect(allowed.headers.get("access-control-allow-headers")).toBe("authorization, cache-control, last-event-id");
        const refused = await preflight("http://evil.test");
        expect(refused.headers.get("access-control-allow-origin")).toBeNull();
        expect(refused.headers.get("access-control-allow-methods")).toBeNull();
        expect((await preflight(APP, "/.well-known/mercure/subscriptions/exact/a")).headers.get("access-control-allow-origin")).toBe(APP);
    });

    it("refuses a resource identifier that is not an absolute URL", () => {
        for (const resource of ["/.well-known/mercure", "hub.example", "https://hub.example/.well-known/mercure#x"]) {
            expect(() => new MercureHub({ jwtKey: KEY, issuers: [ISSUER], resource })).toThrow(/resource/);
        }
    });

    it("refuses a wildcard origin list", () => {
        expect(() => new MercureHub({ jwtKey: KEY, issuers: [ISSUER], corsOrigins: ["*"] })).toThrow(MercureError);
    });
});

describe("dev server", () => {
    it("answers / with a page naming the development hub and its endpoint, and 404 elsewhere", async () => {
        const hub = await startHub();
        const page = await fetch(hub.origin + "/");
        expect(page.status).toBe(200);
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
        const html = await page.text();
        expect(html).toContain("laravel-echo-mercure development hub");
        expect(html).toContain("not a production hub");
        expect(html).toContain(hub.url);
        expect((await fetch(hub.origin + "/other")).status).toBe(404);
        expect((await fetch(hub.origin + "/.well-known/mercure/other")).status).toBe(404);
    });

    it("listens on 127.0.0.1", async () => {
        const hub = await startHub();
        expect(hub.origin).toBe(`http://127.0.0.1:${hub.port}`);
        expect(hub.url).toBe(`http://127.0.0.1:${hub.port}/.well-known/mercure`);
    });

    it("stop() drops streams and stops listening; restart() listens on the same port with history kept", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const stream = await subscribe(hub, [["match", T]]);
        const before = await publish(hub, [["topic", T], ["data", "before"]]);
        await stream.next(1);
        await hub.stop();
        expect(await stream.finished).toBe("error");
        await expect(fetch(hub.url)).rejects.toThrow();
        hub.hub.publish({ topics: [T], data: "while stopped" });
        await hub.restart();
        const resumed = await subscribe(hub, [["match", T]], { "last-event-id": before });
        expect(resumed.headers.get("mercure-last-event-id")).toBe(before);
        expect((await resumed.next(1))[0]!.data).toBe("while stopped");
    });

    it("close() ends streams and keeps history on the hub instance", async () => {
        const hub = await startHub({ anonymous: true, subscriptions: false });
        const stream = await subscribe(hub, [["match", T]]);
        await publish(hub, [["topic", T]]);
        await hub.close();
        expect(["end", "error"]).toContain(await stream.finished);
        expect(hub.hub.stats.openConnections).toBe(0);
    });
});

describe("test hooks", () => {
    it("dropConnections() cuts streams abruptly and announces the subscriptions as inactive", async () => {
        const hub = await startHub({ anonymous: true });
        const stream = await subscribe(hub, [["match", T]]);
        expect(hub.hub.stats.openConnections).toBe(1);
        hub.hub.dropConnections();
        expect(await stream.finished).toBe("error");
        await stream.waitFor(() => hub.hub.stats.openConnections === 0);
        const replay = await subscribe(hub, [["match_urlpattern", "/.well-known/mercure/subscriptions/:t/:m/:s"], ["last_event_id", "earliest"]], bearer(allToken(hub)));
        const [active, inactive] = await replay.next(2);
        expect(JSON.parse(active!.data)).toMatchObject({ match: T, active: true });
        expect(JSON.parse(inactive!.data)).toMatchObject({ match: T, active: false });
    });

    it("stats record every subscribe request with its raw query and Last-Event-ID, and publishes; resetStats() clears them", async () => {
        const hub = await startHub({ anonymous: false });
        const stats = hub.hub.stats;
        const jwt = token(hub, [detail(["subscribe", "publish"], ["*"])]);
        await subscribe(hub, [["match", "a b"], ["last_event_id", "q"]], { ...bearer(jwt), "last-event-id": "h" });
        await fetch(subscribeUrl(hub, [["match", "x"]]));
        await publish(hub, [["topic", T]]);
        hub.hub.publish({ topics: [T] });
        expect(stats.subscribeConnections).toEqual([
            { query: "match=a+b&last_event_id=q", lastEventId: "h", at: expect.any(Number), status: 200, closesAt: expect.any(Number) },
            { query: "match=x", lastEventId: null, at: expect.any(Number), status: 401, closesAt: null },
        ]);
        expect(stats.publishes).toBe(2);
        expect(stats.openConnections).toBe(1);
        hub.hub.resetStats();
        expect(hub.hub.stats.subscribeConnections).toEqual([]);
        expect(hub.hub.stats.publishes).toBe(0);
        expect(hub.hub.stats.expiredStreams).toBe(0);
        expect(hub.hub.stats.openConnections).toBe(1);
    });
});

describe("mounting and robustness", () => {
    it("handle() returns false and writes nothing for paths outside the hub", async () => {
        const hub = new MercureHub({ jwtKey: KEY, issuers: [ISSUER], anonymous: true });
        const handled: boolean[] = [];
        const server = createServer((req, res) => {
            const result = hub.handle(req, res);
            handled.push(result);
            if (!result) {
                expect(res.headersSent).toBe(false);
                res.end("host app");
            }
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        try {
            expect(await (await fetch(`${origin}/app`)).text()).toBe("host app");
            expect((await fetch(`${origin}/.well-known/mercure`)).status).toBe(400);
            expect(handled).toEqual([false, true]);
        } finally {
            hub.close();
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        }
    });

    it("survives malformed requests", async () => {
        const hub = await startHub({ anonymous: true });
        const answers = await Promise.all([
            rawRequest(hub.port, "GET /.well-known/mercure?match=a%ZZ&match_urlpattern=%E0%80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
            rawRequest(hub.port, "GET /.well-known/mercure?match=a HTTP/1.1\r\nHost: bad/host@x\r\nCookie: ;;=;mercure_access_token=\r\n\r\n"),
            rawRequest(hub.port, "GET /.well-known/mercure?match=a HTTP/1.0\r\nAuthorization: Bearer a.b.c\r\n\r\n"),
            rawRequest(hub.port, "POST /.well-known/mercure HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer !!!\r\nContent-Length: 5\r\n\r\ntopic"),
            rawRequest(hub.port, `POST /.well-known/mercure HTTP/1.1\r\nHost: 127.0.0.1:${hub.port}\r\nAuthorization: Bearer ${allToken(hub)}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ntopic\r\n`, 100),
            rawRequest(hub.port, "GET http://127.0.0.1/.well-known/mercure?match=a HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
            rawRequest(hub.port, "garbage\r\n\r\n"),
        ]);
        expect(answers[0]).toMatch(/^HTTP\/1\.1 400/);
        expect(answers[1]).toMatch(/^HTTP\/1\.1 200/);
        expect(answers[2]).toMatch(/^HTTP\/1\.1 401/);
        expect(answers[3]).toMatch(/^HTTP\/1\.1 400/);
        expect(answers[4]).toBe("");
        expect(answers[5]).toMatch(/^HTTP\/1\.1 200/);
        await sleep(50);
        expect((await fetch(hub.origin + METADATA)).status).toBe(200);
        expect(hub.hub.stats.openConnections).toBe(0);
    });

    it("answers 413 for a chunked body that grows over 1 MiB", async () => {
        const hub = await startHub();
        const status = await new Promise<number>((resolve, reject) => {
            const req = request(hub.url, {
                method: "POST",
                headers: { ...bearer(allToken(hub)), "content-type": "application/x-www-form-urlencoded" },
            }, (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
            });
            req.on("error", reject);
            req.write("topic=a&data=");
            req.end("x".repeat(1024 * 1024 + 10));
        });
        expect(status).toBe(413);
    });

    it("keeps working when a subscriber vanishes mid-dispatch", async () => {
        const hub = await startHub({ anonymous: true });
        const streams = await Promise.all(Array.from({ length: 5 }, () => openSse(subscribeUrl(hub, [["match", T]]))));
        streams.forEach((s) => s.close());
        for (let i = 0; i < 20; i++) hub.hub.publish({ topics: [T], data: "x".repeat(10_000) });
        await sleep(50);
        const alive = await subscribe(hub, [["match", T]]);
        await publish(hub, [["topic", T], ["data", "ok"]]);
        expect((await alive.next(1))[0]!.data).toBe("ok");
    });
});
