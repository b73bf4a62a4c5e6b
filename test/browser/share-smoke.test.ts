import { expect, it } from "vitest";
import { payloadsOf } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { waitUntil } from "./support/wait";

const ANN = 1;
/** Generous: a loaded two-core machine. */
const DEADLINE = { timeout: 30_000 };

/** One Chromium and one dev stack (keeping history) for the suite, restarted after each test. */
const SUITE: BrowserSuiteOptions = {
    server: {
        hub: { history: true },
        app: { users: [{ id: ANN, name: "Ann" }] },
        channels: { "orders.{id}": (user) => user.id === ANN, "chat.{id}": (user) => user.id === ANN },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
    restartAfterEach: true,
};

/*
 * A smoke test of sharing across tabs (issue 17): two pages of one user in one browser context. The
 * acceptance suite (test/browser/tabs*.test.ts) is the full check; this one only shows the wiring works in
 * Chromium with the built bundle: one hub stream for both tabs, each tab receiving its own private channel,
 * and the second tab carrying on when the leading one closes.
 */
describeInChromium("two tabs share one hub connection in Chromium", SUITE, ({ dev, open, track }) => {
    it("holds one stream for both tabs, delivers each tab its own channel, and survives closing the leading tab", async () => {
        const first = await open(ANN);
        await first.create();
        await first.join({ kind: "private", name: "orders.1", events: [".placed"] });
        await first.waitForSubscribed(["private-orders.1"], DEADLINE);
        const second = track(await first.openTab());
        await second.create();
        await second.join({ kind: "private", name: "chat.1", events: [".said"] });
        await second.waitForSubscribed(["private-chat.1"], DEADLINE);
        await waitUntil("one hub stream for both tabs", () => dev().hub.stats.openConnections === 1, { ...DEADLINE, describe: () => dev().hub.stats.openConnections });

        await dev().broadcast({ channels: ["private-orders.1"], event: "placed", payload: { n: 1 } });
        await dev().broadcast({ channels: ["private-chat.1"], event: "said", payload: { n: 2 } });
        await first.waitFor("the order", (s) => payloadsOf(s, "private-orders.1").length === 1, DEADLINE);
        await second.waitFor("the chat", (s) => payloadsOf(s, "private-chat.1").length === 1, DEADLINE);
        expect(payloadsOf(await first.snapshot(), "private-chat.1")).toEqual([]);
        expect(payloadsOf(await second.snapshot(), "private-orders.1")).toEqual([]);

        // The leading tab closes: the other takes over and resumes from its cursor (the hub keeps history).
        await first.closeTab();
        await dev().broadcast({ channels: ["private-chat.1"], event: "said", payload: { n: 3 } });
        const after = await second.waitFor("the chat after the handover", (s) => payloadsOf(s, "private-chat.1").length === 2, DEADLINE);
        expect(payloadsOf(after, "private-chat.1")).toEqual([{ n: 2 }, { n: 3 }]);
        expect(after.errors).toEqual([]); // The user closed a tab: no failure, and the next stream opened at once.
        await waitUntil("one hub stream left", () => dev().hub.stats.openConnections === 1, { ...DEADLINE, describe: () => dev().hub.stats.openConnections });
    });

    it("authorizes a second tab's channel beside the leading tab's own while tab sharing downloads, and answers that tab from that grant (issue 53)", async () => {
        const earlier = dev().app.stats.authRequests.length;
        const auth = () => dev().app.stats.authRequests.slice(earlier).map((request) => [request.channelNames, request.status]);
        const first = await open(ANN);
        await first.create();
        await first.join({ kind: "private", name: "orders.1", events: [".placed"] });
        await first.waitForSubscribed(["private-orders.1"], DEADLINE);
        // Tab sharing's client is held back for both pages until the union's request was seen: only the ring can send it.
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        await first.context.route("**/dist/chunks/share-platform-*.js", async (route) => {
            await held;
            await route.continue();
        });
        const second = track(await first.openTab());
        await second.create();
        await second.join({ kind: "private", name: "chat.1", events: [".said"] });
        await waitUntil("the union's request", () => auth().length === 2, { ...DEADLINE, describe: () => JSON.stringify(auth()) });
        release();
        await second.waitForSubscribed(["private-chat.1"], DEADLINE);
        await dev().broadcast({ channels: ["private-chat.1"], event: "said", payload: { n: 1 } });
        await second.waitFor("the chat", (s) => payloadsOf(s, "private-chat.1").length === 1, DEADLINE);
        // The leading tab's own request, then the union; the engine asked nothing more for the second tab.
        expect(auth()).toEqual([
            [["private-orders.1"], 200],
            [["private-orders.1", "private-chat.1"], 200],
        ]);
        await waitUntil("one hub stream for both tabs", () => dev().hub.stats.openConnections === 1, { ...DEADLINE, describe: () => dev().hub.stats.openConnections });
        expect((await second.snapshot()).errors).toEqual([]);
    });
});
