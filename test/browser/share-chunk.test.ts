import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { sleep, waitUntil } from "./support/wait";

// The tab-sharing client as lazy chunks of the ESM build (issue 32), in Chromium against the dev stack on each hub: a
// page that shares downloads the share client, the tabs' protocol and the hub engine, a page that does not share
// downloads none of them. A page that leads its tabs (issue 31: it won the Web Lock at Echo's creation) authorizes and
// connects without waiting for them, and asks for them once its stream has opened (the unit tests in
// test/unit/share/direct-lead.test.ts hold when, with fake timers); on a page that follows another, a failed download of the
// share client reaches the channels as load_failed, then the retry with backoff downloads it again.

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));

/** The ESM page: `dist/index.js` as a module, `laravel-echo` through an import map. */
const ESM_PAGE = "/share-esm.html";

/**
 * A page of an app that bundles nothing: the ESM build from `/dist/`, `laravel-echo` mapped to `/esm/…` (served by the
 * test from node_modules). It creates Echo and joins `share.news` in the same task (`?share=0`: with
 * `shareAcrossTabs: false`), recording events and errors into `window.received`.
 */
function esmPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ESM build, tab sharing</title>
<script type="importmap">{"imports":{"laravel-echo":"/esm/laravel-echo/echo.js"}}</script>
<script type="module">
import { MercureEcho } from "/dist/index.js";
window.received = [];
const share = new URLSearchParams(location.search).get("share") !== "0";
const echo = new MercureEcho({ host: "/.well-known/mercure", shareAcrossTabs: share });
window.echo = echo;
echo.channel("share.news")
    .listen(".ping", (payload) => window.received.push(["share.news", payload]))
    .error((error) => window.received.push(["error", error.code]));
