// Issue 52: what a multi-page app loses while the browser moves from one page to the next. A private channel receives
// numbers at a steady rate; the page navigates (a full document load), and the next page joins the same channel a
// while after its load, as a page whose scripts run late does; then every number published from the first page's
// subscription to the end is accounted for, over both pages: lost (neither page had it) or duplicated.
//
// Modes, each on a fresh stack: a raw EventSource on each page (what the protocol gives without a cursor), the
// connector on a page rendered without a cursor (`host` set), and the connector on a page rendered with the hub's
// last event id in its <head> link (the dev stack's Laravel stand-in asks the hub's subscriptions API, as the docs'
// middleware does).
import { BENCH_PAGE, benchPage } from "../lib/page.mjs";
import { BenchPage } from "../lib/page.mjs";
import { DEV_HUB, startBenchStack, topicOf, USER } from "../lib/stack.mjs";
import { sleep, waitFor } from "../lib/stats.mjs";

/** The page Laravel renders with the hub's `<link rel="mercure" last-event-id>` in its `<head>`. */
const RENDERED_PAGE = "/rendered.html";

/** The modes measured: where the next page is, and what receives on both pages. */
export const PAGE_LOAD_MODES = [
    { key: "raw", label: "raw EventSource, no cursor", next: BENCH_PAGE, receiver: "raw" },
    { key: "default", label: "connector, page without a cursor", next: BENCH_PAGE, receiver: "connector" },
    { key: "rendered", label: "connector, page rendered with the hub's last event id", next: RENDERED_PAGE, receiver: "connector" },
];

/** Subscribe the current page as `mode` says; resolves once it receives. */
async function subscribe(page, mode) {
    // The connector's auth request sets the hub cookie; the raw EventSource then subscribes with it, as upstream's
    // connector does on each page (the cookie outlives the page).
    // Armed first: what the hub replays as the stream opens is reported too.
    await page.run(() => window.bench.arm(0, true));
    await page.run(() => window.bench.create({}));
    if (mode.receiver === "connector") await page.run(() => window.bench.listen("private", "stream", ".n"));
    else {
        await page.run(() => window.bench.joinBurst("private", ["stream"]));
        await page.run(([topic]) => window.bench.openRaw([topic], true), [topicOf("private-stream")]);
    }
}

/** One run of `mode` on a fresh stack on `hub`; `plan` gives `rate` (messages/s), `beforeMs`, `joinAfterMs`, `afterMs`. */
async function run(browser, mode, plan, hub) {
    const stack = await startBenchStack({
        history: true,
        hub,
        pages: { [RENDERED_PAGE]: (rendered) => benchPage().replace("<title>", () => `${rendered.hubLink}\n<title>`) },
    });
    const page = await BenchPage.open(browser, stack.server.url, USER.id, {}, false);
    /** Every number either page's receiver recorded, in arrival order (the binding outlives the navigation). */
    const arrivals = [];
    page.onArrival = (which, n) => {
        if (which === mode.receiver && typeof n === "number") arrivals.push(n);
    };
    try {
        await subscribe(page, mode);
        let published = 0;
        let publishing = true;
        const sends = [];
        const started = Date.now();
        const publisher = (async () => {
            while (publishing) {
                const due = Math.floor(((Date.now() - started) / 1000) * plan.rate);
                while (published < due) {
                    const sent = Promise.resolve(stack.publish("private-stream", "n", { n: ++published }));
                    sent.catch(() => undefined); // handled by the Promise.all below
                    sends.push(sent);
                }
                await sleep(5);
            }
        })();
        await sleep(plan.beforeMs);
        const response = await page.page.goto(stack.server.url + mode.next);
        if (response?.status() !== 200) throw new Error(`the next page answered ${response?.status()}`);
        await sleep(plan.joinAfterMs);
        await subscribe(page, mode);
        await sleep(plan.afterMs);
        publishing = false;
        await publisher;
        await Promise.all(sends);
        await waitFor("the last number", () => arrivals.includes(published), { timeout: 10_000 }).catch(() => false);
        await sleep(300); // duplicates, if any, arrive within a moment
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        const distinct = new Set(arrivals);
        return { mode: mode.key, label: mode.label, published, received: arrivals.length, lost: published - distinct.size, duplicated: arrivals.length - distinct.size };
    } finally {
        await page.close();
        await stack.server.close();
    }
}

/** Every mode of {@link PAGE_LOAD_MODES} on `hub` (the dev hub by default), each on a fresh stack with history. */
export async function measurePageLoads(browser, plan, hub = DEV_HUB) {
    const runs = [];
    for (const mode of PAGE_LOAD_MODES) runs.push(await run(browser, mode, plan, hub));
    return runs;
}
