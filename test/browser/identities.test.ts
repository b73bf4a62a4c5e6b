import { readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import { expect, it } from "vitest";
import { findUser } from "../../src/dev/laravel/dev-routes";
import type { DevServerOptions } from "../../src/dev/server";
import type { DevUser } from "../../src/dev/laravel/options";
import { DEV_HUB_ONLY } from "../support/hubs";
import type { PageHarness } from "./support/harness";
import { BUNDLE_PATH, HARNESS_PAGE, harnessPage } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { broadcastNumbered, DEADLINE, numbered, numbersOf, Profile, waitForNumber } from "./support/tabs";

// Issue 28 (medium): two identities in one browser profile (an admin tab and an "impersonate" tab, two users of an
// app that authenticates its API with a bearer header) never see each other's private events, through the public API
// in Chromium. Each tab's `auth.headers` (or `hubToken` request) names its user; the dev app resolves the user from
// that header first.

const ALICE = 1;
const BOB = 2;
const USERS: DevUser[] = [
    { id: ALICE, name: "Alice" },
    { id: BOB, name: "Bob" },
];
const ALICE_CHANNEL = "private-App.Models.User.1";
const BOB_CHANNEL = "private-App.Models.User.2";

/** Laravel's API guard, simplified: `Authorization: Bearer user-<id>` names the user; else the session cookie's. */
function resolveUser(req: IncomingMessage): DevUser | null {
    const bearer = /^Bearer user-(\d+)$/.exec(req.headers.authorization ?? "");
    if (bearer !== null) return findUser(USERS, bearer[1]);
    const session = /(?:^|;\s*)dev_user=([^;]+)/.exec(req.headers.cookie ?? "");
    return findUser(USERS, session?.[1]);
}

/** The dev stack: each user may join only their own user channel. */
function suite(hub: DevServerOptions["hub"] | undefined, pages: Record<string, string>): DevServerOptions {
    return {
        ...(hub === undefined ? {} : { hub }),
        app: { users: USERS, resolveUser },
        channels: { "App.Models.User.{id}": (user, params) => String(user.id) === params["id"] },
        pages,
        distDir: DIST_DIR,
    };
}

/** Alice's tab on her channel, then Bob's tab of the same profile on his and (denied) hers; both subscribed. */
async function twoIdentities(profile: Profile, create: (tab: PageHarness, user: number) => Promise<unknown>): Promise<{ alice: PageHarness; bob: PageHarness }> {
    const alice = profile.firstTab;
    await create(alice, ALICE);
    await alice.join(numbered("private", "App.Models.User.1"));
    await alice.waitForSubscribed([ALICE_CHANNEL], DEADLINE);
    const bob = await profile.openTab(profile.firstTab.page.url().replace(/^https?:\/\/[^/]+/, ""));
    await create(bob, BOB);
    await bob.join(numbered("private", "App.Models.User.1"), numbered("private", "App.Models.User.2"));
    await bob.waitForSubscribed([BOB_CHANNEL], DEADLINE);
    await bob.waitFor("Bob's tab refused Alice's channel", (s) => s.errors.some((error) => error.channel === ALICE_CHANNEL), DEADLINE);
    return { alice, bob };
}

/** Publish on Alice's channel, then Bob's; each tab receives its own, and Bob's tab nothing of Alice's. */
async function expectSeparated(server: Parameters<typeof broadcastNumbered>[0], alice: PageHarness, bob: PageHarness): Promise<void> {
    await broadcastNumbered(server, ALICE_CHANNEL, [1]);
    await broadcastNumbered(server, BOB_CHANNEL, [2]);
    const seenByAlice = await waitForNumber(alice, ALICE_CHANNEL, 1);
    const seenByBob = await waitForNumber(bob, BOB_CHANNEL, 2);
    // Had Bob's channels been authorized with Alice's credentials, her event (published first, on the one shared
    // stream) would have reached his tab before his own.
    expect(numbersOf(seenByBob, ALICE_CHANNEL)).toEqual([]);
    expect(seenByBob.errors.filter((error) => error.channel === ALICE_CHANNEL).map((error) => error.code)).toEqual(["auth_denied"]);
    expect(numbersOf(seenByAlice, BOB_CHANNEL)).toEqual([]);
    expect(numbersOf(await bob.snapshot(), ALICE_CHANNEL)).toEqual([]);
}

describeInChromium("two identities in one browser profile, auth.headers", { server: suite(undefined, { [HARNESS_PAGE]: harnessPage() }) }, ({ browser, dev, track }) => {
    it("authorizes each tab with its own header: Bob's tab is denied Alice's channel and never gets her events (tab sharing on)", async () => {
        const profile = track(await Profile.open(browser(), dev().url, ALICE));
        const { alice, bob } = await twoIdentities(profile, (tab, user) => tab.create({ auth: { headers: { Authorization: `Bearer user-${user}` } } }));
        await expectSeparated(dev(), alice, bob);
        expect(profile.pageErrors).toEqual([]);
    });
});

/** The identities page: the harness with event-source-polyfill and `window.identity(id)`, a hubToken set-up for user `id`. */
const IDENTITY_PAGE = "/identity.html";

function identityPage(): string {
    const polyfill = readFileSync(createRequire(import.meta.url).resolve("event-source-polyfill"), "utf8");
    const script = `
window.identity = function (id) {
    var headers = { Authorization: "Bearer user-" + id };
    return {
        eventSource: window.EventSourcePolyfill,
        auth: { headers: headers },
        hubToken: function () {
            return fetch("/dev/hub-token?channels=private-App.Models.User.1,private-App.Models.User.2", { headers: headers })
                .then(function (response) { return response.json(); })
                .then(function (body) { return body.token; });
        },
    };
};`;
    return harnessPage().replace(`<script src="${BUNDLE_PATH}"></script>`, () => `<script>${polyfill}</script>\n<script>${script}</script>\n<script src="${BUNDLE_PATH}"></script>`);
}

// The dev hub with cookies refused: only each tab's own hub token authorizes its streams (header auth).
describeInChromium(
    "two identities in one browser profile, hubToken subjects",
    { hubs: DEV_HUB_ONLY, server: suite({ cookieAuth: false }, { [IDENTITY_PAGE]: identityPage() }) },
    ({ browser, dev, track }) => {
        it("gives each tab's streams its own subject's token: Bob's tab never sees Alice's private events", async () => {
            const profile = track(await Profile.open(browser(), dev().url, ALICE, IDENTITY_PAGE));
            const create = (tab: PageHarness, user: number) =>
                tab.page.evaluate((id) => {
                    const w = window as unknown as { harness: { create(options: unknown): string }; identity(id: number): unknown };
                    return w.harness.create(w.identity(id));
                }, user);
            const { alice, bob } = await twoIdentities(profile, create);
            await expectSeparated(dev(), alice, bob);
            // No stream carries both users' channels: each tab's streams are its own, opened with its own subject's token.
            const carried = dev().hub.stats.openStreams.map((stream) => stream.selectors.filter((selector) => selector.includes("App.Models.User")));
            expect(carried.filter((selectors) => selectors.length > 1)).toEqual([]);
        });
    },
);
