import { readFileSync } from "node:fs";
import type { BrowserContext } from "playwright-core";
import { expect, it } from "vitest";
import { DEV_HUB_ONLY } from "../support/hubs";
import { PageHarness } from "./support/harness";
import { BUNDLE_PATH, harnessPage } from "./support/pages";
import { describeInChromium, DIST_DIR, IIFE_BUNDLE } from "./support/suite";
import { waitUntil } from "./support/wait";

// Markup an attacker injects into a page (HTML injection: no script of theirs runs) must not choose the code the page
// loads, the hub it listens to, or where its credentials go.
//
// Issue 50 point 1: the script-tag build loads its lazy parts from beside its own URL (dist/iife/). It read that URL
// from document.currentScript, which an element named "currentScript" above the script shadows (DOM clobbering: the
// document's named elements win over its own properties), so an injected <img name="currentScript" src="https://evil.example/">
// made the page import every part, the tabs' sharing client first, from the attacker's origin. The build now reads
// the getter of Document.prototype and takes only a real <script src>; without one no part loads and the channel that
// needed it says why. Every request the page makes is recorded from the first.

/** The harness page with the injection above the bundle's `<script>`. */
const CLOBBERED_PAGE = "/clobbered.html";

/** The harness page with the bundle inlined: there is no `<script src>` to load the parts beside. */
const INLINE_PAGE = "/inline.html";

/** A page with an element that shadows the missing `window.Laravel` (its `csrfToken` an input element, not a token). */
const LARAVEL_PAGE = "/laravel-clobbered.html";

/** The harness page with a hub link and a `<base href>` injected into its body, naming the attacker's origin. */
const BODY_PAGE = "/injected-body.html";

/** The origin the injection names; every request to it is recorded and aborted. */
const EVIL = "https://evil.example";

/** A presence room the dev app grants (its member info is the user's). */
const ROOM = "presence-room.1";

