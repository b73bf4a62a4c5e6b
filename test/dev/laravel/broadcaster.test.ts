import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { base64UrlDecode, verifyJwt } from "../../../src/dev/jwt/jwt";
import { BroadcastingApp, LaravelDevError, openJwe, type BroadcastingAppOptions } from "../../../src/dev/laravel";
import { decodeJwt, JWT_KEY, postAuth, serveApp, startFakeHub, type FakeHub, type Started } from "./helpers";

const MASTER_KEY = createHash("sha256").update("mercure-e2e-test-key").digest("base64");
const P = "https://laravel.alt/echo/";
// Plaintext-absence checks need a marker that random ciphertext cannot contain by chance: a two-letter
// word like "hi" turns up somewhere in the ~150 random base64url characters of an encrypted publish in
// about one run in thirty; this 24-letter one with a probability below 250 / 64^24 (about 10^-41).
const MARKER = "PlaintextMustNotLeakHere";

let hub: FakeHub;
let server: Started | undefined;
beforeEach(async () => {
    hub = await startFakeHub();
});
afterEach(async () => {
    await hub.close();
    await server?.close();
    server = undefined;
});

function makeApp(options: Partial<BroadcastingAppOptions> = {}): BroadcastingApp {
    return new BroadcastingApp({
        hubUrl: () => `${hub.url}/.well-known/mercure`,
        jwtKey: JWT_KEY,
        encryptionKey: MASTER_KEY,
        users: [{ id: 42, name: "Ann" }],
        ...options,
    }).channel("chat.{id}", () => true);
}

describe("broadcast splitting", () => {
    it("publishes public channels together, then each guarded and encrypted channel alone and private", async () => {
        const app = makeApp();
        const ids = await app.broadcast({
            channels: ["private-a", "news", "presence-b", "alerts", "private-encrypted-chat.1"],
            event: "App\\Events\\X",
            payload: { text: `${MARKER}/é`, socket: "sock.1" },
        });
        expect(ids).toEqual(["urn:uuid:fake-1", "urn:uuid:fake-2", "urn:uuid:fake-3", "urn:uuid:fake-4"]);
        expect(hub.requests).toHaveLength(4);
        const [pub, priv, presence, encrypted] = hub.requests as [
            (typeof hub.requests)[0],
            (typeof hub.requests)[0],
            (typeof hub.requests)[0],
            (typeof hub.requests)[0],
        ];

        expect(pub.headers["content-type"]).toBe("application/x-www-form-urlencoded");
        expect([...pub.form.keys()]).toEqual(["topic", "topic", "data"]);
        expect(pub.form.getAll("topic")).toEqual([`${P}channel/news`, `${P}channel/alerts`]);
        expect(pub.form.get("data")).toBe(
            `{"channels":["news","alerts"],"event":"App\\\\Events\\\\X","payload":{"text":"${MARKER}\\/\\u00e9"},"socket":"sock.1"}`,
        );

        expect([...priv.form.keys()]).toEqual(["topic", "data", "private"]);
        expect(priv.form.getAll("topic")).toEqual([`${P}channel/private-a`]);
        expect(priv.form.get("private")).toBe("on");
        expect(priv.form.get("data")).toBe(
            `{"channels":["private-a"],"event":"App\\\\Events\\\\X","payload":{"text":"${MARKER}\\/\\u00e9"},"socket":"sock.1"}`,
        );

        expect(presence.form.getAll("topic")).toEqual([`${P}channel/presence-b`]);
        expect(presence.form.get("private")).toBe("on");
        expect(JSON.parse(presence.form.get("data") as string).channels).toEqual(["presence-b"]);

        expect([...encrypted.form.keys()]).toEqual(["topic", "data", "private"]);
        expect(encrypted.form.getAll("topic")).toEqual([`${P}channel/private-encrypted-chat.1`]);
        const outer = JSON.parse(encrypted.form.get("data") as string) as Record<string, unknown>;
        expect(Object.keys(outer)).toEqual(["channels", "data"]);
        expect(outer["channels"]).toEqual(["private-encrypted-chat.1"]);
        expect(encrypted.form.get("data")).not.toContain(MARKER);
    });

    it("encodes a missing or empty payload as [] and omits a null socket", async () => {
        const app = makeApp();
        await app.broadcast({ channels: ["news"], event: "e" });
        await app.broadcast({ channels: ["news"], event: "e", payload: {}, socket: null });
        await app.broadcast({ channels: ["news"], event: "e", payload: { socket: "only" } });
        await app.broadcast({ channels: ["news"], event: "e", payload: [1, 2], socket: "s" });
        expect(hub.requests.map((r) => r.form.get("data"))).toEqual([
            '{"channels":["news"],"event":"e","payload":[]}',
            '{"channels":["news"],"event":"e","payload":[]}',
            '{"channels":["news"],"event":"e","payload":[],"socket":"only"}',
            '{"channels":["news"],"event":"e","payload":[1,2],"socket":"s"}',
        ]);
    });

    it("prefers the explicit socket over one in the payload, and always removes it from the payload", async () => {
        const app = makeApp();
        await app.broadcast({ channels: ["news"], event: "e", payload: { a: 1, socket: "inner" }, socket: "outer" });
        expect(hub.requests[0]?.form.get("data")).toBe('{"channels":["news"],"event":"e","payload":{"a":1},"socket":"outer"}');
    });

    it("publishes nothing for an empty channel list and uses bare names on a legacy server", async () => {
        expect(await makeApp().broadcast({ channels: [], event: "e" })).toEqual([]);
        expect(hub.requests).toEqual([]);
        await makeApp({ topicPrefix: null }).broadcast({ channels: ["news", "private-a"], event: "e" });
        expect(hub.requests.map((r) => r.form.getAll("topic"))).toEqual([["news"], ["private-a"]]);
    });
});

