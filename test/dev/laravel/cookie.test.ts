import { afterEach, describe, expect, it } from "vitest";
import { BroadcastingApp, buildAuthCookie, cookieDomain, LaravelDevError, type BroadcastingAppOptions } from "../../../src/dev/laravel";
import { cookieJwt, decodeJwt, JWT_KEY, postAuth, serveApp, type Started } from "./helpers";

const NOW = Date.UTC(2026, 0, 1, 0, 0, 0, 250);

let server: Started | undefined;
afterEach(async () => {
    await server?.close();
    server = undefined;
});

async function authCookie(
    options: Partial<BroadcastingAppOptions>,
    host: string,
): Promise<{ status: number; cookie: string | undefined; body: string }> {
    const app = new BroadcastingApp({
        hubUrl: "http://127.0.0.1:3000/.well-known/mercure",
        jwtKey: JWT_KEY,
        now: () => NOW,
        ...options,
    });
    server = await serveApp(app);
    const response = await postAuth(server.url, ["news"], { Host: host });
    return { status: response.status, cookie: response.setCookies[0], body: response.body };
}

describe("cookie Domain algorithm", () => {
    it.each([
        ["the same host", "example.com", "example.com", null],
        ["the same host, differently cased", "Example.COM", "example.com", null],
        ["a hub on a subdomain of the app", "example.com", "hub.example.com", "example.com"],
        ["a hub on a deeper subdomain of the app", "example.com", "a.hub.example.com", "example.com"],
        ["sibling subdomains", "app.example.com", "hub.example.com", ".example.com"],
        ["a hub on the parent domain", "app.example.com", "example.com", ".example.com"],
        ["the longest common parent first", "a.b.example.com", "hub.b.example.com", ".b.example.com"],
        ["a shorter common parent", "a.b.example.com", "hub.example.com", ".example.com"],
        ["no host in the public URL", "example.com", "", null],
    ])("handles %s", (_label, app, hub, expected) => {
        expect(cookieDomain(app, hub)).toBe(expected);
    });

    it.each([
        ["different registrable domains", "app.example.com", "hub.other.com"],
        ["two domains under the same TLD only", "example.com", "other.com"],
        ["localhost against an IP address", "localhost", "127.0.0.1"],
        ["a hub that merely ends with the app host's text", "example.com", "badexample.com"],
    ])("fails with a broadcast exception for %s", (_label, app, hub) => {
        expect(() => cookieDomain(app, hub)).toThrow(LaravelDevError);
        expect(() => cookieDomain(app, hub)).toThrow(/different second-level domain/);
    });
});

describe("cookie attributes", () => {
    it("builds name, raw JWT, expires, Max-Age, path, secure, httponly and samesite in Symfony's order", () => {
        expect(
            buildAuthCookie({
                name: "mercure_access_token",
                value: "a.b.c",
                expiresIn: 300,
                now: NOW,
                publicUrl: "https://hub.example.com/.well-known/mercure",
                requestHost: "app.example.com",
            }),
        ).toBe(
            "mercure_access_token=a.b.c; expires=Thu, 01 Jan 2026 00:05:00 GMT; Max-Age=300; path=/.well-known/mercure; domain=.example.com; secure; httponly; samesite=strict",
        );
    });

    it("sets the cookie over HTTP with the exact attributes and no Secure for an http public URL", async () => {
        const { status, cookie } = await authCookie({}, "127.0.0.1:8000");
        expect(status).toBe(200);
        const jwt = cookieJwt(cookie as string);
        expect(cookie).toBe(
            `mercure_access_token=${jwt}; expires=Thu, 01 Jan 2026 00:05:00 GMT; Max-Age=300; path=/.well-known/mercure; httponly; samesite=strict`,
        );
        expect(jwt.split(".")).toHaveLength(3);
    });

    it("uses the configured name and lifetime, Secure for https, a subdomain Domain and / for an empty path", async () => {
        const { cookie } = await authCookie(
            { publicUrl: "https://hub.example.com", cookieName: "__Secure-mercure_access_token", expiresIn: 60 },
            "example.com",
        );
        expect(cookie).toMatch(
            /^__Secure-mercure_access_token=[\w-]+\.[\w-]+\.[\w-]+; expires=Thu, 01 Jan 2026 00:01:00 GMT; Max-Age=60; path=\/; domain=example\.com; secure; httponly; samesite=strict$/,
        );
    });

    it("answers 500 when the hub is on a different registrable domain", async () => {
        const { status, cookie, body } = await authCookie({ publicUrl: "https://hub.other.com/.well-known/mercure" }, "app.example.com");
        expect(status).toBe(500);
        expect(cookie).toBeUndefined();
        expect(JSON.parse(body).message).toMatch(/adjust public_url/);
    });

    it("answers 500 for a __ cookie name with an http public URL", async () => {
        const { status, cookie } = await authCookie({ cookieName: "__Secure-mercure_access_token" }, "127.0.0.1:8000");
        expect(status).toBe(500);
        expect(cookie).toBeUndefined();
    });

    it("marks the cookie Secure for a relative public URL even over plain HTTP (no scheme is not http), with no Domain", async () => {
        const { cookie } = await authCookie({ publicUrl: "/.well-known/mercure" }, "app.test:8000");
        expect(cookie).toMatch(/; Max-Age=300; path=\/\.well-known\/mercure; secure; httponly; samesite=strict$/);
        // aud is still the public URL made absolute from the request (PR #61629).
        expect(decodeJwt(cookieJwt(cookie as string)).claims["aud"]).toBe("http://app.test:8000/.well-known/mercure");
    });

    it("accepts a __Secure- cookie name with a relative public URL, as Laravel checks only an explicit http scheme", async () => {
        const { status, cookie } = await authCookie({ publicUrl: "/.well-known/mercure", cookieName: "__Secure-mercure_access_token" }, "app.test");
        expect(status).toBe(200);
        expect(cookie).toMatch(/^__Secure-mercure_access_token=.*; secure; httponly; samesite=strict$/);
    });

    it("takes the path verbatim from the public URL, as parse_url does", () => {
        const build = (publicUrl: string) =>
            buildAuthCookie({ name: "n", value: "v", expiresIn: 60, now: NOW, publicUrl, requestHost: "hub.example" });
        expect(build("https://hub.example/.well-known/mercure/")).toContain("; path=/.well-known/mercure/;");
        expect(build("https://hub.example")).toContain("; path=/;");
        expect(build("https://hub.example?x=1")).toContain("; path=/;");
        expect(build("HTTP://hub.example/hub")).not.toContain("secure");
        expect(build("//hub.example/hub")).toContain("; secure;");
    });

    it("resolves the public URL function at each request", async () => {
        let port = 1111;
        const app = new BroadcastingApp({ hubUrl: () => `http://127.0.0.1:${port}/.well-known/mercure`, jwtKey: JWT_KEY });
        server = await serveApp(app);
        const first = await postAuth(server.url, ["news"]);
        port = 2222;
        const second = await postAuth(server.url, ["news"]);
        expect(decodeJwt(cookieJwt(first.setCookies[0] as string)).claims["aud"]).toBe("http://127.0.0.1:1111/.well-known/mercure");
        expect(decodeJwt(cookieJwt(second.setCookies[0] as string)).claims["aud"]).toBe("http://127.0.0.1:2222/.well-known/mercure");
    });
});
