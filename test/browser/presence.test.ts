import { expect, it } from "vitest";
import type { DevServerOptions } from "../../src/dev/server";
import { PageHarness, presenceOf, type ChannelSpec, type HarnessSnapshot } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuite, type BrowserSuiteOptions } from "./support/suite";
import { sleep, waitUntil } from "./support/wait";

const ANN = 1;
const BOB = 2;
const ROOM = "presence-room.1";
/** The room as the pages join it, recording presence callbacks and the test's markers. */
const ROOM_SPEC: ChannelSpec = { kind: "presence", name: "room.1", events: [".marker"] };
/** Generous: a loaded two-core machine, a browser reconnecting after a hub restart. */
const DEADLINE = { timeout: 30_000 };

/**
 * What one suite needs: a dev stack whose room callback returns the member info (as in routes/channels.php),
 * restarted after each test, and every stream of a test closed before the next one.
 */
function stackOptions(extra: Pick<DevServerOptions, "hub" | "app"> = {}): BrowserSuiteOptions {
    return {
        server: {
            hub: extra.hub,
            app: { users: [{ id: ANN, name: "Ann" }, { id: BOB, name: "Bob" }], ...extra.app },
            channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) },
            pages: { [HARNESS_PAGE]: harnessPage() },
            distDir: DIST_DIR,
        },
        restartAfterEach: true,
        streamsClosedWithin: DEADLINE.timeout,
    };
}

/** The helpers the tests of a suite share, on that suite's Chromium and dev stack. */
function presenceSuite({ dev, open, track }: BrowserSuite) {
    let markers = 0;

    /**
     * A user in a fresh context (one cookie jar per user), with Echo created and the room joined. `leaveDelay: 0`
     * unless `create` says otherwise: these tests assert each leave as it happens, and that none happens, which a
     * held-back leave would hide.
     */
    async function enter(userId: number, create: Record<string, unknown> = {}): Promise<PageHarness> {
        const page = await open(userId);
        await page.create({ leaveDelay: 0, ...create });
        await page.join(ROOM_SPEC);
        return page;
    }

    /** Another tab of the user of `page`, with Echo created and the room joined. */
    async function secondTab(page: PageHarness, create: Record<string, unknown> = {}): Promise<PageHarness> {
        const tab = track(await page.openTab());
        await tab.create({ leaveDelay: 0, ...create });
        await tab.join(ROOM_SPEC);
        return tab;
    }

    /** Wait until the page's here() fired. */
    function seeded(page: PageHarness): Promise<HarnessSnapshot> {
        return page.waitFor("here() on the room", (s) => presenceOf(s, ROOM).some((line) => line.startsWith("here ")), DEADLINE);
    }

    /**
     * Wait until the hub holds exactly `streams` streams and each of `pages` has received a marker broadcast
     * after that, with no stream opened meanwhile. Every subscription event the hub dispatched before then
     * travelled on a stream that is still the page's only one (so it arrived before the marker), or on one
     * the page had already retired: the presence callbacks the pages recorded are final.
     */
    async function quiesce(pages: PageHarness[], streams: number): Promise<void> {
        for (let attempt = 0; attempt < 20; attempt++) {
            await waitUntil(`${streams} open streams at the hub`, () => dev().hub.stats.openConnections === streams, {
                ...DEADLINE,
                describe: () => dev().hub.stats.openConnections,
            });
            const connections = dev().hub.stats.subscribeConnections.length;
            const n = ++markers;
            await dev().broadcast({ channels: [ROOM], event: "marker", payload: { n } });
            for (const page of pages) {
                await page.waitFor(`marker ${n}`, (s) => s.events.some((e) => (e.payload as { n?: number }).n === n), DEADLINE);
            }
            if (dev().hub.stats.subscribeConnections.length === connections && dev().hub.stats.openConnections === streams) return;
        }
        throw new Error("The pages' streams never stayed still long enough to read their presence callbacks.");
    }

    /** How many snapshot requests a page made. */
    function snapshotRequests(page: PageHarness): Promise<number> {
        return page.page.evaluate(
            () => performance.getEntriesByType("resource").filter((entry) => entry.name.includes("/.well-known/mercure/subscriptions/exact/")).length,
        );
    }

    /** How many auth requests a page made. */
    function authRequests(page: PageHarness): Promise<number> {
        return page.page.evaluate(() => performance.getEntriesByType("resource").filter((entry) => entry.name.endsWith("/broadcasting/auth")).length);
    }

    return { dev, enter, secondTab, seeded, quiesce, snapshotRequests, authRequests };
}