</script>
</head>
<body><p>ESM build, tab sharing</p></body>
</html>
`;
}

/** The chunks of the platform layer: tab sharing's (the share client, its protocol, the hub engine) and the platform set-up (the EventSource adapter). */
const SHARING = ["leadership", "platform-setup", "protocol", "share-platform"];

const STACK = { pages: { [ESM_PAGE]: esmPage() }, distDir: DIST_DIR };

describeInChromium("the tab-sharing chunks of the ESM build in Chromium", { server: STACK }, ({ dev, newPage }) => {
    /** Open the ESM page on `page` (whose routes the test may have set) with `query`; every request path is recorded. */
    async function openEsm(page: Page, query: string): Promise<string[]> {
        await page.context().route("**/esm/laravel-echo/**", (route) => {
            const path = new URL(route.request().url()).pathname;
            return route.fulfill({ path: NODE_MODULES + "laravel-echo/dist/" + path.slice("/esm/laravel-echo/".length), contentType: "text/javascript; charset=utf-8" });
        });
        const requests: string[] = [];
        page.on("request", (request) => requests.push(new URL(request.url()).pathname));
        await page.goto(dev().url + ESM_PAGE + query);
        return requests;
    }

    const status = (page: Page) => page.evaluate(() => (window as unknown as { echo?: { connectionStatus(): string } }).echo?.connectionStatus());
    const received = (page: Page) => page.evaluate(() => (window as unknown as { received: unknown[] }).received);
    /** The lazy chunks the page requested, by name (without their hashes), sorted. */
    const chunks = (requests: string[]) =>
        requests
            .filter((path) => path.startsWith("/dist/chunks/") && !path.startsWith("/dist/chunks/core-"))
            .map((path) => path.slice("/dist/chunks/".length).replace(/-[\w-]{8}\.js$/, ""))
            .sort();

    it("downloads the share client, the tabs' protocol and the hub engine on a page that shares, and receives", async () => {
        const page = await newPage();
        const requests = await openEsm(page, "");
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 1 } });
        await waitUntil("the event", async () => (await received(page)).length === 1);
        expect(await received(page)).toEqual([["share.news", { n: 1 }]]);
        // A tab that leads alone asks for the share client once its first stream has opened (issue 31), with the
        // protocol and the engine beside it: maybe after the event.
        await waitUntil("the sharing chunks", async () => ["leadership", "protocol", "share-platform"].every((name) => chunks(requests).includes(name)));
        // Not the platform set-up: the page uses the browser's own EventSource.
        expect(chunks(requests).filter((name) => SHARING.includes(name))).toEqual(["leadership", "protocol", "share-platform"]);
    });

    it("downloads none of them on a page with shareAcrossTabs: false", async () => {
        const page = await newPage();
        const requests = await openEsm(page, "?share=0");
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 2 } });
        await waitUntil("the event", async () => (await received(page)).length === 1);
        expect(chunks(requests).filter((name) => SHARING.includes(name))).toEqual([]);
    });

    it("lets a page that leads its tabs authorize and open its stream before the share client has arrived, then hands both to it: one auth request, one stream", async () => {
        const page = await newPage();
        // The share client's download is held until the page's auth request has left (a cap, should it never leave).
        let authLeft = false;
        let heldToTheCap = false;
        const hub: string[] = [];
        page.on("request", (request) => {
            const path = new URL(request.url()).pathname;
            if (request.method() === "POST" && path === "/broadcasting/auth") authLeft = true;
            if (path === "/.well-known/mercure") hub.push(path);
        });
        await page.route("**/dist/chunks/share-platform-*.js", async (route) => {
            for (let waited = 0; !authLeft && waited < 10_000; waited += 20) await sleep(20);
            heldToTheCap = !authLeft;
            await route.continue();
        });
        const requests = await openEsm(page, "");
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        // The share client has arrived (after the auth request) and leads with the page's lock: the engine is loaded too.
        await waitUntil("the engine chunk", async () => chunks(requests).includes("leadership"));
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 4 } });
        await waitUntil("the event", async () => (await received(page)).length === 1);
        expect(heldToTheCap).toBe(false);
        expect(await received(page)).toEqual([["share.news", { n: 4 }]]);
        expect(requests.filter((path) => path === "/broadcasting/auth")).toHaveLength(1);
        expect(hub).toHaveLength(1);
    });

    it("reports a failed download of the share client as load_failed on a page whose tabs another page leads, and the retry with backoff downloads it again", async () => {
        const leader = await newPage();
        await openEsm(leader, "");
        await waitUntil("the leading page to connect", async () => (await status(leader)) === "connected");
        // A second page of the same browser: the first leads, so this one waits for its share client to follow it.
        const page = await leader.context().newPage();
        // The first request for the chunk fails (offline, or a deploy removed it); later ones reach the server.
        let refused = 0;
        await page.route("**/dist/chunks/share-platform-*.js", (route) => (refused++ === 0 ? route.abort("internetdisconnected") : route.continue()));
        const requests = await openEsm(page, "");
        await waitUntil("the load_failed error", async () => (await received(page)).length > 0);
        expect(await received(page)).toEqual([["error", "load_failed"]]);
        // The connector's first backoff is about a second: its retry downloads the chunk again, and the channel connects.
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 3 } });
        await waitUntil("the event", async () => (await received(page)).length === 2);
        expect(await received(page)).toEqual([["error", "load_failed"], ["share.news", { n: 3 }]]);
        expect(requests.filter((path) => path.startsWith("/dist/chunks/share-platform-"))).toHaveLength(2);
    });

    it("lets a page that leads its tabs connect even when its share client does not download (nothing else authorizes for the hub)", async () => {
        const page = await newPage();
        await page.route("**/dist/chunks/share-platform-*.js", (route) => route.abort("internetdisconnected"));
        await openEsm(page, "");
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 5 } });
        await waitUntil("the event", async () => (await received(page)).length === 1);
        expect(await received(page)).toEqual([["share.news", { n: 5 }]]);
    });
});
