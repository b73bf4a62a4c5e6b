// Continuity in Chromium: a private channel receives a numbered stream at a steady rate while the connector's
// stream reopens again and again (a side channel joined, then left: each change re-authorizes and reopens
// make-before-break); then every number is accounted for, lost or duplicated.
import { BenchPage } from "../lib/page.mjs";
import { DEV_HUB, startBenchStack, USER } from "../lib/stack.mjs";
import { sleep, waitFor } from "../lib/stats.mjs";

/**
 * One run on a fresh dev stack on `hub` (`history`: whether the hub keeps history); `plan` gives `rate` (messages/s),
 * `reopens`, `reopenEveryMs`, and `leadMs` (stream before the first and after the last reopen).
 */
async function run(browser, history, plan, hub) {
    const stack = await startBenchStack({ history, hub });
    const page = await BenchPage.open(browser, stack.server.url, USER.id);
    try {
        await page.run(() => window.bench.listen("private", "stream", ".n"));
        const durationMs = plan.leadMs * 2 + plan.reopens * plan.reopenEveryMs;
        const total = Math.round((durationMs / 1000) * plan.rate);
        await page.run(([target]) => window.bench.arm(target, false, true), [total]);
        const before = stack.counts().subscribes;

        // The publisher: number n is due at n / rate seconds after the start, whatever the timers' jitter.
        // Over HTTP (the reference hub) the POSTs go one after another, in order; each one's failure is kept.
        let published = 0;
        const sends = [];
        const started = Date.now();
        const publisher = (async () => {
            while (published < total) {
                const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * plan.rate));
                while (published < due) {
                    const sent = Promise.resolve(stack.publish("private-stream", "n", { n: ++published }));
                    sent.catch(() => undefined); // handled by the Promise.all below
                    sends.push(sent);
                }
                await sleep(5);
            }
        })();

        // The reopens: join side.k, leave side.k, join side.k+1, ...
        await sleep(plan.leadMs);
        for (let k = 0; k < plan.reopens; k++) {
            await page.run(([name, joined]) => window.bench.toggle(name, joined), [`side.${k >> 1}`, k % 2 === 1]);
            await sleep(plan.reopenEveryMs);
        }
        await publisher;
        await Promise.all(sends);
        await waitFor("every number at the connector", () => page.run(() => window.bench.done(["connector"])), { timeout: 20_000 }).catch(() => false);
        await sleep(500); // duplicates, if any, arrive within a moment
        const numbers = (await page.run(() => window.bench.result())).connector.numbers;
        const distinct = new Set(numbers);
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        return {
            history,
            published: total,
            received: numbers.length,
            lost: total - distinct.size,
            duplicated: numbers.length - distinct.size,
            outOfOrder: numbers.some((n, i) => i > 0 && n < numbers[i - 1]),
            reopens: stack.counts().subscribes - before,
            seconds: durationMs / 1000,
        };
    } finally {
        await page.close();
        await stack.server.close();
    }
}

/** A run with hub history and one without, on `hub` (the dev hub by default). */
export async function measureContinuity(browser, plan, hub = DEV_HUB) {
    return [await run(browser, true, plan, hub), await run(browser, false, plan, hub)];
}
