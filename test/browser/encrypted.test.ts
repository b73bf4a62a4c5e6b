import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { deriveChannelKey, sealJwe } from "../../src/dev/laravel/encrypter";
import { DEFAULT_ISSUER, DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { signPublisherToken } from "../../src/dev/laravel/publisher-token";
import { channelTopic } from "../../src/dev/laravel/topics";
import { PageHarness, payloadsOf, type HarnessSnapshot } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { sleep, waitUntil } from "./support/wait";

// Encrypted channels in Chromium against the dev stack: the IIFE bundle (the JWE code and jose inlined) on the harness page,
// the ESM build with an import map for laravel-echo and the lazy chunk's jose, and a plain-http origin that is not localhost.

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));

/** The §6.5 master key, sha256("mercure-e2e-test-key"), as Laravel's `encryption_key`. */
const MASTER = createHash("sha256").update("mercure-e2e-test-key").digest();
const ENCRYPTION_KEY = "base64:" + MASTER.toString("base64");
const JWT_KEY = "a-browser-test-jwt-key-of-32-bytes-or-more";
const ORDERS = "private-encrypted-orders.1";
const ANN = 1;
const USERS = [{ id: ANN, name: "Ann" }];
const CHANNELS = {
    "orders.{id}": (user: { id: string | number }, params: Record<string, string>) => user.id === ANN && params["id"] === "1",
    "side.{n}": () => true,
};

/** The ESM page: `dist/index.js` as a module, `laravel-echo` through an import map. */
const ESM_PAGE = "/esm.html";

/**
 * A page of an app that bundles nothing: the ESM build from `/dist/`, its bare imports mapped to
 * `/esm/…` (served by the test from node_modules). It joins a public channel, and the encrypted channel
 * `orders.1` only with `?encrypted=1`, recording into `window.received`.
 */
function esmPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>ESM build</title>
<script type="importmap">{"imports":{"laravel-echo":"/esm/laravel-echo/echo.js","jose":"/esm/jose/index.js"}}</script>
<script type="module">
import { MercureEcho } from "/dist/index.js";
window.received = [];
await fetch("/dev/login?user=${ANN}", { method: "POST", credentials: "same-origin" });
const echo = new MercureEcho({ host: "/.well-known/mercure" });
window.echo = echo;
echo.channel("lazy.news").listen(".ping", (payload) => window.received.push(["lazy.news", payload]));
if (new URLSearchParams(location.search).get("encrypted") === "1") {
    echo.encryptedPrivate("orders.1")
        .listen(".ping", (payload) => window.received.push(["${ORDERS}", payload]))
        .error((error) => window.received.push(["error", error.code]));
}
</script>
</head>
<body><p>ESM build</p></body>
</html>
`;
}

/** The dev stack of the first suite: the harness and ESM pages, encrypted channels, no replay. */
const STACK = {
    jwtKey: JWT_KEY,
    // No replay: a stream gap during a reopen would lose updates for good, so the tests see it.
    hub: { history: false },
    app: { users: USERS, encryptionKey: ENCRYPTION_KEY },
    channels: CHANNELS,
    pages: { [HARNESS_PAGE]: harnessPage(), [ESM_PAGE]: esmPage() },
    distDir: DIST_DIR,
};

describeInChromium("encrypted channels in Chromium", { server: STACK }, ({ dev, open, newPage }) => {
    /** Ann on the harness page, Echo created, `channels` joined and subscribed. */
    async function annWith(...channels: Parameters<PageHarness["join"]>): Promise<PageHarness> {
        const harness = await open(ANN);
        await harness.create();
        await harness.join(...channels);
        return harness;
    }

    /** Publish a raw update straight at the hub with a publisher token (not through the app, which encrypts). */
    async function publishAtHub(channel: string, data: unknown): Promise<void> {
        const token = signPublisherToken({ issuer: DEFAULT_ISSUER, audience: dev().hubUrl, now: Date.now() }, JWT_KEY);
        const form = new URLSearchParams({ topic: channelTopic(DEFAULT_TOPIC_PREFIX, channel), data: JSON.stringify(data), private: "on" });
        const response = await fetch(dev().hubUrl, {
            method: "POST",
            headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-www-form-urlencoded" },
            body: form.toString(),
        });
        expect(response.status).toBe(200);
    }

    it("receives the server's encrypted broadcasts decrypted on listen(), on the same stream as a public channel", async () => {
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        const ann = await annWith(
            { kind: "encrypted", name: "orders.1", events: ["OrderShipped"] },
            { kind: "public", name: "plain.news", events: [".headline"] },
        );
        await ann.waitForSubscribed([ORDERS, "plain.news"]);
        expect(dev().hub.stats.subscribeConnections.length - connectionsBefore).toBe(1);
        await dev().broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { id: 1, note: "for Ann only" } });
        await dev().broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { id: 2 } });
        await dev().broadcast({ channels: ["plain.news"], event: "headline", payload: { title: "plain" } });
        const seen = await ann.waitFor("three events", (s) => s.events.length === 3);
        expect(payloadsOf(seen, ORDERS, "OrderShipped")).toEqual([{ id: 1, note: "for Ann only" }, { id: 2 }]);
        expect(payloadsOf(seen, "plain.news")).toEqual([{ title: "plain" }]);
        expect(seen.errors).toEqual([]);
    });

    it("does not deliver a plaintext envelope injected at the hub into the encrypted channel's topic", async () => {
        const ann = await annWith({ kind: "encrypted", name: "orders.1", events: ["OrderShipped"] });
        await ann.waitForSubscribed([ORDERS]);
        await publishAtHub(ORDERS, { channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { forged: true } });
        await dev().broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { sentinel: true } });
        // The hub delivers in order, so the forgery had its turn before the sentinel.
        const seen = await ann.waitFor("the sentinel", (s) => s.events.length >= 1);
        expect(payloadsOf(seen, ORDERS)).toEqual([{ sentinel: true }]);
        expect(seen.errors).toEqual([]);
    });

    it("reports decrypt_failed for a JWE under another channel's key and delivers nothing of it", async () => {
        const ann = await annWith({ kind: "encrypted", name: "orders.1", events: ["OrderShipped"] });
        await ann.waitForSubscribed([ORDERS]);
        const otherKey = deriveChannelKey(MASTER, "private-encrypted-orders.2");
        const jwe = sealJwe(otherKey, JSON.stringify({ event: "App\\Events\\OrderShipped", payload: { forged: true } }));
        await publishAtHub(ORDERS, { channels: [ORDERS], data: jwe });
        await dev().broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { sentinel: true } });
        // Decryptions settle in order of arrival, so the failure is reported before the sentinel arrives.
        const seen = await ann.waitFor("the sentinel", (s) => s.events.length >= 1);
        expect(payloadsOf(seen, ORDERS)).toEqual([{ sentinel: true }]);
        expect(seen.errors).toEqual([expect.objectContaining({ channel: ORDERS, code: "decrypt_failed" })]);
        expect(seen.errors[0]!.message).not.toContain("forged");
    });

    it("delivers 300 encrypted events exactly once and in order while channels are joined and left (no history)", async () => {
        const ann = await annWith({ kind: "encrypted", name: "orders.1", events: [".tick"] });
        await ann.waitForSubscribed([ORDERS]);
        const total = 300;
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        let producing = true;
        const producer = (async () => {
            try {
                for (let n = 0; n < total; n++) {
                    await dev().broadcast({ channels: [ORDERS], event: "tick", payload: { n } });
                    await sleep(15);
                }
            } finally {
                producing = false;
            }
        })();

        let cycles = 0;
        try {
            await sleep(100);
            while (producing && cycles < 24) {
                // Public and encrypted side channels: each join is a new auth (new keys) and a make-before-break reopen.
                const spec = cycles % 2 === 0 ? ({ kind: "public", name: `side.${cycles}` } as const) : ({ kind: "encrypted", name: `side.${cycles}` } as const);
                const full = spec.kind === "public" ? spec.name : `private-encrypted-${spec.name}`;
                await ann.join(spec);
                await ann.waitForSubscribed([full]);
                await ann.page.evaluate((name) => (window as unknown as { harness: { leaveChannel(name: string): void } }).harness.leaveChannel(name), full);
                const expected = connectionsBefore + 2 * (cycles + 1);
                await waitUntil("the reopen after leaving", () => dev().hub.stats.subscribeConnections.length >= expected, {
                    describe: () => ({ connections: dev().hub.stats.subscribeConnections.length, expected }),
                });
                cycles++;
                await sleep(50);
            }
        } finally {
            await producer;
        }

        await ann.waitFor(`tick ${total - 1}`, (s) => s.events.some((e) => (e.payload as { n: number }).n === total - 1), { timeout: 10_000 });
        await waitUntil("the replaced streams to close", () => dev().hub.stats.openConnections === 1, {
            describe: () => dev().hub.stats.openConnections,
        });
        await sleep(200);
        const final = await ann.snapshot();
        expect(cycles, "join/leave cycles completed while the stream ran").toBeGreaterThanOrEqual(4);
        expect(dev().hub.stats.subscribeConnections.length - connectionsBefore).toBe(2 * cycles);
        expect(payloadsOf(final, ORDERS).map((payload) => (payload as { n: number }).n)).toEqual(Array.from({ length: total }, (_, n) => n));
        expect(final.errors).toEqual([]);
    }, 90_000);

    describe("the ESM build", () => {
        /** Open the ESM page; the import map's `/esm/laravel-echo/…` and `/esm/jose/…` are served from node_modules; every request URL is recorded. */
        async function openEsm(query: string): Promise<{ page: Page; requests: string[] }> {
            return openEsmOn(await newPage(), query);
        }

        /** {@link openEsm} on `page`, whose routes the test may have set. */
        async function openEsmOn(page: Page, query: string): Promise<{ page: Page; requests: string[] }> {
            await page.context().route("**/esm/**", (route) => {
                const path = new URL(route.request().url()).pathname;
                const file = path.startsWith("/esm/laravel-echo/")
                    ? NODE_MODULES + "laravel-echo/dist/" + path.slice("/esm/laravel-echo/".length)
                    : NODE_MODULES + "jose/dist/webapi/" + path.slice("/esm/jose/".length);
                return route.fulfill({ path: file, contentType: "text/javascript; charset=utf-8" });
            });
            const requests: string[] = [];
            page.on("request", (request) => requests.push(new URL(request.url()).pathname));
            await page.goto(dev().url + ESM_PAGE + query);
            type EsmWindow = { echo?: { connectionStatus(): string } };
            await waitUntil("the ESM page to connect", () =>
                page.evaluate(() => (window as unknown as EsmWindow).echo?.connectionStatus() === "connected"),
            );
            return { page, requests };
        }

        const received = (page: Page) => page.evaluate(() => (window as unknown as { received: unknown[] }).received);

        it("does not download the crypto chunk or jose on a page that never joins an encrypted channel", async () => {
            const { page, requests } = await openEsm("");
            await dev().broadcast({ channels: ["lazy.news"], event: "ping", payload: { n: 1 } });
            await waitUntil("the public event", async () => (await received(page)).length === 1);
            expect(await received(page)).toEqual([["lazy.news", { n: 1 }]]);
            expect(requests).toContain("/dist/index.js");
            // dist/index.js re-exports the public API from the core chunk, which it imports statically.
            expect(requests.filter((path) => path.startsWith("/dist/chunks/core-"))).toHaveLength(1);
            expect(requests).toContain("/esm/laravel-echo/echo.js");
            // The tab shares its connection (shareAcrossTabs): the share client, the tabs' protocol and the hub engine, nothing
            // else (not the EventSource adapter: the page uses the browser's own).
            expect(requests.filter((path) => (path.startsWith("/dist/chunks/") && !/^\/dist\/chunks\/(leadership|share-platform|protocol|core)-/.test(path)) || path.startsWith("/esm/jose/"))).toEqual([]);
        });

        it("reports a failed download of the encrypted channels' chunk as load_failed on the channel, and downloads it again when the channel is joined again", async () => {
            const page = await newPage();
            // The first request for the chunk fails (offline, or a deploy removed it); later ones reach the server.
            let refused = 0;
            await page.route("**/dist/chunks/crypto-capability-*.js", (route) => (refused++ === 0 ? route.abort("internetdisconnected") : route.continue()));
            const { requests } = await openEsmOn(page, "?encrypted=1");
            await waitUntil("the load_failed error", async () => (await received(page)).length > 0);
            expect(await received(page)).toEqual([["error", "load_failed"]]);
            // The channel was left: joining it again downloads the chunk again, and the channel decrypts.
            type Rejoin = { echo: { encryptedPrivate(name: string): Channel }; received: unknown[]; rejoined?: boolean };
            type Channel = { listen(event: string, callback: (payload: unknown) => void): Channel; subscribed(callback: () => void): Channel };
            await page.evaluate((orders) => {
                const scope = window as unknown as Rejoin;
                scope.echo
                    .encryptedPrivate("orders.1")
                    .listen(".ping", (payload) => scope.received.push([orders, payload]))
                    .subscribed(() => (scope.rejoined = true));
            }, ORDERS);
            await waitUntil("the channel to be subscribed again", () => page.evaluate(() => (window as unknown as Rejoin).rejoined === true));
            await dev().broadcast({ channels: [ORDERS], event: "ping", payload: { n: 3 } });
            await waitUntil("the encrypted event", async () => (await received(page)).length === 2);
            expect(await received(page)).toEqual([["error", "load_failed"], [ORDERS, { n: 3 }]]);
            expect(requests.filter((path) => /^\/dist\/chunks\/crypto-capability-/.test(path))).toHaveLength(2);
        });

        it("downloads the chunk and jose when the page joins an encrypted channel, and decrypts", async () => {
            const { page, requests } = await openEsm("?encrypted=1");
            await dev().broadcast({ channels: [ORDERS], event: "ping", payload: { n: 2 } });
            await waitUntil("the encrypted event", async () => (await received(page)).length === 1);
            expect(await received(page)).toEqual([[ORDERS, { n: 2 }]]);
            // The encrypted channels' capability (from the join), and the JWE code it starts at once (jose is its import).
            expect(requests.filter((path) => path.startsWith("/dist/chunks/") && !/^\/dist\/chunks\/(leadership|share-platform|protocol|core)-/.test(path)).sort()).toEqual([
                expect.stringMatching(/^\/dist\/chunks\/crypto-capability-[\w-]+\.js$/),
                expect.stringMatching(/^\/dist\/chunks\/jwe-[\w-]+\.js$/),
            ]);
            expect(requests).toContain("/esm/jose/index.js");
        });
    });
});

/** The dev stack of the second suite, reached at http://app.test:<port>/ (not a secure context). */
const PLAIN_HTTP: BrowserSuiteOptions = {
    // app.test resolves to 127.0.0.1 for this browser only: http://app.test:<port>/ is not a secure context.
    launchArgs: ["--host-resolver-rules=MAP app.test 127.0.0.1"],
    server: {
        // A relative public URL gives the Secure cookie Laravel sets there, which Chromium refuses on plain
        // http; an anonymous hub still carries public updates, as on a Herd or Valet site before `secure`.
        hub: { anonymous: true },
        allowedHosts: ["app.test"], // The dev server refuses other names than loopback ones (DNS rebinding).
        app: { users: USERS, encryptionKey: ENCRYPTION_KEY, publicUrl: "/.well-known/mercure" },
        channels: CHANNELS,
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("encrypted channels on a plain-http origin other than localhost", PLAIN_HTTP, ({ dev, open }) => {
    it("reports crypto_unavailable naming HTTPS and localhost when the channel is joined, and a public channel on the page still works", async () => {
        const harness = await open(ANN, HARNESS_PAGE, `http://app.test:${dev().port}`);
        expect(await harness.page.evaluate(() => [window.isSecureContext, typeof crypto.subtle])).toEqual([false, "undefined"]);
        await harness.create();
        await harness.join({ kind: "encrypted", name: "orders.1", events: ["OrderShipped"] }, { kind: "public", name: "plain.news", events: [".headline"] });
        // At join time: the auth answer granted the key, and no event was broadcast on the channel yet.
        const joined = await harness.waitFor("the crypto_unavailable error", (s) => s.errors.length > 0);
        expect(joined.errors).toEqual([expect.objectContaining({ channel: ORDERS, code: "crypto_unavailable" })]);
        expect(joined.errors[0]!.message).toMatch(/HTTPS/);
        expect(joined.errors[0]!.message).toMatch(/localhost/);

        await harness.waitForSubscribed(["plain.news"]);
        await dev().broadcast({ channels: ["plain.news"], event: "headline", payload: { title: "still here" } });
        const seen: HarnessSnapshot = await harness.waitFor("the public event", (s) => s.events.length === 1);
        expect(payloadsOf(seen, "plain.news")).toEqual([{ title: "still here" }]);
        expect(harness.pageErrors).toEqual([]);
    });
});
