// Issue 52 part 2 in Chromium: a page receives a numbered stream on a public channel at a steady rate; the tab
// navigates (location.href, a full document load) to a page that joins the same channel `joinAfterMs` after its load,
// as the issue measured it (20/s, 160 numbers, the next page joining 1.5 s after its load). Counted over both pages:
// numbers lost (received by neither) and received twice (by both, or twice by one). Modes: a raw EventSource opened
// on each page (what a page without the connector does), the connector as it is by default, on pages rendered with
// the hub's last event id in their <head> link (part 1: the dev stack's Laravel stand-in asks the hub's subscriptions
// API, as the docs' middleware does), and with `resumeAcrossPages` (part 2); sharing on (the default). Every number is accounted for once the publisher has finished and the
// next page has received the last one (or a deadline passed).

import { startBenchStack, topicOf } from "../lib/stack.mjs";
import { sleep, waitFor } from "../lib/stats.mjs";

/** The measurement: 20 numbers/s, 160 of them, the navigation 3 s in, the next page joining 1.5 s after its load. */
export const PAGE_RESUME_PLAN = { rate: 20, count: 160, navigateAtMs: 3_000, joinAfterMs: 1_500 };

/** The page of the scenario. */
const PAGE = "/page-resume.html";

/** The same page, rendered with the hub's `<link rel="mercure" last-event-id>` in its `<head>` (the rendered mode). */
const RENDERED_PAGE = "/page-resume-rendered.html";

/** The modes, in the table's order. */
const MODES = ["raw", "default", "rendered", "resume"];

/** The channel of the numbered stream. */
const CHANNEL = "news";

/** The session's CSRF token, as a Blade layout renders it: the same on both pages (one session). */
const TOKEN = "bench0session0token0of0forty0characters";

/**
 * The page: it records each number it receives through `window.received(page, n)` (exposed by the bench, so that the
 * first page's numbers survive its unload). `?mode=raw|default|resume`; `&next=<ms>`: the next page, which joins that
 * long after its load.
 */
function resumePage(hubLink = "") {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
${hubLink}
<meta name="csrf-token" content="${TOKEN}">
<title>page resume bench</title>
<script src="/dist/laravel-echo-mercure.iife.js"></script>
<script>
(function () {
    var params = new URLSearchParams(location.search);
    var mode = params.get("mode");
    var next = params.get("next");
    var page = next === null ? 1 : 2;
    var record = function (n) { window.received(page, n); };
    var start = function () {
        if (mode === "raw") {
            // By hand: the hub cookie from Laravel's auth endpoint, then a stream from now.
            var body = JSON.stringify({ channel_names: [${JSON.stringify(CHANNEL)}] });
            fetch("/broadcasting/auth", { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" }, body: body }).then(function () {
                var source = new EventSource("/.well-known/mercure?match=" + encodeURIComponent(${JSON.stringify(topicOf(CHANNEL))}));
                source.onmessage = function (event) { record(JSON.parse(event.data).payload.n); };
            });
            return;
        }
        var echo = new window.EchoMercure.MercureEcho({ host: "/.well-known/mercure", resumeAcrossPages: mode === "resume" });
        echo.channel(${JSON.stringify(CHANNEL)}).listen(".n", function (payload) { record(payload.n); });
    };
    if (next === null) start();
    else setTimeout(start, Number(next));
})();
</script>
</head>
<body><p>page resume bench</p></body>
</html>
`;
}

/**
 * One navigation per mode on a fresh stack on `hub` (with history). `plan`: `rate` (numbers/s), `count`,
 * `navigateAtMs` (after the first publication), `joinAfterMs` (the next page's join after its load).
 */
export async function measurePageResume(browser, plan, hub) {
    const stack = await startBenchStack({ history: true, hub, pages: { [PAGE]: resumePage(), [RENDERED_PAGE]: (rendered) => resumePage(rendered.hubLink) } });
    try {
        const rows = [];
        for (const mode of MODES) rows.push({ mode, ...(await navigation(browser, stack, plan, mode)) });
        return { hub: hub.name, rows };
    } finally {
        await stack.server.close();
    }
}

/** One navigation in `mode`: what each page received, lost and twice. */
async function navigation(browser, stack, plan, mode) {
    const context = await browser.newContext();
    try {
        const received = { 1: [], 2: [] };
        await context.exposeFunction("received", (page, n) => received[page].push(n));
        const page = await context.newPage();
        const path = mode === "rendered" ? RENDERED_PAGE : PAGE;
        await page.goto(`${stack.server.url}${path}?mode=${mode}`);
        await waitFor("the first page's stream", () => received[1].length > 0 || stack.server.hub.stats.openConnections > 0, { timeout: 10_000 });
        await sleep(300);
        let published = 0;
        const started = Date.now();
        const publisher = (async () => {
            while (published < plan.count) {
                const due = Math.min(plan.count, Math.floor(((Date.now() - started) / 1000) * plan.rate) + 1);
                while (published < due) await stack.publish(CHANNEL, "n", { n: ++published });
                await sleep(5);
            }
        })();
        await sleep(plan.navigateAtMs);
        const navigatedAt = published;
        await page.evaluate(([path, delay]) => void (location.href = path + "&next=" + delay), [`${path}?mode=${mode}`, plan.joinAfterMs]);
        await publisher;
        await waitFor("the last number on the next page", () => received[2].includes(plan.count), { timeout: 10_000 }).catch(() => false);
        await sleep(300); // duplicates, if any, arrive within a moment
        const all = [...received[1], ...received[2]];
        const distinct = new Set(all);
        return {
            published: plan.count,
            navigatedAfter: navigatedAt,
            firstPage: received[1].length,
            nextPage: received[2].length,
            lost: plan.count - distinct.size,
            twice: all.length - distinct.size,
        };
    } finally {
        await context.close();
    }
}

/** The markdown table of {@link measurePageResume}'s results, one per hub (or why a hub was skipped). */
export function pageResumeTable(hubs) {
    const label = {
        raw: "raw `EventSource` on each page",
        default: "connector, default",
        rendered: "connector, pages rendered with the hub's last event id",
        resume: "connector, `resumeAcrossPages: true`",
    };
    return [
        "| Hub | Receiver | Published | First page received | Next page received | Lost | Received twice |",
        "|---|---|---:|---:|---:|---:|---:|",
        ...hubs.flatMap((hub) =>
            hub.skipped !== undefined && hub.skipped !== null
                ? [`| ${hub.hub} | skipped: ${hub.skipped} | | | | | |`]
                : hub.rows.map((row) => `| ${hub.hub} | ${label[row.mode]} | ${row.published} | ${row.firstPage} | ${row.nextPage} | ${row.lost} | ${row.twice} |`),
        ),
    ];
}