describeInChromium("presence channels in Chromium (built bundle)", stackOptions(), (browserSuite) => {
    const suite = presenceSuite(browserSuite);
    const { dev, enter, secondTab, seeded, quiesce, snapshotRequests } = suite;

    it("lists both users in here(), reports joining and leaving, and shows a user with two tabs as one member", async () => {
        const ann = await enter(ANN);
        expect(presenceOf(await seeded(ann), ROOM)).toEqual(["here Ann"]);
        const bob = await enter(BOB);
        expect(presenceOf(await seeded(bob), ROOM)).toEqual(["here Ann,Bob"]);
        await ann.waitFor("joining Bob", (s) => presenceOf(s, ROOM).includes("joining Bob"), DEADLINE);

        // Ann opens a second tab: one member still, for everyone. Her tabs share one hub stream (shareAcrossTabs).
        const annTab = await secondTab(ann);
        // Her first tab led alone on a stream of its own; it moves to the engine's stream now (issue 31), a new subscription
        // of Ann's, which the hub may list after Bob's: here() lists both, in the hub's order.
        expect(presenceOf(await seeded(annTab), ROOM)).toEqual([expect.stringMatching(/^here (Ann,Bob|Bob,Ann)$/)]);
        await quiesce([ann, annTab, bob], 2);
        expect(presenceOf(await ann.snapshot(), ROOM)).toEqual(["here Ann", "joining Bob"]);
        expect(presenceOf(await bob.snapshot(), ROOM)).toEqual(["here Ann,Bob"]);
        expect(await bob.members("room.1")).toEqual(["Ann", "Bob"]);

        // Closing one of Ann's tabs is no news; closing the last one is.
        await annTab.closeTab();
        await quiesce([ann, bob], 2);
        expect(presenceOf(await ann.snapshot(), ROOM)).toEqual(["here Ann", "joining Bob"]);
        expect(presenceOf(await bob.snapshot(), ROOM)).toEqual(["here Ann,Bob"]);
        await ann.closeTab();
        await bob.waitFor("leaving Ann", (s) => presenceOf(s, ROOM).includes("leaving Ann"), DEADLINE);
        await quiesce([bob], 1);
        const last = await bob.snapshot();
        expect(presenceOf(last, ROOM)).toEqual(["here Ann,Bob", "leaving Ann"]);
        expect(await bob.members("room.1")).toEqual(["Bob"]);
        expect(last.errors).toEqual([]);
        expect(await snapshotRequests(bob)).toBe(1);
    });

    it("re-seeds after a hub restart without a storm: nobody leaves or joins, and the member lists stay whole", async () => {
        const ann = await enter(ANN);
        await seeded(ann);
        const bob = await enter(BOB);
        await seeded(bob);
        await quiesce([ann, bob], 2);

        await dev().stop();
        try {
            await ann.waitForStatus("reconnecting", DEADLINE);
            await bob.waitForStatus("reconnecting", DEADLINE);
        } finally {
            await dev().restart();
        }
        for (const page of [ann, bob]) {
            await page.waitForStatus("connected", DEADLINE);
            await waitUntil("the re-seed's snapshot", async () => (await snapshotRequests(page)) >= 2, DEADLINE);
        }
        await quiesce([ann, bob], 2);
        const annSeen = await ann.snapshot();
        const bobSeen = await bob.snapshot();
        expect(presenceOf(annSeen, ROOM)).toEqual(["here Ann", "joining Bob"]);
        expect(presenceOf(bobSeen, ROOM)).toEqual(["here Ann,Bob"]);
        expect(await ann.members("room.1")).toEqual(["Ann", "Bob"]);
        expect(await bob.members("room.1")).toEqual(["Ann", "Bob"]);
        // The re-seed happened through a real snapshot each (checked above), and nothing failed.
        // hub_unreachable is a true report if the hub stayed down past a native reconnect (issue 30's probe).
        expect([...annSeen.errors, ...bobSeen.errors].filter((error) => error.code !== "stream_error" && error.code !== "hub_unreachable")).toEqual([]);
    });

    it("says nothing after a hub restart about a user who comes back only after the others re-seeded", async () => {
        const ann = await enter(ANN);
        await seeded(ann);
        const bob = await enter(BOB);
        await seeded(bob);
        await quiesce([ann, bob], 2);

        await dev().stop();
        try {
            await ann.waitForStatus("reconnecting", DEADLINE);
            await bob.closeTab(); // Bob's page is gone for now; his cookies stay in his context.
        } finally {
            await dev().restart();
        }
        await ann.waitForStatus("connected", DEADLINE);
        await waitUntil("Ann's re-seed", async () => (await snapshotRequests(ann)) >= 2, DEADLINE);
        // Ann's snapshot did not hold Bob: he lingers (the leave grace) and is back well within it.
        const bobAgain = await secondTab(bob);
        expect(presenceOf(await seeded(bobAgain), ROOM)).toEqual(["here Ann,Bob"]);
        await quiesce([ann, bobAgain], 2);
        expect(presenceOf(await ann.snapshot(), ROOM)).toEqual(["here Ann", "joining Bob"]);
        expect(await ann.members("room.1")).toEqual(["Ann", "Bob"]);
    });

    it("reports, after a hub restart, only who really left meanwhile: once, after the re-seed", async () => {
        const ann = await enter(ANN);
        await seeded(ann);
        const bob = await enter(BOB);
        await seeded(bob);
        await quiesce([ann, bob], 2);

        await dev().stop();
        try {
            await ann.waitForStatus("reconnecting", DEADLINE);
            await bob.close(); // Bob leaves while the hub is down: no subscription event will say so.
        } finally {
            await dev().restart();
        }
        await ann.waitForStatus("connected", DEADLINE);
        // Bob lingers for the leave grace (he might have been reconnecting), then leaves once.
        const left = await ann.waitFor("leaving Bob", (s) => presenceOf(s, ROOM).includes("leaving Bob"), DEADLINE);
        expect(await snapshotRequests(ann)).toBeGreaterThanOrEqual(2);
        await quiesce([ann], 1);
        expect(presenceOf(await ann.snapshot(), ROOM)).toEqual(["here Ann", "joining Bob", "leaving Bob"]);
        expect(await ann.members("room.1")).toEqual(["Ann"]);
        expect(left.errors.filter((error) => error.code !== "stream_error" && error.code !== "hub_unreachable")).toEqual([]);
    });
});

