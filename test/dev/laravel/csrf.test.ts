import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BroadcastingApp } from "../../../src/dev/laravel";
import { unseal } from "../../../src/dev/laravel/csrf";
import { JWT_KEY, send, serveApp, startFakeHub, type FakeHub, type Started } from "./helpers";

// The dev Laravel stand-in's CSRF check (the `csrf` option, issue 33): Laravel's VerifyCsrfToken on the auth request.

let hub: FakeHub;
let server: Started;
beforeEach(async () => {
    hub = await startFakeHub();
    const app = new BroadcastingApp({ hubUrl: () => `${hub.url}/.well-known/mercure`, jwtKey: JWT_KEY, users: [{ id: 1, name: "Ann" }], csrf: true });
    server = await serveApp(app.channel("orders.{id}", () => true));
});
afterEach(async () => {
    await server.close();
    await hub.close();
});

/** The `Cookie` header a browser would send after these `Set-Cookie` values (name=value pairs, later ones winning). */
function jar(...setCookies: string[][]): string {
    const cookies = new Map<string, string>();
    for (const value of setCookies.flat()) {
        const [pair] = value.split(";");
        const eq = pair!.indexOf("=");
        cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return [...cookies].map(([name, value]) => `${name}=${value}`).join("; ");
}

/** POST the auth request with `headers`. */
function auth(headers: Record<string, string>) {
    return send(`${server.url}/broadcasting/auth`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ channel_names: ["private-orders.1"] }) });
}

describe("the csrf option", () => {
    it("refuses an auth POST without the session's token with 419, and accepts X-CSRF-TOKEN or the URL-decoded XSRF-TOKEN cookie as X-XSRF-TOKEN", async () => {
        const login = await send(`${server.url}/dev/login?user=1`, { method: "POST" });
        const cookie = jar(login.setCookies);
        const xsrf = decodeURIComponent(/XSRF-TOKEN=([^;]*)/.exec(cookie)![1]!);
        const csrf = await send(`${server.url}/dev/csrf`, { headers: { Cookie: cookie } });
        const token = (JSON.parse(csrf.body) as { token: string }).token;
        // The cookie holds the token sealed with a random IV, as Laravel encrypts it: a new value on every response.
        expect(unseal(xsrf)).toBe(token);
        const again = decodeURIComponent(/XSRF-TOKEN=([^;]*)/.exec(jar(csrf.setCookies))![1]!);
        expect(again).not.toBe(xsrf);
        expect(unseal(again)).toBe(token);
        expect((await auth({ Cookie: cookie, "X-CSRF-TOKEN": xsrf })).status).toBe(419);
        const refused = await auth({ Cookie: cookie });
        expect([refused.status, JSON.parse(refused.body)]).toEqual([419, { message: "CSRF token mismatch." }]);
        expect((await auth({ Cookie: cookie, "X-CSRF-TOKEN": "wrong" })).status).toBe(419);
        expect((await auth({ Cookie: cookie, "X-CSRF-TOKEN": token })).status).toBe(200);
        expect((await auth({ Cookie: cookie, "X-XSRF-TOKEN": xsrf })).status).toBe(200);
    });

    it("regenerates the token on a login and on POST /dev/csrf/regenerate, renewing the cookie and refusing the old token", async () => {
        const login = await send(`${server.url}/dev/login?user=1`, { method: "POST" });
        const cookie = jar(login.setCookies);
        const old = unseal(decodeURIComponent(/XSRF-TOKEN=([^;]*)/.exec(cookie)![1]!))!;
        const regenerated = await send(`${server.url}/dev/csrf/regenerate`, { method: "POST", headers: { Cookie: cookie } });
        const renewed = jar(login.setCookies, regenerated.setCookies);
        const fresh = unseal(decodeURIComponent(/XSRF-TOKEN=([^;]*)/.exec(renewed)![1]!))!;
        expect(fresh).not.toBe(old);
        expect((await auth({ Cookie: renewed, "X-CSRF-TOKEN": old })).status).toBe(419);
        expect((await auth({ Cookie: renewed, "X-CSRF-TOKEN": fresh })).status).toBe(200);
        const again = await send(`${server.url}/dev/login?user=1`, { method: "POST", headers: { Cookie: renewed } });
        expect((await auth({ Cookie: jar(login.setCookies, regenerated.setCookies, again.setCookies), "X-CSRF-TOKEN": fresh })).status).toBe(419);
    });
});
