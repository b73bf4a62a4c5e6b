import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { BroadcastingApp, type BroadcastingAppOptions } from "../../../src/dev/laravel";
import { cookieJwt, decodeJwt, JWT_KEY, postAuth, send, serveApp, type Started } from "./helpers";

const MASTER_KEY = createHash("sha256").update("mercure-e2e-test-key").digest("base64");
const ANN = "dev_user=42";

let server: Started | undefined;
afterEach(async () => {
    await server?.close();
    server = undefined;
});

async function start(options: Partial<BroadcastingAppOptions> = {}): Promise<{ app: BroadcastingApp; url: string }> {
    const app = new BroadcastingApp({
        hubUrl: "http://127.0.0.1:3000/.well-known/mercure",
        jwtKey: JWT_KEY,
        encryptionKey: `base64:${MASTER_KEY}`,
        users: [
            { id: 42, name: "Ann" },
            { id: 7, name: "Bob" },
        ],
        ...options,
    });
    app.channel("room.{id}", () => true)
        .channel("secret", () => false)
        .channel("orders.{id}", (user) => user.id === 42)
        .channel("lobby", (user) => ({ id: user.id, name: user.name }));
    server = await serveApp(app);
    return { app, url: server.url };
}

describe("auth request validation", () => {
    it.each([
        ["a missing list", undefined],
        ["null", null],
        ["an empty list", []],
        ["an empty object", {}],
        ["a number, cast to a list of one non-string", 5],
        ["true, cast to a list of one non-string", true],
        ["a non-string entry", ["news", 1]],
        ["a null entry", ["news", null]],
        ["101 names, even if they are duplicates", Array.from({ length: 101 }, () => "news")],
    ])("answers 403 for %s", async (_label, channelNames) => {
        const { url } = await start();
        const response = await postAuth(url, channelNames, { Cookie: ANN });
        expect(response.status).toBe(403);
        expect(response.setCookies).toEqual([]);
        expect(JSON.parse(response.body)).toHaveProperty("message");
    });

    it("casts a scalar or an object to a list, as PHP's (array) cast does", async () => {
        const { url } = await start();
        const scalar = await postAuth(url, "news", { Cookie: ANN });
        expect(scalar.status).toBe(200);
        expect(JSON.parse(scalar.body).channel_names).toEqual([{ name: "news" }]);
        const object = await postAuth(url, { a: "news", b: "private-room.1", c: "news" }, { Cookie: ANN });
        expect(object.status).toBe(200);
        expect(JSON.parse(object.body).channel_names).toEqual([{ name: "news" }, { name: "private-room.1" }]);
    });

    it("accepts exactly 100 names", async () => {
        const { url } = await start();
        const names = Array.from({ length: 100 }, (_, i) => `news.${i}`);
        const response = await postAuth(url, names);
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body).channel_names).toHaveLength(100);
    });

    it("answers 403 for a body that is not JSON", async () => {
        const { url } = await start();
        const response = await send(`${url}/broadcasting/auth`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: "{nope",
        });
        expect(response.status).toBe(403);
    });
});