describeInChromium(
    "markup injected into the page, in Chromium",
    {
        hubs: DEV_HUB_ONLY,
        server: (hub) =>
            hub.start({
                // Laravel's CSRF check: the login sets the XSRF-TOKEN cookie, which the connector sends when the page gives no token.
                app: { users: [{ id: 1, name: "Ann" }], csrf: true },
                channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) },
                distDir: DIST_DIR,
                pages: {
                    [CLOBBERED_PAGE]: harnessPage().replace(`<script src="${BUNDLE_PATH}">`, (tag) => `<img name="currentScript" src="${EVIL}/">\n${tag}`),
                    [BODY_PAGE]: harnessPage().replace("<body>", () => `<body><p>A comment:</p><link rel="mercure" href="${EVIL}/.well-known/mercure"><base href="${EVIL}/">`),
                    [LARAVEL_PAGE]: harnessPage().replace("<body>", () => `<body><form id="Laravel"><input name="csrfToken" value="attacker"></form>`),
                    [INLINE_PAGE]: harnessPage().replace(`<script src="${BUNDLE_PATH}"></script>`, () => `<script>${readFileSync(IIFE_BUNDLE, "utf8")}</script>`),
                },
            }),
    },
    ({ browser, dev, track }) => {
        /** Open `path` logged in as Ann, every request of its context recorded (URL and resource type) from before it loads. */
        async function openRecorded(path: string, user: number | null = 1): Promise<{ page: PageHarness; requests: Array<{ url: string; type: string }> }> {
            const requests: Array<{ url: string; type: string }> = [];
            const prepare = async (context: BrowserContext): Promise<void> => {
                context.on("request", (request) => requests.push({ url: request.url(), type: request.resourceType() }));
                await context.route(`${EVIL}/**`, (route) => route.abort());
            };
            return { page: track(await PageHarness.open(browser(), dev().url, user, path, prepare)), requests };
        }

        it("loads every part from beside the real script, none from the origin the injected element names, and works", async () => {
            const { page, requests } = await openRecorded(CLOBBERED_PAGE);
            // The gadget is in place: the document's own property is shadowed by the injected image.
            expect(await page.page.evaluate(() => document.currentScript instanceof HTMLImageElement)).toBe(true);
            await page.create({});
            await page.join({ kind: "public", name: "news", events: [".headline"] }, { kind: "presence", name: "room.1" });
            await page.waitForSubscribed(["news", ROOM]);
            await dev().broadcast({ channels: ["news"], event: "headline", payload: { n: 1 } });
            await page.waitFor("the headline", (snapshot) => snapshot.events.length === 1);
            // The tabs' sharing client (asked for at the page's first change of channels: issue 53), the engine and the presence part.
            await page.join({ kind: "public", name: "sports" });
            await page.waitForSubscribed(["sports"]);
            const parts = (): string[] => requests.filter((request) => request.url.startsWith(`${dev().url}/dist/iife/`)).map((request) => new URL(request.url).pathname);
            await waitUntil("the sharing parts", () => ["share-platform", "protocol", "leadership"].every((part) => parts().includes(`/dist/iife/${part}.js`)) || null);
            expect(parts()).toContain("/dist/iife/presence-capability.js");
            // The injected image fetches its own src (the page's markup, not the package's doing); nothing else leaves.
            expect(requests.filter((request) => new URL(request.url).origin !== dev().url)).toEqual([{ url: `${EVIL}/`, type: "image" }]);
            expect((await page.snapshot()).errors).toEqual([]);
        });

        // A sibling: Echo reads window.Laravel.csrfToken first, and an injected <form id="Laravel"> makes it an element,
        // which Echo writes into the auth headers; the server refuses it (419). The connector then reads the token
        // again, strings only: the element is dropped and Laravel's XSRF-TOKEN cookie sent instead.
        it("recovers from a clobbered window.Laravel.csrfToken with the XSRF-TOKEN cookie after the 419", async () => {
            const { page, requests } = await openRecorded(LARAVEL_PAGE);
            expect(await page.page.evaluate(() => String((window as unknown as { Laravel: { csrfToken: unknown } }).Laravel.csrfToken))).toBe("[object HTMLInputElement]");
            const before = dev().app.stats.authRequests.length;
            await page.create({});
            await page.join({ kind: "public", name: "news" });
            await page.waitForSubscribed(["news"]);
            // The first answer refused the element, the retry with the cookie was granted (the tabs' engine may ask again later).
            expect(dev().app.stats.authRequests.slice(before, before + 2).map((request) => request.status)).toEqual([419, 200]);
            expect((await page.snapshot()).errors).toEqual([]);
            expect(requests.filter((request) => new URL(request.url).origin !== dev().url)).toEqual([]);
        });

        // Issue 50 point 4, and its sibling: with no `host`, the hub is the one the page's <head> announces (none here),
        // else /.well-known/mercure; a link in the body used to win. A <base href> in the body changed where fetch sent
        // the relative auth endpoint, headers and all; the endpoint now resolves against the page's address.
        it.each([
            ["no host (discovery)", { host: null }],
            ["a relative host", {}],
        ])("takes neither the hub nor the auth endpoint from a link and a <base href> injected into the body: %s", async (_what, options) => {
            const { page, requests } = await openRecorded(BODY_PAGE, null);
            expect(await page.page.evaluate(() => document.baseURI)).toBe(`${EVIL}/`);
            // The session's CSRF token, as the XSRF-TOKEN cookie (the harness's own login would go through the base).
            await page.page.evaluate(() => fetch(location.origin + "/dev/csrf").then(() => undefined));
            await page.create(options);
            await page.join({ kind: "public", name: "news", events: [".headline"] });
            await page.waitForSubscribed(["news"]);
            await dev().broadcast({ channels: ["news"], event: "headline", payload: { n: 1 } });
            await page.waitFor("the headline", (snapshot) => snapshot.events.length === 1);
            expect(requests.filter((request) => new URL(request.url).origin !== dev().url)).toEqual([]);
            const to = (path: string): string[] => requests.filter((request) => request.url.startsWith(dev().url + path)).map((request) => request.type);
            // The auth request went to the page's origin (the tabs' engine may send another once it takes over).
            expect(to("/broadcasting/auth")).toContain("fetch");
            expect(to("/.well-known/mercure")).toContain("eventsource");
        });

        it("loads no part without a <script src> of its own (the bundle inlined), and the channel that needed one says why", async () => {
            const { page, requests } = await openRecorded(INLINE_PAGE);
            await page.create({});
            await page.join({ kind: "presence", name: "room.1" });
            const failed = await page.waitFor("load_failed on the room", (snapshot) => snapshot.errors.some((error) => error.code === "load_failed"));
            expect(failed.errors[0]).toMatchObject({ channel: ROOM, code: "load_failed" });
            expect(failed.errors[0]!.message).toMatch(/^The presence code for channel "presence-room\.1" could not be downloaded \(the script-tag build has no <script src> of its own to load it beside\)/);
            expect(requests.filter((request) => request.url.includes("/iife/") || new URL(request.url).origin !== dev().url)).toEqual([]);
        });
    },
);
