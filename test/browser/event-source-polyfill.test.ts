import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DevServer, DevServerOptions } from "../../src/dev/server";
import { ALL_HUBS, type HubTarget } from "../support/hubs";
import { findChromium, launchChromium, shouldRunBrowserTests } from "./support/chromium";
import { payloadsOf, PageHarness } from "./support/harness";
import { BUNDLE_PATH, harnessPage } from "./support/pages";
import { sleep } from "./support/wait";

const chromium = findChromium();

/** The polyfill page's path. */
const POLYFILL_PAGE = "/polyfill.html";

/**
 * The harness page with event-source-polyfill loaded from node_modules (a plain script: it defines
 * `window.EventSourcePolyfill`) and `window.polyfillOptions()`: the polyfill, a `hubToken` function fetching the dev
 * app's `/dev/hub-token` (counting its calls in `window.hubTokenCalls`), a 3 s polyfill heartbeat and the hub's 1 s
 * dispatch timeout.
 */
function polyfillPage(): string {
    const polyfill = readFileSync(createRequire(import.meta.url).resolve("event-source-polyfill"), "utf8");
    const options = `
window.hubTokenCalls = 0;
window.polyfillOptions = function () {
    return {
        eventSource: window.EventSourcePolyfill,
        hubToken: function () {
            window.hubTokenCalls++;
            return fetch("/dev/hub-token?channels=private-orders.1", { credentials: "same-origin" })
                .then(function (response) { return response.json(); })
                .then(function (body) { return body.token; });
        },
        heartbeatTimeout: 3000,
        hubTimeouts: { dispatch: 1000 },
    };
};`;
    return harnessPage().replace(`<script src="${BUNDLE_PATH}"></script>`, () => `<script>${polyfill}</script>\n<script>${options}</script>\n<script src="${BUNDLE_PATH}"></script>`);
}

/** Chromium's message for a failed response body: what the polyfill's unhandled `reader.cancel()` rejects with. */
const POLYFILL_CANCEL_REJECTION = "network error";

/** A dev stack on `target` whose hub refuses cookies (header auth only) and keeps history. */
function stack(target: HubTarget, hub: DevServerOptions["hub"], expiresIn: number): Promise<DevServer> {
    return target.start({
        hub: { cookieAuth: false, history: true, ...hub },
        app: { users: [{ id: 1, name: "Ann" }], expiresIn },
        channels: { "orders.{id}": (user) => user.id === 1 },
        pages: { [POLYFILL_PAGE]: polyfillPage() },
        distDir: fileURLToPath(new URL("../../dist/", import.meta.url)),
    });
}

/** Open the polyfill page as Ann, create Echo with the polyfill options, join private-orders.1 and wait for subscribed(). */
async function subscribedPage(browser: Browser, server: DevServer): Promise<PageHarness> {
    const ann = await PageHarness.open(browser, server.url, 1, POLYFILL_PAGE);
    await ann.page.evaluate(() => {
        const w = window as unknown as { harness: { create(options: unknown): string }; polyfillOptions(): unknown };
        w.harness.create(w.polyfillOptions());
    });
    await ann.join({ kind: "private", name: "orders.1", events: [".tick"] });
    await ann.waitForSubscribed(["private-orders.1"], { timeout: 15_000 });
    return ann;
}