// 20 s cookies; the dev hub ends each stream 1 s before its token expires (fraction fixed at 100 %, a 1 s
// dispatch timeout), the reference hub from 0.8 × its life − 1 s on, and the connectors, told so through hubTimeouts,
// renew 13.5 s after their last auth: 1.5 s before the earliest close. (With 10 s cookies the margin is 1 s, which a
// renewal under the load of a busy 2-core machine overran once on the reference hub: Bob saw Ann leave and join.)
const CHURN = stackOptions({ hub: { dispatchTimeout: 1_000, lifetimeFraction: () => 1 }, app: { expiresIn: 20 } });

describeInChromium("presence through stream churn and cookie renewal in Chromium", CHURN, (browserSuite) => {
    const suite = presenceSuite(browserSuite);
    const { dev, enter, seeded, quiesce, snapshotRequests, authRequests } = suite;
    const create = { hubTimeouts: { dispatch: 1_000 } };

    it("shows Bob no leaving or joining while Ann joins and leaves 10 other channels and renews her cookie", async () => {
        const ann = await enter(ANN, create);
        await seeded(ann);
        const bob = await enter(BOB, create);
        await seeded(bob);
        await quiesce([ann, bob], 2);
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        const authsBefore = await authRequests(ann);
        const bobAuthsBefore = await authRequests(bob);

        for (let cycle = 0; cycle < 10; cycle++) {
            if (cycle === 5) {
                // Halfway, Ann's cookie is renewed on its timer: the only auth request, since her public joins and
                // her leaves need none while the cookie is fresh (issue 13).
                await waitUntil("Ann's cookie renewal", async () => (await authRequests(ann)) > authsBefore, DEADLINE);
            }
            const side = `side.${cycle}`;
            await ann.join({ kind: "public", name: side });
            await ann.waitForSubscribed([side], DEADLINE);
            const before = dev().hub.stats.subscribeConnections.length;
            await ann.leave(side);
            await waitUntil("the reopen after leaving", async () => dev().hub.stats.subscribeConnections.length > before, DEADLINE);
            await sleep(100);
        }
        await quiesce([ann, bob], 2);

        const annSeen = await ann.snapshot();
        const bobSeen = await bob.snapshot();
        expect(presenceOf(bobSeen, ROOM)).toEqual(["here Ann,Bob"]);
        expect(presenceOf(annSeen, ROOM)).toEqual(["here Ann", "joining Bob"]);
        expect(await bob.members("room.1")).toEqual(["Ann", "Bob"]);
        // Each join and each leave was a new connection to the hub, so Bob's stream saw Ann's connection change 20+
        // times. A renewal reopens too, unless a join or leave of the same moment carried it (one stream for both: a
        // CI run counted exactly 20); nothing else reopened.
        const renewals = (await authRequests(ann)) - authsBefore + ((await authRequests(bob)) - bobAuthsBefore);
        const reopens = dev().hub.stats.subscribeConnections.length - connectionsBefore;
        expect(reopens).toBeGreaterThanOrEqual(20);
        expect(reopens).toBeLessThanOrEqual(20 + renewals);
        // None of the reopens fetched the snapshot again.
        expect([await snapshotRequests(ann), await snapshotRequests(bob)]).toEqual([1, 1]);
        expect([...annSeen.errors, ...bobSeen.errors]).toEqual([]);
        expect(dev().hub.stats.expiredStreams).toBe(0);
    }, 120_000);
});
