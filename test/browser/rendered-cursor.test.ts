import { beforeEach, expect, it } from "vitest";
import type { PageHarness } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { broadcastNumbered, numbered, numbersOf, range, startTab, waitForNoStreams, waitForNumber } from "./support/tabs";

// Issue 52, part 1: a multi-page app's next page, rendered by Laravel with the hub's last event id in its
// `<link rel="mercure" last-event-id>` (the dev stack's stand-in asks the hub's subscriptions API, as the docs'
// middleware does), receives every event published after its render, once, though its scripts join later and `host`
// is set. A real navigation in Chromium: the page receives 1..3, navigates, 4..8 are published while the next page has
// loaded and not joined yet, then it joins and 9..10 follow. Deterministic: each step waits for the previous one.

const ANN = 1;
const ORDERS = "private-orders.1";
/** The page Laravel renders with the hub's `<link rel="mercure" last-event-id>` in its `<head>`. */
const RENDERED = "/rendered.html";

const SUITE: BrowserSuiteOptions = {
    server: {
        app: { users: [{ id: ANN, name: "Ann" }] },
        channels: { "orders.{id}": (user) => user.id === ANN },
        pages: {
            [HARNESS_PAGE]: harnessPage(),
            [RENDERED]: (page) => harnessPage().replace("<title>", () => `${page.hubLink}\n<title>`),
        },
        distDir: DIST_DIR,
    },
};

describeInChromium("a page rendered with the hub's last event id, host set, in Chromium", SUITE, ({ dev, open }) => {
    beforeEach(async () => {
        await waitForNoStreams(dev());
        dev().hub.resetStats();
    });

    /** Join the numbered private channel on `tab`'s current page, as its scripts do once loaded. */
    const join = (tab: PageHarness, shareAcrossTabs: boolean): Promise<string> =>
        startTab(tab, [numbered("private", "orders.1")], { host: dev().hubUrl, shareAcrossTabs });

    /**
     * `tab` has received 1..3 on its page; it navigates to `path`, 4..8 are broadcast while the next page has loaded and
     * not joined, then it joins and 9..10 follow. Resolves with what the next page received, once it has 10.
     */
    async function navigate(tab: PageHarness, path: string, shareAcrossTabs: boolean): Promise<number[]> {
        await tab.page.goto(dev().url + path);
        await broadcastNumbered(dev(), ORDERS, range(4, 8));
        await join(tab, shareAcrossTabs);
        await broadcastNumbered(dev(), ORDERS, range(9, 10));
        return numbersOf(await waitForNumber(tab, ORDERS, 10), ORDERS);
    }

    for (const shareAcrossTabs of [false, true]) {
        const sharing = `shareAcrossTabs ${String(shareAcrossTabs)}`;

        it(`a lone tab: every event published after the render arrives once, nothing from before (${sharing})`, async () => {
            const tab = await open(ANN);
            await join(tab, shareAcrossTabs);
            await broadcastNumbered(dev(), ORDERS, range(1, 3));
            await waitForNumber(tab, ORDERS, 3);
            expect(await navigate(tab, RENDERED, shareAcrossTabs)).toEqual(range(4, 10));
            const first = dev().hub.stats.subscribeConnections.at(-1)!;
            expect(new URLSearchParams(first.query).get("last_event_id") ?? first.lastEventId).toMatch(/^urn:uuid:/);
        });

        it(`a lone tab on a page rendered without the cursor loses what was published before it joined (${sharing})`, async () => {
            const tab = await open(ANN);
            await join(tab, shareAcrossTabs);
            await broadcastNumbered(dev(), ORDERS, range(1, 3));
            await waitForNumber(tab, ORDERS, 3);
            expect(await navigate(tab, HARNESS_PAGE, shareAcrossTabs)).toEqual([9, 10]);
        });
    }

    /** Two tabs of Ann sharing one connection, the first leading, both joined and both past 1..3. */
    async function twoTabs(): Promise<[PageHarness, PageHarness]> {
        const leader = await open(ANN);
        await join(leader, true);
        const follower = await leader.openTab();
        await join(follower, true);
        await broadcastNumbered(dev(), ORDERS, range(1, 3));
        await waitForNumber(leader, ORDERS, 3);
        await waitForNumber(follower, ORDERS, 3);
        return [leader, follower];
    }

    it("a follower whose leader keeps the stream: the follower's next page gets the gap once, from its rendered cursor", async () => {
        const [leader, follower] = await twoTabs();
        expect(await navigate(follower, RENDERED, true)).toEqual(range(4, 10));
        expect(numbersOf(await waitForNumber(leader, ORDERS, 10), ORDERS)).toEqual(range(1, 10));
    });

    it("a leader that hands over while it navigates: its next page gets the gap once, the other tab loses nothing", async () => {
        const [leader, other] = await twoTabs();
        expect(await navigate(leader, RENDERED, true)).toEqual(range(4, 10));
        expect(numbersOf(await waitForNumber(other, ORDERS, 10), ORDERS)).toEqual(range(1, 10));
    });
});
