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
        // The page the browser reached as localhost sends its requests there too: Host and Origin agree.
        expect((await broadcast({ Host: `localhost:${server.port}`, Origin: `http://localhost:${server.port}` })).status).toBe(200);
    });

    // Issue 50 point 3: another local server's page (a Vite dev server, another app on 127.0.0.1) is same-site with
    // the stack, but another origin: it must not log the developer's browser in as another user or call the auth endpoint.
    it("refuses a state change from another local origin: another port, another loopback name, or same-site without an Origin", async () => {
        const otherOrigins = [`http://127.0.0.1:${server.port + 1}`, "http://localhost:5173", `http://localhost:${server.port}`, `http://app.localhost:${server.port}`, "http://127.0.0.1:8888", `http://app.test:${server.port}`];
        for (const origin of otherOrigins) {
            const headers = { Origin: origin, "Sec-Fetch-Site": "same-site" };
            const refused = await login(headers);
            expect(refused.status, origin).toBe(403);
            expect(refused.body).toMatch(/Refused a POST from another origin/);
            expect(refused.setCookies).toEqual([]);
            expect((await send(`${server.url}/broadcasting/auth`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: '{"channel_names":["news"]}' })).status, origin).toBe(403);
            expect((await broadcast({ Origin: origin })).status, origin).toBe(403);
        }
        expect((await login({ "Sec-Fetch-Site": "same-site" })).status).toBe(403);
    });

    it("takes a state change from the origins of allowedOrigins (a Vite dev server proxying to it), and refuses an option that is no origin", async () => {
        const vite = await startDevServer({ app: { users: [{ id: 1, name: "Ann" }] }, allowedOrigins: ["http://localhost:5173/"] });
        try {
            const from = (origin: string) => send(`${vite.url}/dev/login?user=1`, { method: "POST", headers: { Origin: origin, "Sec-Fetch-Site": "same-site" } });
            expect((await from("http://localhost:5173")).status).toBe(200);
            expect((await from("http://localhost:5174")).status).toBe(403);
            expect((await from("https://localhost:5173")).status).toBe(403);
        } finally {
            await vite.close();
        }
        for (const value of ["localhost:5173", "http://localhost:5173/app", "*", "file:///x"]) {
            await expect(startDevServer({ allowedOrigins: [value] }), value).rejects.toThrow(/allowedOrigins: ".*" is not an http\(s\) origin/);
        }
    });
});