describe("auth response", () => {
    it("de-duplicates names keeping the first occurrence and the order", async () => {
        const { url } = await start();
        const response = await postAuth(url, ["b", "private-room.1", "a", "b", "private-room.1"], { Cookie: ANN });
        expect(JSON.parse(response.body).channel_names).toEqual([
            { name: "b" },
            { name: "private-room.1" },
            { name: "a" },
        ]);
    });

    it("answers the exact Laravel bytes for a mixed batch", async () => {
        const { url } = await start();
        const response = await postAuth(
            url,
            ["news", "private-room.1", "private-secret", "private-encrypted-orders.1", "presence-lobby"],
            { Cookie: ANN },
        );
        expect(response.status).toBe(200);
        expect(response.headers["content-type"]).toBe("application/json");
        expect(response.body).toBe(
            '{"channel_names":[{"name":"news"},{"name":"private-room.1"},{"name":"private-secret","denied":true},' +
                '{"name":"private-encrypted-orders.1","jwk":{"kty":"oct","k":"_krVFJmDXMqUC2MJsPo6mWlCfgj2aj3NZ5FI5NCVfDE","alg":"A256GCM","use":"enc"}},' +
                '{"name":"presence-lobby"}],"expires_in":300,"topic_prefix":"https:\\/\\/laravel.alt\\/echo\\/","client_events":true}',
        );
    });

    it("escapes slashes and non-ASCII characters in channel names as Laravel does", async () => {
        const { url } = await start();
        const response = await postAuth(url, ["news/é", "private-room.ü"], { Cookie: ANN });
        expect(response.body.startsWith('{"channel_names":[{"name":"news\\/\\u00e9"},{"name":"private-room.\\u00fc"}]')).toBe(
            true,
        );
        expect(JSON.parse(response.body).channel_names[0].name).toBe("news/é");
    });

    it("never checks public names, even for guests", async () => {
        const { url } = await start();
        const response = await postAuth(url, ["secret", "private"]);
        expect(JSON.parse(response.body).channel_names).toEqual([{ name: "secret" }, { name: "private" }]);
    });

    it("denies guarded channels per channel for guests, unmatched patterns and false callbacks, and still sets a cookie", async () => {
        const { url } = await start();
        const guest = await postAuth(url, ["private-room.1", "presence-lobby", "private-encrypted-orders.1"]);
        expect(guest.status).toBe(200);
        expect(JSON.parse(guest.body).channel_names).toEqual([
            { name: "private-room.1", denied: true },
            { name: "presence-lobby", denied: true },
            { name: "private-encrypted-orders.1", denied: true },
        ]);
        expect(guest.setCookies).toHaveLength(1);
        expect(decodeJwt(cookieJwt(guest.setCookies[0] as string)).claims["sub"]).toBe("anonymous");

        const bob = await postAuth(url, ["private-unknown.1", "private-secret", "private-encrypted-orders.1", "private-room.x.y"], {
            Cookie: "dev_user=7",
        });
        expect(JSON.parse(bob.body).channel_names).toEqual([
            { name: "private-unknown.1", denied: true },
            { name: "private-secret", denied: true },
            { name: "private-encrypted-orders.1", denied: true },
            { name: "private-room.x.y", denied: true },
        ]);
    });

    it("answers 403 for the whole batch on an older all-or-nothing server", async () => {
        const { app, url } = await start({ allOrNothing: true });
        const denied = await postAuth(url, ["news", "private-room.1", "private-secret"], { Cookie: ANN });
        expect(denied.status).toBe(403);
        expect(denied.setCookies).toEqual([]);
        const granted = await postAuth(url, ["news", "private-room.1"], { Cookie: ANN });
        expect(granted.status).toBe(200);
        expect(JSON.parse(granted.body).channel_names).toEqual([{ name: "news" }, { name: "private-room.1" }]);
        expect(app.stats.authRequests.map((r) => r.status)).toEqual([403, 200]);
    });

    it("gives a jwk only to granted encrypted channels", async () => {
        const { url } = await start();
        const body = JSON.parse(
            (await postAuth(url, ["private-encrypted-orders.1", "private-encrypted-orders.2", "private-room.1"], { Cookie: ANN })).body,
        );
        expect(Object.keys(body.channel_names[0])).toEqual(["name", "jwk"]);
        expect(body.channel_names[1].jwk.k).not.toBe(body.channel_names[0].jwk.k);
        expect(body.channel_names[2]).toEqual({ name: "private-room.1" });
        const bob = JSON.parse((await postAuth(url, ["private-encrypted-orders.1"], { Cookie: "dev_user=7" })).body);
        expect(bob.channel_names).toEqual([{ name: "private-encrypted-orders.1", denied: true }]);
    });

    it("answers 500 when an encrypted channel is granted without an encryption key, but not when it is denied", async () => {
        const { url } = await start({ encryptionKey: undefined });
        const granted = await postAuth(url, ["private-room.1", "private-encrypted-orders.1"], { Cookie: ANN });
        expect(granted.status).toBe(500);
        expect(JSON.parse(granted.body).message).toMatch(/encryption_key/);
        expect(granted.setCookies).toEqual([]);
        const denied = await postAuth(url, ["private-encrypted-orders.1"], { Cookie: "dev_user=7" });
        expect(denied.status).toBe(200);
        expect(JSON.parse(denied.body).channel_names).toEqual([{ name: "private-encrypted-orders.1", denied: true }]);
    });

    it("omits topic_prefix on a legacy server and reports expires_in and client_events as configured", async () => {
        const { url } = await start({ topicPrefix: null, expiresIn: 120, clientEvents: false });
        const response = await postAuth(url, ["news"]);
        expect(response.body).toBe('{"channel_names":[{"name":"news"}],"expires_in":120,"client_events":false}');
    });

    it("reads form-encoded channel_names[] and GET query input too", async () => {
        const { url } = await start();
        const form = await send(`${url}/broadcasting/auth`, {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: ANN },
            body: "channel_names%5B%5D=news&channel_names%5B%5D=private-room.1&channel_names%5B%5D=private-secret",
        });
        expect(form.status).toBe(200);
        expect(JSON.parse(form.body).channel_names).toEqual([
            { name: "news" },
            { name: "private-room.1" },
            { name: "private-secret", denied: true },
        ]);
        const get = await send(`${url}/broadcasting/auth?channel_names[0]=news&channel_names[1]=presence-lobby`, {
            headers: { Cookie: ANN },
        });
        expect(get.status).toBe(200);
        expect(JSON.parse(get.body).channel_names).toEqual([{ name: "news" }, { name: "presence-lobby" }]);
        const single = await send(`${url}/broadcasting/auth?channel_names=news`);
        expect(single.status).toBe(200);
        expect(JSON.parse(single.body).channel_names).toEqual([{ name: "news" }]);
    });

    it("records every auth request with its channel_names input and status", async () => {
        const { app, url } = await start();
        await postAuth(url, ["news"]);
        await postAuth(url, []);
        expect(app.stats.authRequests).toEqual([
            { channelNames: ["news"], status: 200 },
            { channelNames: [], status: 403 },
        ]);
        app.resetStats();
        expect(app.stats.authRequests).toEqual([]);
    });

    it("uses a custom resolveUser", async () => {
        const { url } = await start({
            resolveUser: (req) => (req.headers.authorization === "Bearer ann" ? { id: "ann-uuid", name: "Ann" } : null),
        });
        const response = await postAuth(url, ["presence-lobby"], { Authorization: "Bearer ann" });
        expect(JSON.parse(response.body).channel_names).toEqual([{ name: "presence-lobby" }]);
        expect(decodeJwt(cookieJwt(response.setCookies[0] as string)).claims["sub"]).toBe("ann-uuid");
    });

    it("answers 500 when a channel callback throws", async () => {
        const { app, url } = await start();
        app.channel("boom", () => {
            throw new Error("callback exploded");
        });
        const response = await postAuth(url, ["private-boom"], { Cookie: ANN });
        expect(response.status).toBe(500);
        expect(app.stats.authRequests.at(-1)?.status).toBe(500);
    });
});
