import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEV_HUB_ONLY } from "../support/hubs";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";

// Issue 50 point 2 in Chromium: the auth request carries the CSRF token and every `auth.headers` value; fetch drops
// only Authorization when it follows a redirect to another origin. Here the auth endpoint is server A (another origin
// than the page, with CORS as Laravel's HandleCors answers), which redirects either to server B, a third origin that
// would accept anything (its CORS lets every origin in, "null" included, as an attacker's would), or to its own
// /login, as Laravel does for a guest. Nothing may reach B or /login, and the channel says what happened.

/** One request a server received. */
interface Received {
    method: string;
    path: string;
    headers: IncomingMessage["headers"];
}

/** Let the request's origin read the answer with credentials, and allow the headers a preflight asks for. */
function cors(req: IncomingMessage, res: ServerResponse): void {
    res.setHeader("Access-Control-Allow-Origin", req.headers.origin ?? "*");
    res.setHeader("Access-Control-Allow-Credentials", "true");
    res.setHeader("Access-Control-Allow-Methods", "POST");
    res.setHeader("Access-Control-Allow-Headers", req.headers["access-control-request-headers"] ?? "");
}

/** A server on 127.0.0.1 recording every request, answering preflights with {@link cors} and others with `answer`. */
async function recording(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ port: number; received: Received[]; server: Server }> {
    const received: Received[] = [];
    const server = createServer((req, res) => {
        received.push({ method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers });
        cors(req, res);
        if (req.method === "OPTIONS") return void res.writeHead(204).end();
        req.resume().on("end", () => answer(req, res));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { port: (server.address() as AddressInfo).port, received, server };
}

let app: Awaited<ReturnType<typeof recording>>;
let other: Awaited<ReturnType<typeof recording>>;

beforeAll(async () => {
    other = await recording((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end('{"channel_names":[]}'));
    app = await recording((req, res) => {
        const location = req.url === "/auth-login" ? "/login" : `http://localhost:${other.port}/steal`;
        res.writeHead(req.url === "/auth-login" ? 302 : 307, { Location: location }).end();
    });
});
afterAll(async () => {
    for (const server of [app.server, other.server]) await new Promise((resolve) => server.close(resolve));
});

describeInChromium(
    "the auth request's redirects in Chromium",
    { hubs: DEV_HUB_ONLY, server: { app: { users: [{ id: 1, name: "Ann" }] }, pages: { [HARNESS_PAGE]: harnessPage() }, distDir: DIST_DIR } },
    ({ open }) => {
        it.each([
            ["a 307 to another origin", "/auth-away", () => other.received],
            ["a 302 to the endpoint's own /login", "/auth-login", () => app.received.filter((request) => request.path === "/login")],
        ] as const)("does not follow %s: nothing reaches its target, and the channel reports auth_rejected saying so", async (_what, path, target) => {
            app.received.length = 0;
            other.received.length = 0;
            const page = await open(1);
            await page.create({ authEndpoint: `http://127.0.0.1:${app.port}${path}`, csrfToken: "csrf-secret", auth: { headers: { "X-Tenant": "tenant-secret" } } });
            await page.join({ kind: "private", name: "orders.1" });
            const failed = await page.waitFor("the auth error", (snapshot) => snapshot.errors.length > 0);
            expect(target().map((request) => [request.method, request.headers["x-csrf-token"] ?? null, request.headers["x-tenant"] ?? null])).toEqual([]);
            expect(failed.errors[0]).toMatchObject({ channel: "private-orders.1", code: "auth_rejected" });
            expect(failed.errors[0]!.message).toMatch(/request was denied \(a redirect, not followed; is a user logged in, or does middleware redirect\?\) after joining \[private-orders\.1\]/);
            // The auth endpoint got the credentials (after its preflight); the redirect's target got nothing at all.
            expect(app.received.filter((request) => request.method === "POST").map((request) => [request.path, request.headers["x-csrf-token"], request.headers["x-tenant"]])).toEqual([
                [path, "csrf-secret", "tenant-secret"],
            ]);
        });
    },
);
