import { afterEach, describe, expect, it } from "vitest";
import type { DevServer, DevServerOptions } from "../../src/dev/server";
import { whisperTopic } from "../../src/topic/topics";
import { CookieJar } from "./support/node-client";
import { startStack } from "./support/stack";

const PREFIX = "https://laravel.alt/echo/";
const started: DevServer[] = [];
afterEach(async () => {
    await Promise.all(started.splice(0).map((server) => server.close()));
});

async function stack(options: DevServerOptions = {}): Promise<DevServer> {
    const server = await startStack(options);
    started.push(server);
    return server;
}

/** A cookie jar logged in as `userId` that holds the hub cookie for `channels`. */
async function authorized(server: DevServer, userId: number, channels: string[]): Promise<CookieJar> {
    const jar = new CookieJar();
    expect((await jar.fetch(`${server.url}/dev/login?user=${userId}`, { method: "POST" })).status).toBe(200);
    const auth = await jar.fetch(server.authEndpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify({ channel_names: channels }),
    });
    expect(auth.status).toBe(200);
    return jar;
}

/** A whisper POST with the hub cookie, as a page would send it. */
function whisper(server: DevServer, jar: CookieJar, channel: string, headers: Record<string, string>): Promise<Response> {
    const body = new URLSearchParams([
        ["topic", whisperTopic(PREFIX, channel)],
        ["data", JSON.stringify({ channels: [channel], event: "client-typing", payload: {} })],
        ["private", "on"],
    ]);
    return jar.fetch(server.hubUrl, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers }, body: body.toString() });
}

/** The status of a subscribe request carrying the jar's cookies (the stream is closed at once). */
async function subscribeStatus(server: DevServer, jar: CookieJar, topic: string): Promise<number> {
    const controller = new AbortController();
    const url = `${server.hubUrl}?${new URLSearchParams([["match", topic]]).toString()}`;
    const response = await jar.fetch(url, { signal: controller.signal });
    controller.abort();
    return response.status;
}

describe("the dev stack configures its hub as a real deployment must", () => {
    it("makes its hub trust the issuer its app signs with, and nothing else", async () => {
        const topic = `${PREFIX}channel/private-orders.1`;
        const byDefault = await stack();
        expect(await subscribeStatus(byDefault, await authorized(byDefault, 1, ["private-orders.1"]), topic)).toBe(200);
        const custom = await stack({ app: { issuer: "https://my-app.test" } });
        expect(await subscribeStatus(custom, await authorized(custom, 1, ["private-orders.1"]), topic)).toBe(200);
        expect(await custom.broadcast({ channels: ["news"], event: "e" })).toHaveLength(1);
        const mismatched = await stack({ hub: { issuers: ["https://someone-else.test"] } });
        expect(await subscribeStatus(mismatched, await authorized(mismatched, 1, ["private-orders.1"]), topic)).toBe(401);
        await expect(mismatched.broadcast({ channels: ["news"], event: "e" })).rejects.toThrow(/HTTP 401/);
    });

    it("lists its own origin in the hub's publish origins, so whispers from its pages are accepted and others refused", async () => {
        const server = await stack();
        const jar = await authorized(server, 1, ["private-orders.1"]);
        expect((await whisper(server, jar, "private-orders.1", { Origin: server.url })).status).toBe(200);
        expect((await whisper(server, jar, "private-orders.1", { Origin: "http://evil.test" })).status).toBe(400);
        expect((await whisper(server, jar, "private-orders.1", {})).status).toBe(400);
    });

    it("follows explicit publish origins, without exempting its own", async () => {
        const server = await stack({ hub: { publishOrigins: ["http://app.test"] } });
        const jar = await authorized(server, 1, ["private-orders.1"]);
        expect((await whisper(server, jar, "private-orders.1", { Origin: server.url })).status).toBe(400);
        expect((await whisper(server, jar, "private-orders.1", { Origin: "http://app.test" })).status).toBe(200);
    });
});
