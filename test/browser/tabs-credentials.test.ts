import type { IncomingMessage } from "node:http";
import { beforeEach, expect, it } from "vitest";
import { findUser } from "../../src/dev/laravel/dev-routes";
import type { DevUser } from "../../src/dev/laravel/options";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { DEADLINE, mainStreams, numbered, Profile, startTab, waitForMainStreams, waitForNoStreams } from "./support/tabs";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";

// Issue 49 point 1 in Chromium: a page without a CSRF meta tag (an SPA on Sanctum's cookie) sends the XSRF-TOKEN cookie
// as X-XSRF-TOKEN, and Laravel sets that cookie anew (another encryption of the session's one token) on every web
// response: the dev stand-in does the same with its `csrf` option. One user's tabs stay one group through it.

const USERS: DevUser[] = [{ id: 1, name: "Ann" }];

/** The X-XSRF-TOKEN of every auth request that passed the CSRF check, in order. */
const xsrf: string[] = [];

/** The session's user, recording the auth requests' X-XSRF-TOKEN. */
function resolveUser(req: IncomingMessage): DevUser | null {
    if (req.url?.startsWith("/broadcasting/auth") === true) xsrf.push(req.headersDistinct["x-xsrf-token"]?.[0] ?? "");
    return findUser(USERS, /(?:^|;\s*)dev_user=([^;]+)/.exec(req.headers.cookie ?? "")?.[1]);
}

const SUITE: BrowserSuiteOptions = {
    server: {
        app: { users: USERS, resolveUser, csrf: true },
        channels: { "side.{x}": () => true },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("one user's tabs through a rotating XSRF-TOKEN cookie", SUITE, ({ browser, dev, track }) => {
    beforeEach(async () => {
        await waitForNoStreams(dev());
        dev().hub.resetStats();
        dev().app.resetStats();
        xsrf.length = 0;
    });

    it("keeps two tabs in one group, on one stream, while every web response renews the cookie", async () => {
        const ann = track(await Profile.open(browser(), dev().url, 1));
        const a = ann.firstTab;
        await startTab(a, [numbered("private", "side.a0")]);
        const b = await ann.openTab();
        await startTab(b, [numbered("private", "side.b0")]);
        const channels = ["private-side.a0", "private-side.b0"];
        for (let round = 1; round <= 3; round++) {
            // The app's own requests (any web response) renew the cookie the tabs read.
            await a.page.evaluate(() => fetch("/dev/csrf").then(() => undefined));
            for (const [tab, name] of [
                [b, `side.b${round}`],
                [a, `side.a${round}`],
            ] as const) {
                await tab.join(numbered("private", name));
                await tab.waitForSubscribed(["private-" + name], DEADLINE);
                channels.push("private-" + name);
            }
        }
        await waitForMainStreams(dev(), 1, channels);
        expect(mainStreams(dev())).toHaveLength(1);
        // The cookie rotated under the tabs, and every request passed with the value of the moment.
        expect(new Set(xsrf).size).toBeGreaterThanOrEqual(3);
        const requests = dev().app.stats.authRequests;
        expect(requests.map((request) => request.status)).toEqual(requests.map(() => 200));
        // The last request authorized both tabs' channels: one group, one cookie for both.
        expect([...(requests.at(-1)!.channelNames as string[])].sort()).toEqual([...channels].sort());
        for (const tab of [a, b]) expect((await tab.snapshot()).errors).toEqual([]);
    });
});
