import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BroadcastingApp } from "../../../src/dev/laravel";
import { cookieJwt, decodeJwt, JWT_KEY, postAuth, send, serveApp, startFakeHub, type FakeHub, type Started } from "./helpers";

let hub: FakeHub;
let server: Started;
let app: BroadcastingApp;
beforeEach(async () => {
    hub = await startFakeHub();
    app = new BroadcastingApp({
        hubUrl: () => `${hub.url}/.well-known/mercure`,
        jwtKey: JWT_KEY,
        users: [
            { id: 42, name: "Ann" },
            { id: "bob", name: "Bob" },
        ],
    }).channel("room.{id}", () => true);
    server = await serveApp(app);
});
afterEach(async () => {
    await server.close();
    await hub.close();
});

const json = (body: unknown) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

describe("dev login and logout", () => {
    it("logs a known user in with a session cookie, by POST only (a GET from a link or an image on any page cannot)", async () => {
        expect((await send(`${server.url}/dev/login?user=42`)).status).toBe(405);
        const get = await send(`${server.url}/dev/login?user=42`, { method: "POST" });
        expect(get.status).toBe(200);
        expect(get.setCookies).toEqual(["dev_user=42; Path=/; HttpOnly; SameSite=Lax"]);
        expect(JSON.parse(get.body)).toEqual({ user: { id: 42, name: "Ann" } });
        const post = await send(`${server.url}/dev/login?user=bob`, { method: "POST" });
        expect(post.setCookies).toEqual(["dev_user=bob; Path=/; HttpOnly; SameSite=Lax"]);
    });

    it("answers 404 for an unknown or missing user", async () => {
        expect((await send(`${server.url}/dev/login?user=9`, { method: "POST" })).status).toBe(404);
        const missing = await send(`${server.url}/dev/login`, { method: "POST" });
        expect(missing.status).toBe(404);
        expect(missing.setCookies).toEqual([]);
    });

    it("makes the auth endpoint see the logged-in user, and logout clears the cookie", async () => {
        const login = await send(`${server.url}/dev/login?user=42`, { method: "POST" });
        const cookie = (login.setCookies[0] as string).split(";")[0] as string;
        const granted = await postAuth(server.url, ["private-room.1"], { Cookie: cookie });
        expect(JSON.parse(granted.body).channel_names).toEqual([{ name: "private-room.1" }]);

        const logout = await send(`${server.url}/dev/logout`, { method: "POST" });
        expect(logout.status).toBe(204);
        expect(logout.setCookies).toEqual(["dev_user=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]);
        const denied = await postAuth(server.url, ["private-room.1"]);
        expect(JSON.parse(denied.body).channel_names).toEqual([{ name: "private-room.1", denied: true }]);
    });
});

describe("dev broadcast route", () => {
    it("publishes a JSON broadcast and answers the hub's ids", async () => {
        const response = await send(
            `${server.url}/dev/broadcast`,
            json({ channels: ["news", "private-room.1"], event: ".order.shipped", payload: { id: 1 } }),
        );
        expect(response.status).toBe(200);
        expect(JSON.parse(response.body)).toEqual({ ids: ["urn:uuid:fake-1", "urn:uuid:fake-2"] });
        expect(hub.requests.map((r) => r.form.get("data"))).toEqual([
            '{"channels":["news"],"event":".order.shipped","payload":{"id":1}}',
            '{"channels":["private-room.1"],"event":".order.shipped","payload":{"id":1}}',
        ]);
    });

    it("takes the socket from the X-Socket-ID header for toOthers, as Laravel's toOthers() does, whatever its case", async () => {
        const post = (body: unknown, headers: Record<string, string>) =>
            send(`${server.url}/dev/broadcast`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) });
        expect((await post({ channels: ["news"], event: "e", toOthers: true }, { "X-Socket-Id": "sock.1" })).status).toBe(200);
        expect((await post({ channels: ["private-room.1"], event: "e", toOthers: true }, { "x-socket-id": "sock.2" })).status).toBe(200);
        // Without toOthers() the header is ignored; without the header there is no socket to exclude.
        expect((await post({ channels: ["news"], event: "e" }, { "X-SOCKET-ID": "sock.3" })).status).toBe(200);
        expect((await post({ channels: ["news"], event: "e", toOthers: true }, {})).status).toBe(200);
        expect(hub.requests.map((r) => JSON.parse(r.form.get("data") as string).socket)).toEqual(["sock.1", "sock.2", undefined, undefined]);
    });

    it.each([
        ["a body that is not JSON", "{nope"],
        ["no event", JSON.stringify({ channels: ["news"] })],
        ["channels that are not a list of names", JSON.stringify({ channels: "news", event: "e" })],
        ["a socket in the body (Laravel reads the X-Socket-ID header)", JSON.stringify({ channels: ["news"], event: "e", socket: "s" })],
        ["a non-boolean toOthers", JSON.stringify({ channels: ["news"], event: "e", toOthers: "yes" })],
    ])("answers 422 for %s", async (_label, body) => {
        const response = await send(`${server.url}/dev/broadcast`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
        expect(response.status).toBe(422);
        expect(JSON.parse(response.body)).toHaveProperty("message");
        expect(hub.requests).toEqual([]);
    });

    it.each([["text/plain", "text/plain"], ["a form", "application/x-www-form-urlencoded"], ["no type", undefined]])(
        "answers 415 and publishes nothing for a body sent as %s (a simple request any page can send cross-site)",
        async (_label, type) => {
            const body = JSON.stringify({ channels: ["news"], event: "e" });
            const response = await send(`${server.url}/dev/broadcast`, { method: "POST", headers: type === undefined ? {} : { "Content-Type": type }, body });
            expect(response.status).toBe(415);
            expect(hub.requests).toEqual([]);
        },
    );

    it("answers 502 with the hub error when the hub fails", async () => {
        hub.mode = "fail";
        const response = await send(`${server.url}/dev/broadcast`, json({ channels: ["news"], event: "e" }));
        expect(response.status).toBe(502);
        expect(JSON.parse(response.body).message).toMatch(/answered HTTP 500/);
    });
});

describe("routing", () => {
    it("leaves other paths to the host server without writing anything", async () => {
        const response = await send(`${server.url}/broadcasting/authx`);
        expect(response.status).toBe(404);
        expect(response.body).toBe("fallthrough");
        expect((await send(`${server.url}/__proto__`)).body).toBe("fallthrough");
    });

    it("answers 405 with Allow for a known path and a wrong method", async () => {
        const auth = await send(`${server.url}/broadcasting/auth`, { method: "PUT" });
        expect(auth.status).toBe(405);
        expect(auth.headers.allow).toBe("GET, POST");
        expect((await send(`${server.url}/dev/logout`)).status).toBe(405);
        expect((await send(`${server.url}/dev/broadcast`)).status).toBe(405);
    });
});

describe("dev hub token", () => {
    it("answers the subscriber JWT the auth cookie would carry for the logged-in user's authorized channels, with expires_in", async () => {
        app.channel("secret.{id}", () => false);
        const login = await send(`${server.url}/dev/login?user=42`, { method: "POST" });
        const session = login.setCookies[0]!.split(";")[0]!;
        const answer = await send(`${server.url}/dev/hub-token?channels=private-room.1,private-secret.1`, { headers: { cookie: session } });
        expect(answer.status).toBe(200);
        expect(answer.setCookies).toEqual([]);
        const { token, expires_in } = JSON.parse(answer.body) as { token: string; expires_in: number };
        expect(expires_in).toBe(300);
        const claims = decodeJwt(token).claims;
        expect(claims["sub"]).toBe("42");
        // The same grants as the cookie of an auth request for the granted channel alone.
        const auth = await postAuth(server.url, ["private-room.1"], { cookie: session });
        expect(claims["authorization_details"]).toEqual(decodeJwt(cookieJwt(auth.setCookies[0]!)).claims["authorization_details"]);
    });

    it("answers 403 without channels, and only GET", async () => {
        expect((await send(`${server.url}/dev/hub-token`)).status).toBe(403);
        expect((await send(`${server.url}/dev/hub-token?channels=x`, { method: "POST" })).status).toBe(405);
    });
});
