import { beforeAll, describe, expect, it, vi } from "vitest";
import "../../src/connector/mercure-connector";
import { preloadChunks } from "./chunks";
import { Advance, Broadcast, ChunkOutage, EndTab, FailAuth, Hub, Join, Leave, Navigate, OpenTab } from "./commands";
import { shimWebCrypto } from "./determinism";
import { KNOWN_BUGS } from "./known-bugs";
import { runScenario } from "./simulation";
import { CHANNELS, earlyStreams, type WorldConfig } from "./world";

// Every lazy chunk loads through the simulation's loader (test/sim/chunks.ts), as in simulation.test.ts.
vi.mock("../../src/lazy-chunk", async () => ({ lazyChunk: (await import("./chunks")).simLazyChunk }));

/*
 * Issue 52 part 2 in the simulation: pages of a browser tab that navigate (`Navigate`: pagehide, then the next page of
 * the tab, with `resumeAcrossPages`, joins the same channels a while after its load) while the server broadcasts
 * (each command's race), on a hub with history. Besides every invariant of the simulation: nothing a page received
 * comes again on a later page of its tab, and a page that resumed gets every broadcast published on its channels since
 * the previous page left (world.ts, `#expectResumed`). The first page of a tab has no option (an OpenTab's), so a tab's
 * second navigation is the first that resumes. Fixed sequences here; every seed of the fuzzer draws navigations too.
 */

beforeAll(async () => {
    await preloadChunks();
    await shimWebCrypto(CHANNELS.filter((name) => name.startsWith("private-encrypted-")));
});

/** A hub with history, page CSRF tokens, user 2's bearer token a string. */
const HISTORY: WorldConfig = { history: true, bearerFunction: false, xsrfCookie: false, rotateXsrf: false, leaveDelay: 5_000 };

