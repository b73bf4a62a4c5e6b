import { createHash } from "node:crypto";
import { beforeEach, expect, it } from "vitest";
import { presenceOf } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { broadcastNumbered, DEADLINE, mainStreams, numbered, numbersOf, Profile, startTab, topicOf, waitForMainStreams, waitForReopened, waitForNoStreams, waitForNumber, whisperStreams } from "./support/tabs";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { waitUntil } from "./support/wait";
import { DEFAULT_LEAVE_DELAY } from "../../src/presence/roster";

// Issues 28 and 29 in Chromium: what the tabs' buses carry, a tab frozen then closed without pagehide, a leader that
// closes while a follower is in a presence room, and the HTTP/1.1 connection budget of every tab together.

const ANN = 1;
const BOB = 2;
/** The gap forced between the old leader's stream end and the next leader's subscription (see the test). */
const HANDOVER_GAP_MS = 1_500;
/**
 * How long after a user's last tab closed others hear `leaving` at the latest, as docs/tabs-and-connections.md states:
 * the default leaveDelay, plus the hub noticing the closed connection and delivering its event (far less on a quiet
 * machine; room for a loaded one).
 */
const LEAVE_BOUND_MS = DEFAULT_LEAVE_DELAY + 5_000;

/** `window` as these tests extend it (type-only). */
type TabWindow = {
    heardOnBus?: string[];
    harness: { echo: { private(name: string): { listenForWhisper(event: string, callback: (data: unknown) => void): unknown } } };
};

