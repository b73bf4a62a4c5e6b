// The bench's first-event part on its own (after `npm run build`): `node bench/first-event.mjs [--quick] [--reps=N] [--latency-reps=N] [--record | --render]`.
// Measures, in headless Chromium on the dev hub, construction to the first event per capability
// (scenarios/first-event.mjs), the figures `npm run bench` writes into BENCHMARKS.md, prints them and writes them to
// .bench-results/first-event.json. With `--record`, they become issue 32's "before" figures
// (bench/first-event-before.json, with the commit and the date) and BENCHMARKS.md's section is rewritten from them
// (how the before figures were taken, on main's build before the capabilities became lazy chunks); `--render` only
// rewrites that section from the recorded figures.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { FIRST_EVENT_HEADING, FIRST_EVENT_SUMMARY_LABEL, firstEventSection, firstEventSummaryRows } from "./report-first-event.mjs";
import { firstEventPlan, measureFirstEvents, startFirstEventStack } from "./scenarios/first-event.mjs";
import { ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");
const record = process.argv.includes("--record");
/** `--render`: measure nothing, rewrite BENCHMARKS.md's section from the recorded before figures (after editing their notes). */
const render = process.argv.includes("--render");

if (record && quick) throw new Error("--record takes the full plan: run without --quick.");

/** `--reps=N`: more pages per row than the plan's (the recorded before figures took more, for steadier medians). */
const count = (name) => Number(process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? Number.NaN);
const reps = count("reps");
/** `--latency-reps=N`: the same for the rows with added latency. */
const latencyReps = count("latency-reps");
const FIRST_EVENT_PLAN = {
    ...firstEventPlan(quick),
    ...(Number.isInteger(reps) && reps > 0 ? { reps } : {}),
    ...(Number.isInteger(latencyReps) && latencyReps > 0 ? { latencyReps } : {}),
};

/** Where the before figures are kept (their `notes` are written by hand after the run: what the figures show). */
const BEFORE_FILE = join(ROOT, "bench", "first-event-before.json");

/** This run's figures (none with `--render`). */
let results = null;
if (!render) {
    const started = Date.now();
    results = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", loadStart: loadavg()[0], plan: FIRST_EVENT_PLAN };
    const browser = await launchChromium();
    results.chromium = browser.version();
    try {
        const { stack, files } = await startFirstEventStack();
        try {
            Object.assign(results, await measureFirstEvents(browser, stack, FIRST_EVENT_PLAN, files));
        } finally {
            await stack.server.close();
        }
    } finally {
        await browser.close();
    }
    results.loadEnd = loadavg()[0];
    results.seconds = (Date.now() - started) / 1000;
    mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
    writeFileSync(join(ROOT, ".bench-results", "first-event.json"), JSON.stringify(results, null, 2) + "\n");
    for (const row of results.rows) {
        const failed = row.failures.length > 0 ? `  failed ${row.failures.length}: ${row.failures[0]}` : "";
        console.log(`${row.kind.padEnd(10)} ${row.mode.padEnd(4)} +${String(row.latencyMs).padEnd(3)} first ${row.first.toFixed(1).padStart(7)} ms  here ${String(row.here?.toFixed(1) ?? "").padStart(6)}  reps ${row.reps}  requests ${JSON.stringify(row.requests)}${failed}`);
    }
    console.log(`${results.seconds.toFixed(0)} s`);
}

if (record && results !== null) {
    // The commit of the code measured: the last one that changed what dist/ is built from (the bench's own commits aside).
    const commit = execFileSync("git", ["log", "-1", "--format=%h", "--", "src", "package.json", "rollup.config.mjs"], { cwd: ROOT, encoding: "utf8" }).trim();
    writeFileSync(BEFORE_FILE, JSON.stringify({ ...results, commit, notes: [] }, null, 2) + "\n");
}
if (record || render) {
    const before = JSON.parse(readFileSync(BEFORE_FILE, "utf8"));
    // BENCHMARKS.md's section, rewritten in place (the rest of the file is the last npm run bench's).
    const file = join(ROOT, "BENCHMARKS.md");
    const text = readFileSync(file, "utf8");
    const section = firstEventSection({ firstEvents: null, firstEventBefore: before }).join("\n") + "\n";
    const at = text.indexOf(FIRST_EVENT_HEADING);
    let updated;
    if (at >= 0) {
        const next = text.slice(at + FIRST_EVENT_HEADING.length).search(/\n#{2,3} /);
        updated = text.slice(0, at) + section + (next < 0 ? "" : text.slice(at + FIRST_EVENT_HEADING.length + next + 1));
    } else {
        // After the first-join section, where report.mjs puts it.
        const after = text.indexOf("\n## ", text.indexOf("### A page's first join"));
        updated = text.slice(0, after + 1) + section + text.slice(after + 1);
    }
    // The summary's rows, replaced: after the first-join row, as report.mjs orders them.
    const lines = updated.split("\n");
    const kept = lines.filter((line) => !line.startsWith(`| ${FIRST_EVENT_SUMMARY_LABEL}`));
    kept.splice(kept.findIndex((line) => line.startsWith("| First join ")) + 1, 0, ...firstEventSummaryRows({ firstEventBefore: before }));
    writeFileSync(file, kept.join("\n"));
    console.log(`BENCHMARKS.md's section written from bench/first-event-before.json (${before.commit})`);
}
