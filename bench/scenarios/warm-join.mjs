// Issue 53: a warm join burst in Chromium, tab sharing on against off. A fresh page creates MercureEcho, joins one
// private channel and is subscribed; it then joins one more public channel and leaves it (with sharing on, the first
// change of a lone tab's channels hands over to its share client: from then on its engine answers joins from the
// grant), and finally joins N public channels in one tick: the time from that burst until every subscribed() is the
// figure. The bench page's fetch is the browser's, so these are the requests an app makes.
import { BenchPage } from "../lib/page.mjs";
import { USER } from "../lib/stack.mjs";
import { median, sleep, withTimeout } from "../lib/stats.mjs";

/** How long one step may take before the repetition fails (a loaded 2-core machine). */
const STEP_MS = 10_000;

/**
 * For each N in `plan.sizes`, sharing on and off, `plan.reps` fresh pages (the cases' order rotating between
 * repetitions): the medians (ms) from a warm burst of N public channels until every subscribed(), with each
 * repetition's figure and the failures.
 */
export async function measureWarmJoins(browser, stack, plan) {
    const cases = [];
    for (const size of plan.sizes) for (const share of [true, false]) cases.push({ size, share, runs: [], failures: [] });
    for (let rep = 0; rep < plan.reps; rep++) {
        for (let i = 0; i < cases.length; i++) {
            const entry = cases[(i + rep) % cases.length];
            const page = await BenchPage.open(browser, stack.server.url, USER.id, {}, false);
            try {
                const options = entry.share ? {} : { shareAcrossTabs: false };
                await withTimeout(
                    page.run(([o]) => {
                        window.bench.create(o);
                        return window.bench.joinBurst("private", ["orders.1"]);
                    }, [options]),
                    STEP_MS,
                    "the first join",
                );
                await withTimeout(page.run(() => window.bench.joinBurst("public", ["warm.0"])), STEP_MS, "the warm-up join");
                await page.run(() => window.bench.leaveAll(["warm.0"]));
                await sleep(plan.pauseMs);
                const names = Array.from({ length: entry.size }, (_, n) => `warm.${rep * 1000 + n + 1}`);
                entry.runs.push(await withTimeout(page.run(([list]) => window.bench.joinBurst("public", list), [names]), STEP_MS, "the burst"));
                if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
            } catch (error) {
                entry.failures.push(String(error instanceof Error ? error.message.split("\n")[0] : error).slice(0, 200));
            } finally {
                await page.close();
            }
        }
    }
    return cases.map(({ size, share, runs, failures }) => ({ size, share, ms: median(runs), runs, failures }));
}