for (const target of ALL_HUBS) describe.skipIf(!shouldRunBrowserTests(chromium) || !target.available)(`event-source-polyfill with hubToken in Chromium, against a hub that refuses cookies [${target.name}]`, () => {
    let browser: Browser | undefined;
    let server: DevServer | undefined;
    let ann: PageHarness | undefined;

    beforeAll(async () => {
        browser = await launchChromium(chromium);
    });

    afterEach(async () => {
        await Promise.allSettled([ann?.close(), server?.close()]);
        ann = undefined;
        server = undefined;
    });

    afterAll(async () => {
        await browser?.close();
    });

    it("receives every private broadcast, in order, across a token expiry and a hub restart", async () => {
        if (browser === undefined) throw new Error("setup failed");
        // 10 s tokens; the hub ends a stream 1 s before its token's exp. The connector renews at 6 s with a new token.
        server = await stack(target, { dispatchTimeout: 1_000, lifetimeFraction: () => 1 }, 10);
        const hub = server;
        ann = await subscribedPage(browser, hub);
        const page = ann;

        let n = 0;
        const tick = () => hub.broadcast({ channels: ["private-orders.1"], event: "tick", payload: { n: n++ } });
        const started = Date.now();
        // Past the first token's expiry (10 s), each tick received before the next.
        while (Date.now() - started < 12_000) {
            await tick();
            const count = n;
            await page.waitFor(`tick ${count - 1}`, (s) => s.events.length === count, { timeout: 15_000 });
            await sleep(100);
        }
        // A hub restart drops the stream; the polyfill reconnects by itself with last_event_id, and the hub replays.
        await hub.stop();
        await sleep(500);
        await hub.restart();
        for (let i = 0; i < 5; i++) await tick();
        const seen = await page.waitFor("the broadcasts made while the page reconnected", (s) => s.events.length === n, { timeout: 30_000 });

        expect(payloadsOf(seen, "private-orders.1", ".tick").map((payload) => (payload as { n: number }).n)).toEqual(Array.from({ length: n }, (_, i) => i));
        // Every stream was opened with a token from the header (the hub reads no cookie), and the token was renewed.
        expect(hub.hub.stats.subscribeConnections.filter((connection) => connection.status !== 200)).toEqual([]);
        expect(await page.page.evaluate(() => (window as unknown as { hubTokenCalls: number }).hubTokenCalls)).toBeGreaterThanOrEqual(2);
        // A reconnect after the restart resumed from the cursor under Mercure 1.0's name.
        const resumed = hub.hub.stats.subscribeConnections.filter((connection) => new URLSearchParams(connection.query).has("last_event_id"));
        expect(resumed.length).toBeGreaterThanOrEqual(1);
        expect(hub.hub.stats.subscribeConnections.some((connection) => new URLSearchParams(connection.query).has("lastEventId"))).toBe(false);
        // event-source-polyfill 1.0.31 closes a stream whose body failed (the hub restart) by cancelling that body, and
        // leaves the rejection unhandled: Chromium's "network error", when the connector replaces the stream before the
        // polyfill reconnects it (src/eventsource.js: FetchTransport's abort calls reader.cancel() on an errored
        // stream). README says so; anything else the page throws fails the test.
        expect(page.pageErrors.filter((message) => message !== POLYFILL_CANCEL_REJECTION)).toEqual([]);
    }, 120_000);

    it("connects once when the page's clock runs ten minutes ahead of the server's, so every token's exp is behind it (issue 29)", async () => {
        if (browser === undefined) throw new Error("setup failed");
        // 5-minute tokens minted on the server's clock: the page reads each one as expired five minutes ago. The hub's
        // 1 s keep-alive keeps the polyfill (3 s heartbeat timeout) from reconnecting on its own.
        server = await stack(target, { heartbeatMs: 1_000 }, 300);
        ann = await PageHarness.open(browser, server.url, 1, POLYFILL_PAGE);
        await ann.page.addInitScript(() => {
            const now = Date.now.bind(Date);
            Date.now = () => now() + 600_000;
        });
        await ann.page.reload();
        const page = ann;
        await page.page.evaluate(() => {
            const w = window as unknown as { harness: { create(options: unknown): string }; polyfillOptions(): unknown };
            w.harness.create(w.polyfillOptions());
        });
        await page.join({ kind: "private", name: "orders.1", events: [".tick"] });
        await page.waitForSubscribed(["private-orders.1"], { timeout: 15_000 });
        // Before the fix: an auth request, a hubToken call and a stream per open, as fast as the hub answered.
        await sleep(5_000);
        expect(server.app.stats.authRequests.map((request) => request.status)).toEqual([200]);
        expect(await page.page.evaluate(() => (window as unknown as { hubTokenCalls: number }).hubTokenCalls)).toBe(1);
        expect(server.hub.stats.subscribeConnections).toHaveLength(1);
        const snapshot = await page.snapshot();
        expect(snapshot.status).toBe("connected");
        expect(snapshot.errors).toEqual([]);
    }, 60_000);

    it("stays quiet across an idle stream longer than its heartbeat timeout while the hub's keep-alive comes more often", async () => {
        if (browser === undefined) throw new Error("setup failed");
        // Polyfill heartbeat 3 s, hub keep-alive 1 s, 5-minute tokens: nothing but keep-alives for 6 s.
        server = await stack(target, { heartbeatMs: 1_000 }, 300);
        ann = await subscribedPage(browser, server);
        const before = server.hub.stats.subscribeConnections.length;
        await sleep(6_000);
        expect(server.hub.stats.subscribeConnections.length).toBe(before);
        await server.broadcast({ channels: ["private-orders.1"], event: "tick", payload: { n: 0 } });
        const seen = await ann.waitFor("the broadcast after the idle time", (s) => s.events.length === 1, { timeout: 15_000 });
        expect(seen.errors).toEqual([]);
        expect(seen.statuses.filter((status) => status === "reconnecting")).toEqual([]);
    }, 60_000);

    it("reconnects when the hub's keep-alive is longer than the heartbeat timeout (the control: the option reaches the polyfill)", async () => {
        if (browser === undefined) throw new Error("setup failed");
        // Hub keep-alive 20 s against the 3 s heartbeat: the polyfill gives up on the quiet stream and opens another.
        server = await stack(target, { heartbeatMs: 20_000 }, 300);
        ann = await subscribedPage(browser, server);
        const hub = server;
        const before = hub.hub.stats.subscribeConnections.length;
        const deadline = Date.now() + 15_000;
        while (hub.hub.stats.subscribeConnections.length === before && Date.now() < deadline) await sleep(100);
        expect(hub.hub.stats.subscribeConnections.length).toBeGreaterThan(before);
    }, 60_000);
});
