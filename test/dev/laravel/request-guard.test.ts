import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../src/dev/server";
import { send } from "./helpers";

// Issue 28: the dev server runs on the developer's machine, where any page the developer visits can make the
// browser send it requests: a rebinding DNS name, a cross-site form, an image URL.

let server: DevServer;
beforeAll(async () => {
    server = await startDevServer({ app: { users: [{ id: 1, name: "Ann" }] }, allowedHosts: ["app.test"], pages: { "/": "<!doctype html>" } });
});
afterAll(() => server.close());

const login = (headers: Record<string, string>) => send(`${server.url}/dev/login?user=1`, { method: "POST", headers });
const broadcast = (headers: Record<string, string>) =>
    send(`${server.url}/dev/broadcast`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ channels: ["news"], event: "e" }) });

describe("the dev server's request checks", () => {
    it("answers a loopback Host, or an allowed one, with or without port", async () => {
        for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, "LOCALHOST", `app.localhost:${server.port}`, `[::1]:${server.port}`, `127.1.2.3:${server.port}`, `app.test:${server.port}`]) {
            expect((await send(`${server.url}/`, { headers: { Host: host } })).status, host).toBe(200);
        }
    });

    it("refuses any other Host (DNS rebinding), on pages, the hub and the app's routes alike", async () => {
        for (const host of [`evil.test:${server.port}`, "127.0.0.1.evil.test", "localhost.evil.test", "10.0.0.1"]) {
            for (const path of ["/", "/.well-known/mercure?topic=x", "/dist/index.js"]) {
                const response = await send(`${server.url}${path}`, { headers: { Host: host } });
                expect(response.status, `${host} ${path}`).toBe(403);
                expect(response.body).toMatch(/answers only to localhost/);
            }
            expect((await login({ Host: host })).setCookies).toEqual([]);
        }
    });

    it("refuses a state change from a page of another site (CSRF), and takes one from its own pages", async () => {
        const crossSite: Array<Record<string, string>> = [{ Origin: "https://evil.test" }, { Origin: "null" }, { Origin: server.url, "Sec-Fetch-Site": "cross-site" }];
        for (const headers of crossSite) {
            const refused = await login(headers);
            expect(refused.status, JSON.stringify(headers)).toBe(403);
            expect(refused.setCookies).toEqual([]);
            expect((await broadcast(headers)).status).toBe(403);
            expect((await send(`${server.url}/dev/logout`, { method: "POST", headers })).status).toBe(403);
            expect((await send(`${server.url}/broadcasting/auth`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: '{"channel_names":["news"]}' })).status).toBe(403);
        }
        expect((await login({ Origin: server.url, "Sec-Fetch-Site": "same-origin" })).status).toBe(200);
        expect((await login({})).status).toBe(200); // Node's fetch and curl send no Origin.
        expect((await broadcast({ Origin: `http://localhost:${server.port}` })).status).toBe(200);
    });
});
