import { describe, expect, it } from "vitest";
import { cookieJarFetch } from "../../src/dev/cookie-jar";

/** A fake server: records the Cookie header of each request and answers with the given Set-Cookie lines. */
function fakeServer(answers: Record<string, string[]>) {
    const sent: Array<{ url: string; cookie: string | null; socket: string | null }> = [];
    const base = async (input: string | URL, init?: RequestInit): Promise<Response> => {
        const url = String(input);
        const headers = new Headers(init?.headers);
        sent.push({ url, cookie: headers.get("cookie"), socket: headers.get("x-socket-id") });
        const answer = new Headers();
        for (const line of answers[new URL(url).pathname] ?? []) answer.append("Set-Cookie", line);
        return new Response("", { headers: answer });
    };
    return { base, sent };
}

describe("cookieJarFetch", () => {
    it("sends back the cookies a site set, by origin and path, and keeps the request's own headers", async () => {
        const server = fakeServer({
            "/dev/login": ["dev_user=1; Path=/; HttpOnly; SameSite=Lax"],
            "/broadcasting/auth": ["mercure_access_token=jwt; Path=/.well-known/mercure; Max-Age=300; HttpOnly"],
        });
        const fetch = cookieJarFetch(server.base);
        await fetch("http://127.0.0.1:1/dev/login?user=1", { method: "POST" });
        await fetch(new URL("http://127.0.0.1:1/broadcasting/auth"), { method: "POST", headers: { "X-Socket-Id": "s" } });
        await fetch("http://127.0.0.1:1/.well-known/mercure?match=x");
        await fetch("http://127.0.0.1:1/.well-known/mercurex");
        await fetch("http://127.0.0.1:2/.well-known/mercure");
        expect(server.sent.map((request) => request.cookie)).toEqual([null, "dev_user=1", "dev_user=1; mercure_access_token=jwt", "dev_user=1", null]);
        expect(server.sent[1]?.socket).toBe("s");
    });

    it("forgets a cookie the site expires", async () => {
        const server = fakeServer({ "/login": ["dev_user=1; Path=/"], "/logout": ["dev_user=; Path=/; Max-Age=0"] });
        const fetch = cookieJarFetch(server.base);
        await fetch("http://127.0.0.1:1/login");
        await fetch("http://127.0.0.1:1/logout");
        await fetch("http://127.0.0.1:1/");
        expect(server.sent.map((request) => request.cookie)).toEqual([null, "dev_user=1", null]);
    });
});
