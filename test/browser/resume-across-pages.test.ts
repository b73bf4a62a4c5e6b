import { expect, it } from "vitest";
import type { DevServerOptions } from "../../src/dev/server";
import { PageHarness } from "./support/harness";
import { HARNESS_PAGE, harnessPage } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { broadcastNumbered, DEADLINE, numbered, numbersOf, Profile, range, waitForNumber } from "./support/tabs";

// Issue 52 part 2, `resumeAcrossPages`, in Chromium on the dev hub and the reference hub: a page receives a numbered
// stream, the tab navigates (location.href, a full document load) to a page that joins only once the test has
// published the next numbers, then the last ones are published. Exact counts: each number is published once the
// step before it has settled (the next page loaded and not joined; subscribed), so nothing depends on timing.

const ANN = 1;
const BOB = 2;
const CHANNEL = "news";
const NEXT_PAGE = HARNESS_PAGE + "?page=next";

const server: DevServerOptions = {
    app: { users: [{ id: ANN, name: "Ann" }, { id: BOB, name: "Bob" }], csrf: true },
    channels: { "orders.{id}": (user) => user.id === ANN },
    pages: { [HARNESS_PAGE]: harnessPage() },
    distDir: DIST_DIR,
};

/** Render the session's CSRF token into the page's `<head>`, as a Blade layout does (`<meta name="csrf-token">`). */
const renderToken = (tab: PageHarness): Promise<void> => tab.renderCsrfToken();

/** The page's app: Echo created with `options`, `news` joined; resolves once subscribed. */
async function startPage(tab: PageHarness, options: Record<string, unknown>): Promise<void> {
    await renderToken(tab);
    await tab.create(options);
    await tab.join(numbered("public", CHANNEL));
    await tab.waitForSubscribed([CHANNEL], DEADLINE);
}

/** Follow a link in the same tab: `location.href`, resolved once the next document has loaded (its app not started). */
async function navigate(tab: PageHarness, path: string = NEXT_PAGE): Promise<void> {
    const from = tab.page.url();
    await tab.page.evaluate((next) => void (location.href = next), path);
    await tab.page.waitForURL((url) => url.href !== from && url.pathname + url.search === path, DEADLINE);
    await tab.page.waitForFunction(() => typeof (window as unknown as { harness?: unknown }).harness === "object", undefined, DEADLINE);
}

/** A new tab the page of `tab` opens with `window.open` (the harness page, its app not started): its first page, `history.length` 1. */
async function openedTab(tab: PageHarness): Promise<PageHarness> {
    const popup = tab.page.context().waitForEvent("page");
    await tab.page.evaluate((path) => void window.open(path), HARNESS_PAGE + "?page=opened");
    const opened = await popup;
    await opened.waitForFunction(() => typeof (window as unknown as { harness?: unknown }).harness === "object", undefined, DEADLINE);
    return new (PageHarness as unknown as new (context: unknown, page: unknown) => PageHarness)(tab.page.context(), opened);
}

/**
 * The page of `tab` receives 1..10; the tab navigates; 11..20 are published while the next page is loaded and not
 * joined; it joins, then 21..30 are published. Resolves with what each page received.
 */
async function acrossANavigation(
    suite: { dev(): Parameters<typeof broadcastNumbered>[0] },
    tab: PageHarness,
    options: Record<string, unknown>,
    between: () => Promise<void> = async () => undefined,
): Promise<{ previous: number[]; next: number[] }> {
    await startPage(tab, options);
    await broadcastNumbered(suite.dev(), CHANNEL, range(1, 10));
    const previous = numbersOf(await waitForNumber(tab, CHANNEL, 10), CHANNEL);
    await navigate(tab);
    await broadcastNumbered(suite.dev(), CHANNEL, range(11, 20));
    await between();
    await startPage(tab, options);
    await broadcastNumbered(suite.dev(), CHANNEL, range(21, 30));
    const next = numbersOf(await waitForNumber(tab, CHANNEL, 30), CHANNEL);
    return { previous, next };
}

