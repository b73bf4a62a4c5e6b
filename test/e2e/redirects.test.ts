import { EventSource } from "eventsource";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { requestAuthorization } from "../../src/auth/auth-client";
import { HubTokenSource, withHubToken } from "../../src/auth/hub-token";
import { MercureEcho } from "../../src/connector/mercure-echo";
import type { MercureError } from "../../src/errors";
import { fetchSnapshot } from "../../src/presence/snapshot";
import { waitFor } from "./support/wait";

// Issue 50 point 2, over real HTTP in Node.js: the auth request carries the page's CSRF token, every `auth.headers`
// value and a header function's result, and a request to the hub carries the hub token. fetch drops only
// Authorization (and, in Node.js, Cookie) when it follows a redirect to another origin, and a 307 sends the body again:
// a request that carries a credential the package adds must not follow a redirect at all. Server A is the app (its
// auth endpoint and hub redirect), server B another origin that records everything it receives.

/** One request a server received. */
interface Received {
    method: string;
    path: string;
    headers: IncomingMessage["headers"];
    body: string;
}

/** Start a server on 127.0.0.1 that records every request and answers it with `answer`. */
async function recording(answer: (path: string, respond: (status: number, headers?: Record<string, string>) => void) => void): Promise<{ url: string; port: number; received: Received[]; server: Server }> {
    const received: Received[] = [];
    const server = createServer((req, res) => {
        let body = "";
        req.on("data", (chunk: Buffer) => (body += chunk.toString()));
        req.on("end", () => {
            const path = req.url ?? "/";
            received.push({ method: req.method ?? "GET", path, headers: req.headers, body });
            answer(path, (status, headers = {}) => {
                res.writeHead(status, headers);
                res.end(status === 200 ? "{}" : "");
            });
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, port, received, server };
}

let other: Awaited<ReturnType<typeof recording>>;
let app: Awaited<ReturnType<typeof recording>>;
/** B's origin as a redirect names it: another host name and port than A's. */
let otherOrigin: string;

beforeAll(async () => {
    other = await recording((_path, respond) => respond(200, { "Content-Type": "application/json" }));
    otherOrigin = `http://localhost:${other.port}`;
    app = await recording((path, respond) => {
        const status = Number(/[?&]status=(\d+)/.exec(path)?.[1] ?? 307);
        if (path.startsWith("/broadcasting/auth-login")) return respond(302, { Location: "/login" });
        if (path.startsWith("/broadcasting/auth") || path.startsWith("/.well-known/mercure")) return respond(status, { Location: `${otherOrigin}/steal${path}` });
        respond(404);
    });
});
afterAll(async () => {
    for (const server of [app.server, other.server]) await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
    app.received.length = 0;
    other.received.length = 0;
});

/** The credential headers of the tests; none may reach B. */
const HEADERS = { "X-CSRF-TOKEN": "csrf-secret", "X-XSRF-TOKEN": "xsrf-secret", "X-Tenant": "tenant-secret", Authorization: "Bearer bearer-secret" };

describe("the auth request over real HTTP", () => {
    it.each([301, 302, 303, 307, 308])("does not follow a %i of the auth endpoint to another origin: that origin receives nothing, and the answer names the redirect", async (status) => {
        const result = await requestAuthorization({
            endpoint: `${app.url}/broadcasting/auth?status=${status}`,
            headers: HEADERS,
            channelNames: ["private-orders.1"],
            fetch,
            signal: new AbortController().signal,
            timeout: 5_000,
        });
        expect(result).toEqual({ kind: "rejected", status, detail: `a redirect to ${otherOrigin}/steal/broadcasting/auth?status=${status}, not followed` });
        expect(app.received.map((request) => [request.method, request.headers["x-tenant"]])).toEqual([["POST", "tenant-secret"]]);
        expect(other.received).toEqual([]);
    });

    it("reports a same-origin redirect (Laravel's to /login for a guest) as auth_rejected naming it, from a connector in Node.js; /login is never asked", async () => {
        let tenantCalls = 0;
        const echo = new MercureEcho({
            host: `${app.url}/.well-known/mercure`,
            authEndpoint: `${app.url}/broadcasting/auth-login`,
            eventSource: EventSource,
            fetch,
            csrfToken: "csrf-secret",
            bearerToken: async () => "bearer-secret",
            auth: { headers: { "X-Tenant": () => `tenant-secret-${++tenantCalls}` } },
        });
        const errors: MercureError[] = [];
        echo.private("orders.1").error((error: MercureError) => errors.push(error));
        try {
            await waitFor(() => errors.length > 0, "the auth error");
        } finally {
            echo.disconnect();
        }
        expect(errors[0]).toMatchObject({ code: "auth_rejected", status: 302, channel: "private-orders.1" });
        expect(errors[0]!.message).toMatch(/\(HTTP 302: a redirect to \/login, not followed; is a user logged in, or does middleware redirect\?\)/);
        // The request carried every credential, to the auth endpoint; nothing followed it, there or elsewhere.
        expect(app.received.map((request) => [request.path, request.headers["x-csrf-token"], request.headers["x-tenant"], request.headers["authorization"]])).toEqual([
            ["/broadcasting/auth-login", "csrf-secret", "tenant-secret-1", "Bearer bearer-secret"],
        ]);
        expect(other.received).toEqual([]);
    });

    it("sends nothing to the other origin from a connector whose auth endpoint redirects there", async () => {
        const echo = new MercureEcho({ host: `${app.url}/.well-known/mercure`, authEndpoint: `${app.url}/broadcasting/auth`, eventSource: EventSource, fetch, auth: { headers: { "X-Tenant": "tenant-secret" } } });
        const errors: MercureError[] = [];
        echo.private("orders.1").error((error: MercureError) => errors.push(error));
        try {
            await waitFor(() => errors.length > 0, "the auth error");
        } finally {
            echo.disconnect();
        }
        expect(errors.map((error) => [error.code, error.status])).toEqual([["auth_rejected", 307]]);
        expect(other.received).toEqual([]);
    });
});

describe("requests to the hub with the hub token over real HTTP", () => {
    it("do not follow a redirect of the hub: the token stays with the hub URL (a snapshot here), whatever the fetch does with Authorization", async () => {
        const hub = new URL(`${app.url}/.well-known/mercure`);
        const token = new HubTokenSource("a.b.c");
        // A fetch option that keeps every header on a redirect, as some wrappers do: nothing may depend on fetch dropping it.
        const keepsHeaders: typeof fetch = async (url, init) => {
            const first = await fetch(url, { ...init, redirect: "manual" });
            const location = first.headers.get("location");
            return init?.redirect === "manual" || location === null ? first : fetch(new URL(location, String(url)), init);
        };
        const snapshot = await fetchSnapshot(`${hub.href}/subscriptions/x`, withHubToken(keepsHeaders, hub, token), new AbortController().signal);
        expect(snapshot).toEqual({ kind: "failed", reason: "a redirect, not followed", status: 307 });
        expect(app.received.map((request) => request.headers["authorization"])).toEqual(["Bearer a.b.c"]);
        expect(other.received).toEqual([]);
        // The same fetch without the hub token's wrapper does follow: the test's server really redirects.
        await keepsHeaders(`${hub.href}/subscriptions/x`, { headers: { Authorization: "Bearer a.b.c" } });
        expect(other.received.map((request) => request.headers["authorization"])).toEqual(["Bearer a.b.c"]);
    });
});
