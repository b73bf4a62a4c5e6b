// The bench's first-event part on its own (after `npm run build`): `node bench/first-event.mjs [--quick] [--reps=N] [--record]`.
// Measures, in headless Chromium on the dev hub, construction to the first event per capability
// (scenarios/first-event.mjs), the figures `npm run bench` writes into BENCHMARKS.md, prints them and writes them to
// .bench-results/first-event.json. With `--record`, they become issue 32's "before" figures
// (bench/first-event-before.json, with the commit and the date) and BENCHMARKS.md's section is rewritten from them
// and this run: how the before figures were taken, on main's build before the capabilities became lazy chunks.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { firstEventSection, FIRST_EVENT_HEADING } from "./report-first-event.mjs";
import { firstEventPlan, measureFirstEvents, startFirstEventStack } from "./scenarios/first-event.mjs";
import { ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");
const record = process.argv.includes("--record");

/** `--reps=N`: more pages per row than the plan's (the recorded before figures took more, for steadier medians). */
const reps = Number(process.argv.find((arg) => arg.startsWith("--reps="))?.slice("--reps=".length) ?? Number.NaN);
const FIRST_EVENT_PLAN = { ...firstEventPlan(quick), ...(Number.isInteger(reps) && reps > 0 ? { reps } : {}) };

const started = Date.now();
const results = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", loadStart: loadavg()[0], plan: FIRST_EVENT_PLAN };
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
    console.log(`${row.kind.padEnd(10)} ${row.mode.padEnd(4)} first ${row.first.toFixed(1).padStart(7)} ms  here ${String(row.here?.toFixed(1) ?? "").padStart(6)}  reps ${row.reps}  requests ${JSON.stringify(row.requests)}${failed}`);
}
console.log(`${results.seconds.toFixed(0)} s`);

if (record) {
    if (quick) throw new Error("--record takes the full plan: run without --quick.");
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const before = { ...results, commit };
    writeFileSync(join(ROOT, "bench", "first-event-before.json"), JSON.stringify(before, null, 2) + "\n");
    // BENCHMARKS.md's section, rewritten in place (the rest of the file is the last npm run bench's).
    const file = join(ROOT, "BENCHMARKS.md");
    const text = readFileSync(file, "utf8");
    const section = firstEventSection({ firstEvents: null, firstEventBefore: before }).join("\n");
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
    writeFileSync(file, updated);
    console.log(`recorded in bench/first-event-before.json (${commit}) and BENCHMARKS.md`);
}