describeInChromium("resumeAcrossPages: nothing lost, nothing twice across a navigation", { server, streamsClosedWithin: DEADLINE.timeout }, (suite) => {
    for (const shareAcrossTabs of [false, true]) {
        const sharing = shareAcrossTabs ? "sharing on: the next page leads the tabs in turn" : "sharing off";
        it(`resumes the next page from the last event the previous page received (${sharing})`, async () => {
            const tab = await suite.open(ANN);
            const { previous, next } = await acrossANavigation(suite, tab, { resumeAcrossPages: true, shareAcrossTabs });
            expect(previous).toEqual(range(1, 10));
            expect(next).toEqual(range(11, 30));
        });

        it(`loses what was published during the navigation without the option (${sharing})`, async () => {
            const tab = await suite.open(ANN);
            const { previous, next } = await acrossANavigation(suite, tab, { shareAcrossTabs });
            expect(previous).toEqual(range(1, 10));
            expect(next).toEqual(range(21, 30));
        });
    }

    it("resumes the tab's first page after a reload (history.length stays 1: the reload is told apart from a new tab)", async () => {
        const tab = await openedTab(await suite.open(ANN));
        await startPage(tab, { resumeAcrossPages: true, shareAcrossTabs: false });
        await broadcastNumbered(suite.dev(), CHANNEL, range(1, 10));
        await waitForNumber(tab, CHANNEL, 10);
        expect(await tab.page.evaluate(() => history.length)).toBe(1);
        await tab.page.reload();
        await tab.page.waitForFunction(() => typeof (window as unknown as { harness?: unknown }).harness === "object", undefined, DEADLINE);
        await broadcastNumbered(suite.dev(), CHANNEL, range(11, 20));
        await startPage(tab, { resumeAcrossPages: true, shareAcrossTabs: false });
        await broadcastNumbered(suite.dev(), CHANNEL, range(21, 30));
        expect(numbersOf(await waitForNumber(tab, CHANNEL, 30), CHANNEL)).toEqual(range(11, 30));
    });

    it("resumes a follower page whose leading tab keeps the stream on the same channel (sharing on)", async () => {
        const profile = suite.track(await Profile.open(suite.browser(), suite.dev().url, ANN));
        await startPage(profile.firstTab, { shareAcrossTabs: true });
        const follower = await profile.openTab();
        const { previous, next } = await acrossANavigation(suite, follower, { resumeAcrossPages: true, shareAcrossTabs: true });
        expect(previous).toEqual(range(1, 10));
        expect(next).toEqual(range(11, 30));
        expect(numbersOf(await profile.firstTab.snapshot(), CHANNEL)).toEqual(range(1, 30));
    });

    it("resumes a follower page whose leading tab holds other channels only (the engine reopens from the page's cursor)", async () => {
        const profile = suite.track(await Profile.open(suite.browser(), suite.dev().url, ANN));
        await renderToken(profile.firstTab);
        await profile.firstTab.create({ shareAcrossTabs: true });
        await profile.firstTab.join(numbered("public", "sports"));
        await profile.firstTab.waitForSubscribed(["sports"], DEADLINE);
        const follower = await profile.openTab();
        const { previous, next } = await acrossANavigation(suite, follower, { resumeAcrossPages: true, shareAcrossTabs: true }, async () => {
            // The next page leaves the sports tab's engine the only stream; that tab receives on while the page loads.
            await broadcastNumbered(suite.dev(), "sports", [1]);
            await waitForNumber(profile.firstTab, "sports", 1);
        });
        expect(previous).toEqual(range(1, 10));
        expect(next).toEqual(range(11, 30));
    });

    it("resumes the page of a leading tab that hands the lead over as it navigates (sharing on)", async () => {
        const profile = suite.track(await Profile.open(suite.browser(), suite.dev().url, ANN));
        const leader = profile.firstTab;
        await startPage(leader, { resumeAcrossPages: true, shareAcrossTabs: true });
        const other = await profile.openTab();
        await renderToken(other);
        await other.create({ shareAcrossTabs: true });
        await other.join(numbered("public", "sports"));
        await other.waitForSubscribed(["sports"], DEADLINE);
        await broadcastNumbered(suite.dev(), CHANNEL, range(1, 10));
        expect(numbersOf(await waitForNumber(leader, CHANNEL, 10), CHANNEL)).toEqual(range(1, 10));
        await navigate(leader);
        await broadcastNumbered(suite.dev(), CHANNEL, range(11, 20));
        // The other tab leads now: it keeps receiving on its own channel.
        await broadcastNumbered(suite.dev(), "sports", [1]);
        await waitForNumber(other, "sports", 1);
        await startPage(leader, { resumeAcrossPages: true, shareAcrossTabs: true });
        await broadcastNumbered(suite.dev(), CHANNEL, [21]);
        // The new leader's engine never forwarded the page's cursor: a catch-up stream of the page's own replays 11..20
        // (share/catch-up.ts) beside the shared stream, which may deliver 21 first. Every number once, in any order.
        await waitForNumber(leader, CHANNEL, 20);
        const received = numbersOf(await waitForNumber(leader, CHANNEL, 21), CHANNEL);
        expect([...received].sort((a, b) => a - b)).toEqual(range(11, 21));
        // The page leaves with 21 its newest event, even when the catch-up's 20 came after it: the next page gets 22 alone.
        await navigate(leader, NEXT_PAGE + "&again=1");
        await startPage(leader, { resumeAcrossPages: true, shareAcrossTabs: true });
        await broadcastNumbered(suite.dev(), CHANNEL, [22]);
        expect(numbersOf(await waitForNumber(leader, CHANNEL, 22), CHANNEL)).toEqual([22]);
    });

    it("gives the next page nothing twice when the tabs' engine resumes from an older cursor than the page's (sharing on; the simulation's seed 1102)", async () => {
        const options = { resumeAcrossPages: true, shareAcrossTabs: true };
        const profile = suite.track(await Profile.open(suite.browser(), suite.dev().url, ANN));
        const sports = profile.firstTab;
        const joinSports = async () => {
            await renderToken(sports);
            await sports.create(options);
            await sports.join(numbered("public", "sports"));
            await sports.waitForSubscribed(["sports"], DEADLINE);
        };
        await joinSports();
        await broadcastNumbered(suite.dev(), "sports", [1]);
        await waitForNumber(sports, "sports", 1);
        const news = await profile.openTab();
        await startPage(news, options);
        await broadcastNumbered(suite.dev(), CHANNEL, range(1, 10));
        expect(numbersOf(await waitForNumber(news, CHANNEL, 10), CHANNEL)).toEqual(range(1, 10));
        // The sports tab navigates: the news tab leads, and the sports tab's next page follows from its cursor (sports 1).
        await navigate(sports);
        await joinSports();
        // The news tab navigates: the sports page leads, its engine from its own cursor, older than news 1..10.
        await navigate(news);
        await broadcastNumbered(suite.dev(), CHANNEL, range(11, 20));
        await startPage(news, options);
        await broadcastNumbered(suite.dev(), CHANNEL, [21]);
        // The shared stream, from sports 1, replays news 1..21; the page's catch-up replays 11..21 beside it, in any order.
        await waitForNumber(news, CHANNEL, 20);
        const received = numbersOf(await waitForNumber(news, CHANNEL, 21), CHANNEL);
        expect([...received].sort((a, b) => a - b)).toEqual(range(11, 21));
    });

    it("replays nothing to the next page after a login as another user (the session's CSRF token was regenerated)", async () => {
        const tab = await suite.open(ANN);
        const { next } = await acrossANavigation(suite, tab, { resumeAcrossPages: true, shareAcrossTabs: false }, async () => {
            // The previous page left its record: what follows is the identity check, not a missing record.
            expect(await tab.page.evaluate(() => Object.keys(sessionStorage).filter((name) => name.startsWith("laravel-echo-mercure:resume:")).length)).toBe(1);
            const status = await tab.page.evaluate((id) => (window as unknown as { harness: { login(id: number): Promise<number> } }).harness.login(id), BOB);
            expect(status).toBe(200);
        });
        expect(next).toEqual(range(21, 30));
    });

    it("replays nothing to a cursor left more than 2 minutes ago", async () => {
        const tab = await suite.open(ANN);
        const { next } = await acrossANavigation(suite, tab, { resumeAcrossPages: true, shareAcrossTabs: false }, async () => {
            // The record as the previous page wrote it, 2 minutes older: the page was left long ago.
            const aged = await tab.page.evaluate(() => {
                const key = Object.keys(sessionStorage).find((name) => name.startsWith("laravel-echo-mercure:resume:"));
                if (key === undefined) return false;
                const record = JSON.parse(sessionStorage.getItem(key)!) as { at: number };
                sessionStorage.setItem(key, JSON.stringify({ ...record, at: record.at - 120_000 }));
                return true;
            });
            expect(aged).toBe(true);
        });
        expect(next).toEqual(range(21, 30));
    });

    it("replays nothing to a new tab the page opens, into which Chromium copied its sessionStorage", async () => {
        const tab = await suite.open(ANN);
        await startPage(tab, { resumeAcrossPages: true, shareAcrossTabs: false });
        await broadcastNumbered(suite.dev(), CHANNEL, range(1, 10));
        await waitForNumber(tab, CHANNEL, 10);
        // The tab goes to the next page (which leaves a record), and that page opens a new tab of itself.
        await navigate(tab);
        const newTab = await openedTab(tab);
        const copied = await newTab.page.evaluate(() => Object.keys(sessionStorage).filter((name) => name.startsWith("laravel-echo-mercure:resume:")).length);
        expect(copied).toBe(1); // Chromium copied the record: the new tab must tell itself apart.
        await broadcastNumbered(suite.dev(), CHANNEL, range(11, 20));
        await startPage(newTab, { resumeAcrossPages: true, shareAcrossTabs: false });
        await broadcastNumbered(suite.dev(), CHANNEL, range(21, 30));
        expect(numbersOf(await waitForNumber(newTab, CHANNEL, 30), CHANNEL)).toEqual(range(21, 30));
    });

    for (const shareAcrossTabs of [false, true]) {
        it(`opens the next page's stream beside its auth request, which receives while the answer is held and is kept (issue 53, sharing ${shareAcrossTabs ? "on" : "off"})`, async () => {
            const tab = await suite.open(ANN);
            const orders = "private-orders.1";
            const options = { resumeAcrossPages: true, shareAcrossTabs };
            await renderToken(tab);
            await tab.create(options);
            await tab.join(numbered("private", "orders.1"));
            await tab.waitForSubscribed([orders], DEADLINE);
            await broadcastNumbered(suite.dev(), orders, [1]);
            await waitForNumber(tab, orders, 1);
            await navigate(tab);
            // The next page's auth request is held until the test lets it go; its streams are counted.
            let release = (): void => undefined;
            const held = new Promise<void>((resolve) => (release = resolve));
            let asked = 0;
            await tab.page.route("**/broadcasting/auth", async (route) => {
                asked++;
                await held;
                await route.continue();
            });
            const streams: string[] = [];
            tab.page.on("request", (request) => void (request.resourceType() === "eventsource" && streams.push(request.url())));
            await renderToken(tab);
            await tab.create(options);
            await tab.join(numbered("private", "orders.1"));
            await broadcastNumbered(suite.dev(), orders, [2]);
            // 2 arrives with the answer held: the stream opened beside the request, on the cookie the previous page left.
            const early = await waitForNumber(tab, orders, 2);
            expect(numbersOf(early, orders)).toEqual([2]);
            expect(early.subscribed).toEqual([]); // Subscribed once the answer grants the channel.
            expect(asked).toBe(1);
            expect(streams).toHaveLength(1);
            release();
            await tab.waitForSubscribed([orders], DEADLINE);
            await broadcastNumbered(suite.dev(), orders, [3]);
            expect(numbersOf(await waitForNumber(tab, orders, 3), orders)).toEqual([2, 3]);
            expect(streams).toHaveLength(1); // The answer granted the same channel: the stream was kept.
            expect(asked).toBe(1);
            await tab.page.unroute("**/broadcasting/auth");
        });
    }
});
