// node bench/hidden-tab.mjs [--quick]: how late a hidden or frozen tab runs a 1 s setTimeout chain, a
// BroadcastChannel message handler, a MessageChannel task hop after it and a Server-Sent Events stream's events,
// in headless Chromium. Not part of npm test or npm run bench: it backs the
// tab-sharing design claim "the engine reacts to messages, not timers".
//
// Playwright makes every page behave as a focused foreground tab (focus emulation, and its launch flags turn
// off background throttling), so this drives Chromium over the raw DevTools protocol on a pipe instead: a
// background tab of a window is hidden exactly as in a desktop browser. With Chromium's default flags, the probe
// tab is visible, then in the background (hidden; its first seconds, then longer, when Chromium's intensive
// wake-up throttling of chained timers may start), then frozen with Page.setWebLifecycleState (as Chrome
// freezes hidden tabs). A second browser, started with intensive wake-up throttling's grace period shortened
// from 5 minutes to 10 s, shows a tab hidden for longer than 5 minutes (chained timers wake once a minute).
// The sender tab (in front) posts a timestamped message every second; the probe records for each timer tick
// and each message how late it ran. Everything listens on 127.0.0.1; every wait is bounded.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

const quick = process.argv.includes("--quick");
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** Phase lengths in ms. */
const PLAN = quick
    ? { visible: 4_000, hidden: [10_000, 20_000], frozen: 4_000, grace: 10, intensive: 40_000 }
    : { visible: 10_000, hidden: [10_000, 50_000, 60_000], frozen: 10_000, grace: 10, intensive: 80_000 };

/**
 * Chromium's switches for intensive wake-up throttling with its grace period shortened from 5 minutes (and the
 * loaded-page variant's) to `seconds`: the tab is throttled as a tab hidden for longer than that is.
 */
const intensiveAfter = (seconds) => [
    `--enable-features=IntensiveWakeUpThrottling:grace_period_seconds/${seconds},QuickIntensiveWakeUpThrottlingAfterLoading:grace_period_seconds_loaded/${seconds}`,
];

/** The probe page: a 1 s setTimeout chain and a BroadcastChannel handler, each recording how late it ran. */
const PROBE = `<!doctype html><meta charset="utf-8"><title>probe</title><script>
window.records = [];
const channel = new BroadcastChannel("hidden-tab-bench");
// Each message handler also hops to a task of its own through a MessageChannel, as the leading tab does to batch the
// events it forwards to the other tabs (src/share/tab-link.ts): how late does that task run in a hidden tab?
const hop = new MessageChannel();
hop.port1.onmessage = (event) => records.push({ kind: "hop", expected: event.data, at: Date.now() });
channel.onmessage = (event) => {
    const at = Date.now();
    records.push({ kind: "message", expected: event.data.sentAt, at });
    hop.port2.postMessage(at);
};
// A Server-Sent Events stream from the server (its clock, once a second), as the leading tab's hub stream: does a
// hidden or frozen tab still receive it, and how late?
const stream = new EventSource("/events");
stream.onmessage = (event) => records.push({ kind: "sse", expected: Number(event.data), at: Date.now() });
document.addEventListener("freeze", () => records.push({ kind: "freeze", expected: Date.now(), at: Date.now() }));
document.addEventListener("resume", () => records.push({ kind: "resume", expected: Date.now(), at: Date.now() }));
window.due = Date.now() + 1000;
const tick = () => {
    const now = Date.now();
    records.push({ kind: "timer", expected: window.due, at: now });
    window.due = now + 1000;
    setTimeout(tick, 1000);
};
setTimeout(tick, 1000);
</script><p>probe</p>`;

/** The sender page (kept in front): posts its clock every second. */
const SENDER = `<!doctype html><meta charset="utf-8"><title>sender</title><script>
const channel = new BroadcastChannel("hidden-tab-bench");
setInterval(() => channel.postMessage({ sentAt: Date.now() }), 1000);
</script><p>sender</p>`;

