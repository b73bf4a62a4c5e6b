import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { waitUntil } from "./support/wait";

// laravel-echo-mercure/http in Chromium against the dev stack: the X-Socket-ID header on a fetch wrapper, an axios
// instance and Inertia's router, each carrying this connection's socket id, so that the stand-in's toOthers()
// (Laravel's) leaves the sender out. A plain fetch without the helper is the control: its toOthers() comes back.

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));
const PAGE = "/http.html";
const DEADLINE = { timeout: 20_000 };

/** The bare imports of the page, served by the test from node_modules. */
const ESM: Record<string, string> = {
    "/esm/laravel-echo.js": "laravel-echo/dist/echo.js",
    "/esm/axios.js": "axios/dist/esm/axios.js",
};

/**
 * The page: MercureEcho on the ESM build, the `feed` channel recorded into `window.received`, and one way per
 * HTTP client to POST `/dev/broadcast` (JSON `{channels, event, payload, toOthers}`), each resolving with the status.
 * Inertia is modelled as its router sends a visit: `router.on("before", …)` is a listener of the document's
 * `inertia:before` event (a `false` result cancels); the router fires it (cancelable, `detail: { visit }`) and then
 * builds the request from `visit.headers`.
 */
function httpPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>toOthers</title>
<script type="importmap">{"imports":{"laravel-echo":"/esm/laravel-echo.js","axios":"/esm/axios.js"}}</script>
<script type="module">
import { MercureEcho } from "/dist/index.js";
import { inertiaSocketId, socketIdHeaders, socketIdInterceptor, withSocketId } from "/dist/http/index.js";
import axios from "axios";

const echo = new MercureEcho({ host: "/.well-known/mercure" });
window.echo = echo;
window.received = [];
echo.channel("feed").listen(".posted", (payload) => window.received.push(payload));

const json = { "Content-Type": "application/json" };
const api = axios.create();
api.interceptors.request.use(socketIdInterceptor(echo));

const router = {
    on(type, callback) {
        const listener = (event) => {
            if (event.cancelable && !event.defaultPrevented && callback(event) === false) event.preventDefault();
        };
        document.addEventListener("inertia:" + type, listener);
        return () => document.removeEventListener("inertia:" + type, listener);
    },
    post(href, data) {
        const visit = { url: new URL(href, location.href), method: "post", data, headers: {} };
        if (!document.dispatchEvent(new CustomEvent("inertia:before", { cancelable: true, detail: { visit } }))) return Promise.resolve(0);
        const headers = { ...visit.headers, ...json, Accept: "text/html, application/xhtml+xml", "X-Requested-With": "XMLHttpRequest", "X-Inertia": "true" };
        return fetch(visit.url, { method: "POST", headers, body: JSON.stringify(visit.data) }).then((r) => r.status);
    },
};
router.on("before", inertiaSocketId(echo));

const http = withSocketId(echo);
window.send = {
    plain: (body) => fetch("/dev/broadcast", { method: "POST", headers: json, body: JSON.stringify(body) }).then((r) => r.status),
    headers: (body) => fetch("/dev/broadcast", { method: "POST", headers: { ...json, ...socketIdHeaders(echo) }, body: JSON.stringify(body) }).then((r) => r.status),
    fetch: (body) => http("/dev/broadcast", { method: "POST", headers: json, body: JSON.stringify(body) }).then((r) => r.status),
    axios: (body) => api.post("/dev/broadcast", body).then((r) => r.status),
    inertia: (body) => router.post("/dev/broadcast", body),
};
</script>
</head>
<body><p>toOthers</p></body>
</html>
`;
}

/** What the page's window holds, for page.evaluate. */
interface HttpWindow {
    echo: { socketId(): string; connectionStatus(): string; connector: { channels: Record<string, { isSubscribed: boolean }> } };
    received: Array<{ n: number; via: string }>;
    send: Record<Way, (body: object) => Promise<number>>;
}

type Way = "plain" | "headers" | "fetch" | "axios" | "inertia";

describeInChromium("X-Socket-ID on fetch, axios and Inertia requests (laravel-echo-mercure/http)", { server: { pages: { [PAGE]: httpPage() }, distDir: DIST_DIR } }, ({ dev, newPage }) => {
    /** The page, its bare imports served from node_modules, `feed` subscribed. */
    async function visit(): Promise<Page> {
        const page = await newPage();
        await page.context().route("**/esm/**", (route) => {
            const file = ESM[new URL(route.request().url()).pathname];
            return file === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ path: NODE_MODULES + file, contentType: "text/javascript; charset=utf-8" });
        });
        await page.goto(dev().url + PAGE);
        await waitUntil("feed subscribed", () => page.evaluate(() => (window as unknown as HttpWindow).echo?.connector.channels["feed"]?.isSubscribed === true), DEADLINE);
        return page;
    }

    const received = (page: Page) => page.evaluate(() => (window as unknown as HttpWindow).received);

    it("carries this connection's socket id, and the sender does not get its own toOthers() broadcast back, for each helper", async () => {
        const sender = await visit();
        const other = await visit();
        const headers: string[] = [];
        sender.on("request", (request) => {
            if (request.url().endsWith("/dev/broadcast")) headers.push(request.headers()["x-socket-id"] ?? "(none)");
        });
        const socketId = await sender.evaluate(() => (window as unknown as HttpWindow).echo.socketId());
        expect(socketId).not.toBe("");
        expect(socketId).not.toBe(await other.evaluate(() => (window as unknown as HttpWindow).echo.socketId()));

        const ways: Way[] = ["plain", "headers", "fetch", "axios", "inertia"];
        for (const [n, via] of ways.entries()) {
            const status = await sender.evaluate(([way, body]) => (window as unknown as HttpWindow).send[way as Way](body as object), [
                via,
                { channels: ["feed"], event: "posted", payload: { n, via }, toOthers: true },
            ] as const);
            expect(status).toBe(200);
        }
        // A sentinel for everyone: the hub delivers in order, so each toOthers() broadcast had its turn before it.
        await dev().broadcast({ channels: ["feed"], event: "posted", payload: { n: 99, via: "sentinel" } });
        await waitUntil("the sentinel at the sender", async () => (await received(sender)).some((p) => p.n === 99), DEADLINE);
        await waitUntil("the sentinel at the other page", async () => (await received(other)).some((p) => p.n === 99), DEADLINE);

        expect(headers).toEqual(["(none)", socketId, socketId, socketId, socketId]);
        // Only the control (a plain fetch, no header) came back; every helper's broadcast reached the other page.
        expect((await received(sender)).map((p) => p.via)).toEqual(["plain", "sentinel"]);
        expect((await received(other)).map((p) => p.via)).toEqual([...ways, "sentinel"]);
    });
});