const SUITE: BrowserSuiteOptions = {
    server: {
        app: {
            users: [
                { id: ANN, name: "Ann" },
                { id: BOB, name: "Bob" },
            ],
            encryptionKey: "base64:" + createHash("sha256").update("mercure-tab-safety-test").digest("base64"),
        },
        channels: {
            "orders.{id}": () => true,
            "chat.{id}": () => true,
            "vault.{id}": () => true,
            "typing.{id}": () => true,
            "lobby.{id}": (user) => ({ id: user.id, name: user.name }),
        },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("tab sharing: safe and robust in Chromium", SUITE, ({ browser, dev, track }) => {
    beforeEach(async () => {
        await waitForNoStreams(dev());
        dev().hub.resetStats();
    });

    async function profile(userId: number): Promise<Profile> {
        return track(await Profile.open(browser(), dev().url, userId));
    }

    it("issue 28: a tab never hears another tab's events or keys on any BroadcastChannel of the page", async () => {
        const ann = await profile(ANN);
        const a = ann.firstTab;
        await startTab(a, [numbered("private", "orders.1"), numbered("encrypted", "vault.1")]);
        // Tab B records every message any BroadcastChannel of its page hears (the link's bus, its inbox), as a script of
        // the origin could; installed before its page's scripts run.
        await a.page.context().addInitScript(() => {
            const heard: string[] = ((window as unknown as TabWindow).heardOnBus = []);
            const Native = window.BroadcastChannel;
            window.BroadcastChannel = class extends Native {
                constructor(name: string) {
                    super(name);
                    this.addEventListener("message", (event) => heard.push(JSON.stringify(event.data, (_key, value: unknown) => (value instanceof Map ? [...value] : value))));
                }
            };
        });
        const b = await ann.openTab();
        await startTab(b, [numbered("private", "chat.1")]);
        await dev().broadcast({ channels: ["private-orders.1"], event: "numbered", payload: { n: 1, secret: "for-tab-a" } });
        await dev().broadcast({ channels: ["private-encrypted-vault.1"], event: "numbered", payload: { n: 1, text: "sealed" } });
        await broadcastNumbered(dev(), "private-chat.1", [1]);
        await waitForNumber(a, "private-orders.1", 1);
        await waitForNumber(a, "private-encrypted-vault.1", 1);
        await waitForNumber(b, "private-chat.1", 1);
        const heard = (await b.page.evaluate(() => (window as unknown as TabWindow).heardOnBus ?? [])).join("\n");
        expect(heard).toContain("private-chat.1");
        for (const secret of ["for-tab-a", "orders.1", "vault.1", '"jwk":{']) expect(heard).not.toContain(secret);
    });

    it("issue 29: a follower frozen (Page Lifecycle, via CDP) then closed without pagehide is dropped by the leader within the bound", async () => {
        const ann = await profile(ANN);
        await startTab(ann.firstTab, [numbered("private", "orders.1")]);
        const b = await ann.openTab();
        await startTab(b, [numbered("private", "chat.2")]);
        await waitForMainStreams(dev(), 1, ["private-orders.1", "private-chat.2"]);
        // A discarded tab runs nothing more, and Chromium may still run a frozen page's pagehide on close: so the tab is
        // first made mute (whatever it posts from now on, its bye included, goes nowhere), then frozen, then closed.
        await b.page.evaluate(() => {
            BroadcastChannel.prototype.postMessage = () => undefined;
        });
        const session = await b.page.context().newCDPSession(b.page);
        await session.send("Page.setWebLifecycleState", { state: "frozen" });
        const closedAt = Date.now();
        await b.page.close({ runBeforeUnload: false });
        // Dropped within two probe periods (20 s); the real stream then no longer carries its channel.
        await waitUntil(
            "the leader to drop the closed tab's channel",
            () => {
                const streams = mainStreams(dev());
                return streams.length === 1 && !streams[0]!.selectors.includes(topicOf("private-chat.2")) && streams[0]!.selectors.includes(topicOf("private-orders.1"));
            },
            { timeout: 40_000, describe: () => dev().hub.stats.openStreams },
        );
        // Dropped by the liveness probe, not by a message: not before one probe period (10 s), within two and a reopen.
        expect(Date.now() - closedAt).toBeGreaterThan(9_000);
        await broadcastNumbered(dev(), "private-orders.1", [1]);
        expect(numbersOf(await waitForNumber(ann.firstTab, "private-orders.1", 1), "private-orders.1")).toEqual([1]);
    }, 60_000);

    it("issue 29: the leader closes while a follower is in a presence room: that room sees no leave or join of its own user", async () => {
        const bob = await profile(BOB);
        await startTab(bob.firstTab, [{ kind: "presence", name: "lobby.7" }]);
        const ann = await profile(ANN);
        // leaveDelay: 0, so that a leave of Ann in her own follower's room would show, not be held back.
        await startTab(ann.firstTab, [{ kind: "presence", name: "lobby.7" }], { leaveDelay: 0 });
        const follower = await ann.openTab();
        await startTab(follower, [{ kind: "presence", name: "lobby.7" }], { leaveDelay: 0 });
        await waitUntil("Ann's second tab to list Ann and Bob", async () => JSON.stringify(await follower.members("lobby.7")) === '["Ann","Bob"]', DEADLINE);
        const before = presenceOf(await follower.snapshot(), "presence-lobby.7").length;
        await ann.firstTab.closeTab();
        // The follower leads now: its stream is open again, and a later join (Bob's second tab) is a barrier.
        await waitForMainStreams(dev(), 2, ["presence-lobby.7"]);
        const bobB = await bob.openTab();
        await startTab(bobB, [{ kind: "presence", name: "lobby.7" }]);
        await broadcastNumbered(dev(), "presence-lobby.7", [1]);
        const after = presenceOf(await follower.snapshot(), "presence-lobby.7").slice(before);
        expect(after.filter((line) => line.includes("Ann"))).toEqual([]);
        expect(await follower.members("lobby.7")).toEqual(["Ann", "Bob"]);
    });

    it("issue 29: the leader closes while its user has another tab in a presence room: another user sees no leave or join, and a leave within the bound once the last tab closes", async () => {
        const lobby = numbered("presence", "lobby.8");
        const bob = await profile(BOB);
        await startTab(bob.firstTab, [lobby]); // The default leaveDelay.
        const ann = await profile(ANN);
        await startTab(ann.firstTab, [lobby]);
        const follower = await ann.openTab();
        await startTab(follower, [lobby]);
        await bob.firstTab.waitFor("joining Ann at Bob's", (s) => presenceOf(s, "presence-lobby.8").includes("joining Ann"), DEADLINE);
        await waitForMainStreams(dev(), 2, ["presence-lobby.8"]);
        // The next leader's stream opens HANDOVER_GAP_MS after the old one ended (a slow network), not the tens of ms
        // measured here: far inside the default leaveDelay, and what makes `leaving` certain without it.
        await ann.firstTab.page.context().route(
            (url) => url.pathname === "/.well-known/mercure",
            async (route) => {
                await new Promise((resolve) => setTimeout(resolve, HANDOVER_GAP_MS));
                await route.continue();
            },
        );
        const before = presenceOf(await bob.firstTab.snapshot(), "presence-lobby.8").length;
        const since = dev().hub.stats.subscribeConnections.length;
        await ann.firstTab.closeTab();
        // The follower leads now: its stream is open again, and a broadcast after it is a barrier at Bob's.
        await waitForReopened(dev(), since, ["presence-lobby.8"]);
        await waitForMainStreams(dev(), 2, ["presence-lobby.8"]);
        await broadcastNumbered(dev(), "presence-lobby.8", [1]);
        await waitForNumber(bob.firstTab, "presence-lobby.8", 1);
        expect(presenceOf(await bob.firstTab.snapshot(), "presence-lobby.8").slice(before)).toEqual([]);
        expect(await bob.firstTab.members("lobby.8")).toEqual(["Ann", "Bob"]);

        // Ann's last tab closes: Bob hears it once, after the delay and within the documented bound.
        const closedAt = Date.now();
        await follower.closeTab();
        const final = await bob.firstTab.waitFor("leaving Ann at Bob's", (s) => presenceOf(s, "presence-lobby.8").includes("leaving Ann"), { timeout: LEAVE_BOUND_MS });
        expect(Date.now() - closedAt).toBeGreaterThan(DEFAULT_LEAVE_DELAY / 2);
        expect(presenceOf(final, "presence-lobby.8").slice(before)).toEqual(["leaving Ann"]);
        expect(final.errors).toEqual([]);
    }, 60_000);

    it("issue 29: over HTTP/1.1, two tabs with three whisper channels each: the main stream connects, whispers fit the budget, the rest is reported", async () => {
        const ann = await profile(ANN);
        const tabs = [ann.firstTab, await ann.openTab()];
        for (const [t, tab] of tabs.entries()) {
            await startTab(tab, [0, 1, 2].map((i) => numbered("private", `typing.${t}${i}`)));
            await tab.page.evaluate((t) => {
                for (const i of [0, 1, 2]) (window as unknown as TabWindow).harness.echo.private(`typing.${t}${i}`).listenForWhisper("typing", () => undefined);
            }, t);
        }
        await waitUntil("four whisper streams and the main stream at the hub", () => whisperStreams(dev()).length === 4 && mainStreams(dev()).length === 1, {
            ...DEADLINE,
            describe: () => dev().hub.stats.openStreams,
        });
        const limited = async () => (await Promise.all(tabs.map((tab) => tab.snapshot()))).flatMap((snapshot) => snapshot.errors.filter((error) => /whispers until another channel/.test(error.message)));
        await waitUntil("two whisper channels reported past the budget", async () => (await limited()).length === 2, DEADLINE);
        await broadcastNumbered(dev(), "private-typing.12", [1]);
        await waitForNumber(tabs[1]!, "private-typing.12", 1);
        // Still four once settled. A fifth was seen once in CI at this point (not reproduced in 52 runs, 40 of them under
        // load): the proxy counts a stream the page closed until its socket's close reaches it. A fifth that stays is a
        // stream past the budget, and fails here with the hub's records.
        await waitUntil("four whisper streams at the hub after the broadcast", () => whisperStreams(dev()).length === 4, {
            ...DEADLINE,
            describe: () => ({ open: dev().hub.stats.openStreams, subscribes: dev().hub.stats.subscribeConnections }),
        });
    });
});
