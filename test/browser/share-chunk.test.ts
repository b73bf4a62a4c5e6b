import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { sleep, waitUntil } from "./support/wait";

// The tab-sharing client as lazy chunks of the ESM build (issue 32), in Chromium against the dev stack on each hub. A
// page that does not share downloads none of them. A page that leads its tabs (issue 31: it won the Web Lock at Echo's
// creation) authorizes and connects without them, and downloads them only once another page of the browser pings the
// link (issue 53: a lone tab never does; the unit tests in test/unit/share/direct-lead.test.ts hold when, with fake
// timers); on a page that follows another, a failed download of the share client reaches the channels as load_failed,
// then the retry with backoff downloads it again.

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

    it("downloads none of them on a page that leads alone; a second page makes it download them, and both receive (issue 53)", async () => {
        const first = await newPage();
        const requests = await openEsm(first, "");
        await waitUntil("the page to connect", async () => (await status(first)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 1 } });
        await waitUntil("the event", async () => (await received(first)).length === 1);
        // Its stream open and an event received, a lone page has asked for none of them (earlier builds did by then).
        expect(chunks(requests).filter((name) => SHARING.includes(name))).toEqual([]);

        const second = await first.context().newPage();
        const secondRequests = await openEsm(second, "");
        await waitUntil("the first page's sharing chunks", async () => ["leadership", "protocol", "share-platform"].every((name) => chunks(requests).includes(name)));
        await waitUntil("the second page to connect", async () => (await status(second)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 2 } });
        await waitUntil("the event on both pages", async () => (await received(first)).length === 2 && (await received(second)).length === 1);
        expect(await received(first)).toEqual([["share.news", { n: 1 }], ["share.news", { n: 2 }]]);
        expect(await received(second)).toEqual([["share.news", { n: 2 }]]);
        // Not the platform set-up: the pages use the browser's own EventSource.
        expect(chunks(requests).filter((name) => SHARING.includes(name))).toEqual(["leadership", "protocol", "share-platform"]);
        expect(chunks(secondRequests).filter((name) => SHARING.includes(name))).toEqual(["leadership", "protocol", "share-platform"]);
    });

    it("downloads none of them on a page with shareAcrossTabs: false", async () => {
        const page = await newPage();
        const requests = await openEsm(page, "?share=0");
        await waitUntil("the page to connect", async () => (await status(page)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 2 } });
        await waitUntil("the event", async () => (await received(page)).length === 1);
        expect(chunks(requests).filter((name) => SHARING.includes(name))).toEqual([]);
    });

    it("tells a second page to wait while the leading page's share client downloads, longer than its ping timeout: no lock stolen, one stream for both at the end", async () => {
        const first = await newPage();
        // The hub streams both pages open, and the auth requests each page sends (its own or its engine's).
        const hub: string[] = [];
        const auth = new Map<Page, number>();
        const watch = (page: Page) =>
            page.on("request", (request) => {
                const path = new URL(request.url()).pathname;
                if (path === "/.well-known/mercure" && request.method() === "GET") hub.push(request.url());
                if (path === "/broadcasting/auth") auth.set(page, (auth.get(page) ?? 0) + 1);
            });
        watch(first);
        // The leading page's share client arrives 4 s after it was asked for (the other page's ping timeout is 3 s).
        await first.route("**/dist/chunks/share-platform-*.js", async (route) => {
            await sleep(4_000);
            await route.continue();
        });
        await openEsm(first, "");
        await waitUntil("the page to connect", async () => (await status(first)) === "connected");
        expect(hub).toHaveLength(1);

        const second = await first.context().newPage();
        watch(second);
        await openEsm(second, "");
        await waitUntil("the second page to connect", async () => (await status(second)) === "connected", { timeout: 15_000 });
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 4 } });
        await waitUntil("the event on both pages", async () => (await received(first)).length === 1 && (await received(second)).length === 1);
        expect([await received(first), await received(second)]).toEqual([[["share.news", { n: 4 }]], [["share.news", { n: 4 }]]]);
        // The first page's own stream, then its engine's for both pages, which answered the second page from the first
        // page's grant: the second page stole no lock (a leader sends its first auth request itself).
        expect(hub).toHaveLength(2);
        expect([auth.get(first), auth.get(second)]).toEqual([1, undefined]);
        expect(await status(first)).toBe("connected");
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

    it("lets a page that leads its tabs connect without its share client, and when its download fails at another page's ping, both pages connect after all (issue 53)", async () => {
        const first = await newPage();
        // The leading page's first download of the share client fails; later ones reach the server.
        let refused = 0;
        await first.route("**/dist/chunks/share-platform-*.js", (route) => (refused++ === 0 ? route.abort("internetdisconnected") : route.continue()));
        const requests = await openEsm(first, "");
        await waitUntil("the page to connect", async () => (await status(first)) === "connected");
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 5 } });
        await waitUntil("the event", async () => (await received(first)).length === 1);

        // A second page pings: the first page's download fails, so the second hears no engine and takes the lead after
        // its ping timeout; the first page then follows it, through its share client downloaded again.
        const second = await first.context().newPage();
        await openEsm(second, "");
        await waitUntil("the second page to connect", async () => (await status(second)) === "connected", { timeout: 15_000 });
        await waitUntil("the first page to download its share client again", async () => requests.filter((path) => path.startsWith("/dist/chunks/share-platform-")).length === 2, { timeout: 15_000 });
        await waitUntil("the first page to be connected", async () => (await status(first)) === "connected", { timeout: 15_000 });
        await dev().broadcast({ channels: ["share.news"], event: "ping", payload: { n: 6 } });
        await waitUntil("the event on both pages", async () => (await received(first)).length === 2 && (await received(second)).length === 1);
        expect(await received(first)).toEqual([["share.news", { n: 5 }], ["share.news", { n: 6 }]]);
        expect(await received(second)).toEqual([["share.news", { n: 6 }]]);
    });
});
