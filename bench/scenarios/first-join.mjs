// A page's first join in Chromium, with tab sharing off and on: from the join until the auth request leaves and
// until subscribed(), for a channel joined in the same tick as MercureEcho's creation and for one joined later
// (Echo created at boot, a component joining when it mounts). With sharing, the tab must win the Web Lock and
// start the hub engine before its auth request can leave; the connector starts that election when it is created.
import { BenchPage } from "../lib/page.mjs";
import { USER } from "../lib/stack.mjs";
import { median } from "../lib/stats.mjs";

/**
 * For each case (sharing off/on × joined in the same tick / `plan.laterMs` later; with `plan.latencyMs`, also sharing
 * off/on in the same tick with that many ms added to every response of the page, as over a network with that round
 * trip: Chromium's network emulation; with `plan.follower`, also a second tab's first join while the first leads), `plan.reps` fresh pages, the order of the cases rotating between repetitions;
 * medians in ms. A row's `latency` is 0 without the emulation.
 */
export async function measureFirstJoins(browser, stack, plan) {
    const cases = [];
    for (const share of [false, true]) for (const delay of [null, plan.laterMs]) cases.push({ share, delay, latency: 0, runs: [] });
    if (plan.latencyMs) for (const share of [false, true]) cases.push({ share, delay: null, latency: plan.latencyMs, runs: [] });
    if (plan.follower) cases.push({ share: true, delay: null, latency: 0, follower: true, runs: [] });
    for (let rep = 0; rep < plan.reps; rep++) {
        for (let i = 0; i < cases.length; i++) {
            const entry = cases[(i + rep) % cases.length];
            const first = await BenchPage.open(browser, stack.server.url, USER.id, {}, false);
            // A follower: a second tab of the same browser, its first join made while the first tab leads (joined, and
            // its share client settled); the leading tab's engine authorizes for it, so only `subscribed()` is timed.
            const page = entry.follower ? await first.openTab(stack.server.url, null) : first;
            try {
                if (entry.follower) {
                    await first.run(() => window.bench.firstJoin({}, null));
                    await new Promise((resolve) => setTimeout(resolve, 1_500));
                }
                if (entry.latency > 0) {
                    const cdp = await page.page.context().newCDPSession(page.page);
                    await cdp.send("Network.enable");
                    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: entry.latency, downloadThroughput: -1, uploadThroughput: -1 });
                }
                const options = entry.share ? {} : { shareAcrossTabs: false };
                entry.runs.push(await page.run(([o, d]) => window.bench.firstJoin(o, d), [options, entry.delay]));
                if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
            } finally {
                if (page !== first) await page.closeTab();
                await first.close();
            }
        }
    }
    return cases.map(({ share, delay, latency, follower = false, runs }) => ({
        share,
        delay,
        latency,
        follower,
        auth: follower ? Number.NaN : median(runs.map((run) => run.auth)),
        subscribed: median(runs.map((run) => run.subscribed)),
        reps: runs.length,
        authRuns: follower ? [] : runs.map((run) => run.auth),
        subscribedRuns: runs.map((run) => run.subscribed),
    }));
}