/** Serve the two pages on 127.0.0.1 (one origin, so the BroadcastChannel connects them). */
async function startPages() {
    const streams = new Set();
    const server = createServer((req, res) => {
        if (req.url === "/events") {
            res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
            res.write(": open\n\n");
            const timer = setInterval(() => res.write(`data: ${Date.now()}\n\n`), 1000);
            streams.add(res);
            req.on("close", () => (clearInterval(timer), streams.delete(res)));
            return;
        }
        const body = req.url === "/probe.html" ? PROBE : req.url === "/sender.html" ? SENDER : null;
        res.writeHead(body === null ? 404 : 200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
        res.end(body ?? "not found");
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const close = () => {
        for (const res of streams) res.destroy();
        return new Promise((resolve) => server.close(resolve));
    };
    return { origin: `http://127.0.0.1:${server.address().port}`, close };
}

/** Launch Chromium with `--remote-debugging-pipe` and return a minimal CDP client over it. */
function launch(extraArgs) {
    const profile = mkdtempSync(join(tmpdir(), "hidden-tab-bench-"));
    const args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--remote-debugging-pipe", `--user-data-dir=${profile}`, ...extraArgs, "about:blank"];
    const child = spawn(CHROMIUM, args, { stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] });
    const toBrowser = child.stdio[3];
    const fromBrowser = child.stdio[4];
    const pending = new Map();
    let nextId = 0;
    let buffer = "";
    fromBrowser.on("data", (chunk) => {
        buffer += chunk.toString("utf8");
        for (let end = buffer.indexOf("\0"); end !== -1; end = buffer.indexOf("\0")) {
            const message = JSON.parse(buffer.slice(0, end));
            buffer = buffer.slice(end + 1);
            const waiter = message.id === undefined ? undefined : pending.get(message.id);
            if (waiter === undefined) continue;
            pending.delete(message.id);
            if (message.error) waiter.reject(new Error(`${waiter.method}: ${message.error.message}`));
            else waiter.resolve(message.result);
        }
    });
    /** Send one CDP command (to a target's session when `sessionId` is given); rejects after 30 s. */
    const send = (method, params = {}, sessionId) =>
        new Promise((resolve, reject) => {
            const id = ++nextId;
            const timer = setTimeout(() => {
                pending.delete(id);
                reject(new Error(`${method}: no answer within 30 s`));
            }, 30_000);
            pending.set(id, {
                method,
                resolve: (value) => (clearTimeout(timer), resolve(value)),
                reject: (error) => (clearTimeout(timer), reject(error)),
            });
            toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
        });
    const close = async () => {
        await send("Browser.close").catch(() => undefined);
        await new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            const timer = setTimeout(() => (child.kill("SIGKILL"), resolve()), 5_000);
            child.once("exit", () => (clearTimeout(timer), resolve()));
        });
        rmSync(profile, { recursive: true, force: true });
    };
    return { send, close };
}

/** Open `url` in a new tab (in front unless `background`); resolves with its target and session ids. */
async function openTab(cdp, url, background = false) {
    const { targetId } = await cdp.send("Target.createTarget", { url, background });
    const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
    await waitFor(cdp, sessionId, "document.readyState === 'complete'", `${url} to load`);
    return { targetId, sessionId };
}