describe("encrypted broadcasts", () => {
    it("are decryptable with the jwk the auth response gave, socket omitted when absent", async () => {
        const app = makeApp();
        server = await serveApp(app);
        const auth = await postAuth(server.url, ["private-encrypted-chat.1"], { Cookie: "dev_user=42" });
        const jwk = JSON.parse(auth.body).channel_names[0].jwk as { k: string };
        const key = new Uint8Array(base64UrlDecode(jwk.k) as Buffer);

        await app.broadcast({ channels: ["private-encrypted-chat.1"], event: "MessageSent", payload: { text: "hi" }, socket: "abcd.1234" });
        await app.broadcast({ channels: ["private-encrypted-chat.1"], event: "MessageSent" });
        const jwes = hub.requests.map((r) => (JSON.parse(r.form.get("data") as string) as { data: string }).data);
        expect(openJwe(key, jwes[0] as string)).toBe('{"event":"MessageSent","payload":{"text":"hi"},"socket":"abcd.1234"}');
        expect(openJwe(key, jwes[1] as string)).toBe('{"event":"MessageSent","payload":[]}');
        // A fresh random IV per publish.
        expect(jwes[0]?.split(".")[2]).not.toBe(jwes[1]?.split(".")[2]);
    });

    it("reject before publishing anything when no encryption key is configured", async () => {
        const app = makeApp({ encryptionKey: undefined });
        const error = await app.broadcast({ channels: ["news", "private-encrypted-chat.1"], event: "e" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LaravelDevError);
        expect((error as LaravelDevError).message).toMatch(/encryptionKey/);
        expect(hub.requests).toEqual([]);
    });
});

describe("publisher token", () => {
    it("is an at+jwt bearer granting publish on every topic, for the public URL audience, short-lived", async () => {
        await makeApp({ issuer: "https://app.example" }).broadcast({ channels: ["news"], event: "e" });
        const authorization = hub.requests[0]?.headers.authorization as string;
        expect(authorization).toMatch(/^Bearer /);
        const token = authorization.slice("Bearer ".length);
        expect(verifyJwt(token, JWT_KEY).ok).toBe(true);
        const { header, claims } = decodeJwt(token);
        expect(header).toEqual({ alg: "HS256", typ: "at+jwt" });
        expect(claims).toMatchObject({
            iss: "https://app.example",
            aud: `${hub.url}/.well-known/mercure`,
            client_id: "https://app.example",
            authorization_details: [{ type: "https://mercure.rocks/authorization-detail", actions: ["publish"], topics: [{ match: "*" }] }],
        });
        const iat = claims["iat"] as number;
        expect(Math.abs(iat - Date.now() / 1000)).toBeLessThan(5);
        expect(claims["exp"]).toBe(iat + 60);
        expect(claims["jti"]).toMatch(/^[0-9a-f]{32}$/);
    });

    it("uses an explicit public URL as audience, resolving a relative one against appUrl", async () => {
        await makeApp({ publicUrl: "https://hub.example.com/.well-known/mercure" }).broadcast({ channels: ["news"], event: "e" });
        await makeApp({ publicUrl: "/.well-known/mercure", appUrl: "https://app.example.com" }).broadcast({
            channels: ["news"],
            event: "e",
        });
        const auds = hub.requests.map((r) => decodeJwt((r.headers.authorization as string).slice(7)).claims["aud"]);
        expect(auds).toEqual(["https://hub.example.com/.well-known/mercure", "https://app.example.com/.well-known/mercure"]);
    });
});

describe("hub failures", () => {
    it("reject with the hub status and the channels when the hub answers non-2xx", async () => {
        hub.mode = "fail";
        const error = await makeApp().broadcast({ channels: ["private-a"], event: "e" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LaravelDevError);
        expect((error as LaravelDevError).code).toBe("hub_rejected");
        expect((error as LaravelDevError).hubStatus).toBe(500);
        expect((error as Error).message).toMatch(/answered HTTP 500 to a publish on \[private-a\] \(hub exploded\)/);
    });

    it("reject with a clear message when the hub is unreachable", async () => {
        const url = `${hub.url}/.well-known/mercure`;
        await hub.close();
        const error = await makeApp({ hubUrl: url }).broadcast({ channels: ["news"], event: "e" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LaravelDevError);
        expect((error as LaravelDevError).code).toBe("hub_unreachable");
        expect((error as Error).message).toContain(`The Mercure hub at ${url} could not be reached to publish on [news]`);
        hub = await startFakeHub();
    });
});