describe("the simulation's navigations with resumeAcrossPages (issue 52)", () => {
    it("a lone tab navigates three times while broadcasts race the next page's join", async () => {
        const commands = [
            new OpenTab(0, ["news", "private-orders.1", "presence-room.1"], false, null),
            new Navigate(0, 1_500, 200),
            new Navigate(0, 1_500, 300),
            new Navigate(0, 0, 40),
            new Navigate(0, 2_500, 2_000),
            new Broadcast(["news", "private-orders.1"], null),
        ];
        await expect(runScenario(HISTORY, 0, commands, KNOWN_BUGS)).resolves.toBe(6);
    });

    it("tabs that share: a follower navigates, then the leader, which hands the lead over as it goes", async () => {
        const commands = [
            new OpenTab(0, ["news"], false, null),
            new OpenTab(0, ["news", "private-team"], false, null),
            new Navigate(1, 1_000, 100),
            new Navigate(1, 1_000, 500),
            new Navigate(0, 1_000, 300),
            new Navigate(1, 800, 700),
            new Navigate(1, 2_000, 1_000),
            new Broadcast(["news", "private-team"], 100),
        ];
        await expect(runScenario(HISTORY, 1, commands, KNOWN_BUGS)).resolves.toBe(8);
    });

    it("a navigation across a hub restart, an auth failure and a failed download of the resume code", async () => {
        const commands = [
            new OpenTab(0, ["sport", "private-team"], false, null),
            new Navigate(0, 500, 100),
            new Navigate(0, 1_500, 200),
            new Hub(false, 300),
            new Hub(true, null),
            new Navigate(0, 1_000, 500),
            new FailAuth(0, 503, 2, null),
            new Navigate(0, 1_000, 600),
            new ChunkOutage("resume-capability", 1, null),
            new Navigate(0, 1_000, 700),
            new Navigate(0, 1_000, 800),
        ];
        await expect(runScenario(HISTORY, 2, commands, KNOWN_BUGS)).resolves.toBe(11);
    });

    it("a page that joins and leaves channels between navigations, and waits long before the next one joins", async () => {
        const commands = [
            new OpenTab(1, ["news", "private-orders.2"], false, null),
            new Navigate(0, 300, 100),
            new Join(0, "sport", false, null),
            new Navigate(0, 1_200, 400),
            new Leave(0, 0, null),
            new Navigate(0, 2_000, 1_500),
            new Advance(150_000, null),
            new Navigate(0, 3_000, 2_900),
        ];
        await expect(runScenario(HISTORY, 3, commands, KNOWN_BUGS)).resolves.toBe(8);
    });

    it("on a hub without history a resumed page loses what it loses by default, and never gets anything twice", async () => {
        const commands = [new OpenTab(0, ["news", "private-team"], false, null), new Navigate(0, 1_000, 200), new Navigate(0, 1_000, 300), new Navigate(0, 0, 10)];
        await expect(runScenario({ ...HISTORY, history: false }, 4, commands, KNOWN_BUGS)).resolves.toBe(4);
    });

    it("pages rendered with the hub's cursor (part 1): a lone tab and a follower, while broadcasts race the joins", async () => {
        const commands = [
            new OpenTab(0, ["news", "private-orders.1", "presence-room.1"], false, null),
            new OpenTab(0, ["presence-room.2"], false, null),
            new Navigate(0, 1_500, 200, true),
            new Navigate(1, 0, 0, true),
            new Navigate(1, 2_500, 2_000, true),
            new Broadcast(["news", "presence-room.2"], null),
        ];
        await expect(runScenario(HISTORY, 0, commands, KNOWN_BUGS)).resolves.toBe(6);
    });

    it("a rendered page that joins later beside a leader holding another channel gets the replay (seed 83: the hub replays before it announces)", async () => {
        const commands = [new OpenTab(1, ["presence-room.1"], false, null), new OpenTab(0, [], false, null), new Navigate(1, 0, null, true), new OpenTab(0, ["presence-room.2"], false, null), new Join(4, "presence-room.1", false, null)];
        await expect(runScenario(HISTORY, 0, commands, KNOWN_BUGS)).resolves.toBe(5);
    });

    it("a rendered page whose catch-up ends at once gets nothing its previous page had (seed 116: no history, a cursor the leader never forwarded)", async () => {
        const commands = [new OpenTab(0, [], false, null), new OpenTab(1, [], false, null), new Join(7, "private-encrypted-chat", false, null), new OpenTab(0, ["presence-room.1"], false, null), new Navigate(2, 0, null, true)];
        await expect(runScenario({ ...HISTORY, history: false }, 0, commands, KNOWN_BUGS)).resolves.toBe(5);
    });

    it("issue 53: a lone tab's next pages open their stream beside the auth request, and trust no grant once another tab authorized", async () => {
        const commands = [
            new OpenTab(0, ["news", "private-orders.1"], false, null),
            new Navigate(0, 0, 40), // Opens early: the grant is the cookie's.
            new Navigate(0, 0, 5),
            new OpenTab(0, ["private-team"], false, null), // Another tab of the browser: the leading tab authorizes the union.
            new EndTab(1, "close", null),
            new Navigate(0, 0, 30), // The leading page's stream was the engine's: no grant written.
            new OpenTab(1, ["private-orders.2"], false, null), // Another browser (user 2): its cookie and stamps are its own.
            new Navigate(0, 0, 20), // Opens early again.
            new FailAuth(0, 503, 1, null), // User 1's next auth answer fails: the early stream serves until the retry's grant.
            new Navigate(0, 0, 60), // The other browser's tab (its first page had no option: nothing to resume).
            new Navigate(0, 800, 300),
            new Broadcast(["news", "private-orders.1"], null),
        ];
        await expect(runScenario(HISTORY, 5, commands, KNOWN_BUGS)).resolves.toBe(12);
        expect(earlyStreams.opened).toBeGreaterThanOrEqual(3);
    });

    it("a page resumed beside another tab's newer engine gets nothing twice when that engine replays from its older cursor (seed 1102)", async () => {
        // Both tabs navigate during a hub outage: the tab holding the room resumes from upd-18 on the engine of the tab
        // holding sport, whose cursor (upd-17, its own previous page's) is older; the shared stream replays upd-18 from
        // there. The previous page's last deliveries, in the record, are claimed again in the next page's ledger.
        const commands = [
            new OpenTab(1, ["sport"], false, null),
            new Navigate(0, 0, null),
            new OpenTab(1, ["presence-room.2"], false, null),
            new Navigate(1, 0, null),
            new Hub(false, null),
            new Navigate(0, 0, null),
            new Navigate(0, 0, null),
            new Hub(true, null),
        ];
        await expect(runScenario(HISTORY, 0, commands, KNOWN_BUGS)).resolves.toBe(8);
    });
});