/** Evaluate `expression` in a tab and return its value. */
async function evaluate(cdp, sessionId, expression) {
    const { result, exceptionDetails } = await cdp.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.text}`);
    return result.value;
}

/** Poll `expression` in a tab until it is true (10 s deadline). */
async function waitFor(cdp, sessionId, expression, what) {
    const deadline = Date.now() + 10_000;
    while (!(await evaluate(cdp, sessionId, expression).catch(() => false))) {
        if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
        await sleep(50);
    }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Lateness figures of the records of one kind whose expected time lies in [from, to): how many ran, the
 * median and the largest lateness, and whether the largest is a lower bound (a tick still waiting).
 */
function summarize(records, kind, from, to) {
    const selected = records.filter((record) => record.kind === kind && record.expected >= from && record.expected < to);
    const late = selected.map((record) => Math.max(0, record.at - record.expected)).sort((a, b) => a - b);
    if (late.length === 0) return { count: 0, median: null, max: null, atLeast: false };
    const last = selected.reduce((worst, record) => (record.at - record.expected > worst.at - worst.expected ? record : worst));
    return {
        count: selected.filter((record) => record.pending !== true).length,
        median: late[Math.floor((late.length - 1) / 2)],
        max: late[late.length - 1],
        atLeast: last.pending === true,
    };
}

/** How many records of `kind` ran between a `freeze` event and the next `resume` event. */
function countWhileFrozen(records, kind) {
    let frozen = false;
    let count = 0;
    for (const record of [...records].sort((a, b) => a.at - b.at)) {
        if (record.kind === "freeze") frozen = true;
        else if (record.kind === "resume") frozen = false;
        else if (record.kind === kind && frozen) count++;
    }
    return count;
}

/** Run one browser: returns the phase windows and the probe's records. */
async function measure(origin, extraArgs, phases) {
    const cdp = launch(extraArgs);
    try {
        const probe = await openTab(cdp, origin + "/probe.html");
        const windows = [];
        let sender = null;
        for (const phase of phases) {
            // The sender tab opens in front of the probe in the same window, which hides the probe as switching
            // tabs does; for the visible phase the probe is brought back to the front (the sender, hidden then,
            // may send less often, but each message carries the time it was really sent).
            sender ??= await openTab(cdp, origin + "/sender.html");
            const wanted = phase.state === "visible" ? "visible" : "hidden";
            await cdp.send("Target.activateTarget", { targetId: wanted === "visible" ? probe.targetId : sender.targetId });
            await waitFor(cdp, probe.sessionId, `document.visibilityState === "${wanted}"`, `the probe tab to be ${wanted}`);
            if (phase.state === "frozen") await cdp.send("Page.setWebLifecycleState", { state: "frozen" }, probe.sessionId);
            const from = Date.now();
            await sleep(phase.ms);
            const to = Date.now();
            if (phase.state === "frozen") await cdp.send("Page.setWebLifecycleState", { state: "active" }, probe.sessionId);
            windows.push({ name: phase.name, from, to });
        }
        // Let what the last phase queued run (a frozen tab runs it on resume; a throttled one at its next wake-up).
        await sleep(phases.at(-1).state === "frozen" ? 1_500 : 500);
        // DevTools evaluates at once even in a throttled tab: a tick still waiting for its wake-up counts as late
        // as now at least (marked ≥).
        const { records, due, now } = await evaluate(cdp, probe.sessionId, "({ records: window.records, due: window.due, now: Date.now() })");
        if (due < now) records.push({ kind: "timer", expected: due, at: now, pending: true });
        return windows.map((window) => ({
            name: window.name,
            seconds: Math.round((window.to - window.from) / 1000),
            timer: summarize(records, "timer", window.from, window.to),
            message: summarize(records, "message", window.from, window.to),
            hop: summarize(records, "hop", window.from, window.to),
            sse: summarize(records, "sse", window.from, window.to),
            // Messages whose handler ran between the page's freeze and resume events.
            messagesWhileFrozen: countWhileFrozen(records, "message"),
            // SSE events and MessageChannel hops that ran between the page's freeze and resume events.
            sseWhileFrozen: countWhileFrozen(records, "sse"),
            hopsWhileFrozen: countWhileFrozen(records, "hop"),
        }));
    } finally {
        await cdp.close();
    }
}

const format = (value, atLeast = false) => (value === null ? "–" : `${atLeast ? "≥ " : ""}${value} ms`);

const pages = await startPages();
try {
    // Consecutive windows of one hidden period: 0–10 s, 10–60 s, 60–120 s.
    const hidden = [];
    let elapsed = 0;
    for (const ms of PLAN.hidden) {
        hidden.push({ name: `hidden (background tab), ${elapsed / 1000}–${(elapsed + ms) / 1000} s`, state: "hidden", ms });
        elapsed += ms;
    }
    // Two browsers side by side (the figures are about scheduling, not CPU): Chromium's defaults, and intensive
    // throttling after a shortened grace period.
    const [defaults, intensive] = await Promise.all([
        measure(pages.origin, [], [
            { name: "visible (front tab)", state: "visible", ms: PLAN.visible },
            ...hidden,
            { name: "frozen (Page.setWebLifecycleState)", state: "frozen", ms: PLAN.frozen },
        ]),
        measure(pages.origin, intensiveAfter(PLAN.grace), [
            { name: `hidden > 5 min (intensive throttling, grace shortened to ${PLAN.grace} s)`, state: "hidden", ms: PLAN.intensive },
        ]),
    ]);
    const rows = [...defaults, ...intensive];
    console.log("How late a hidden or frozen Chromium tab runs a 1 s setTimeout chain, a BroadcastChannel handler and a MessageChannel hop after it");
    console.log("(lateness = when the callback ran minus when it was due or the message was sent).\n");
    console.log("| tab state | s | timer ticks run | timer late, median / max | messages | message late, median / max | MessageChannel hop after a message, median / max | SSE events | SSE event late, median / max |");
    console.log("|---|---|---|---|---|---|---|---|---|");
    for (const row of rows) {
        console.log(
            `| ${row.name} | ${row.seconds} | ${row.timer.count} | ${format(row.timer.median)} / ${format(row.timer.max, row.timer.atLeast)} | ${row.message.count} | ${format(row.message.median)} / ${format(row.message.max)} | ${format(row.hop.median)} / ${format(row.hop.max)} | ${row.sse.count} | ${format(row.sse.median)} / ${format(row.sse.max)} |`,
        );
    }
    const frozen = rows.find((row) => row.name.startsWith("frozen"));
    if (frozen !== undefined) {
        console.log(
            `\nBetween the probe's freeze and resume events ran: ${frozen.messagesWhileFrozen} BroadcastChannel message handlers, ` +
                `${frozen.sseWhileFrozen} SSE event handlers, ${frozen.hopsWhileFrozen} MessageChannel hops.`,
        );
    }
} finally {
    await pages.close();
}
