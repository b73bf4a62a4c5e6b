// The bench's first-event part on its own (after `npm run build`):
// `node bench/first-event.mjs [--quick] [--reps=N] [--latency-reps=N] [--compare=<dist> | --record | --render]`.
// Measures, in headless Chromium on the dev hub, construction to the first event per capability
// (scenarios/first-event.mjs), the figures `npm run bench` writes into BENCHMARKS.md, prints them and writes them to
// .bench-results/first-event.json. With `--record`, they become issue 32's "before" figures
// (bench/first-event-before.json, with the commit and the date) and BENCHMARKS.md's section is rewritten from them
// (how the before figures were taken, on main's build before the capabilities became lazy chunks); `--render` only
// rewrites that section from the recorded figures (`--record` empties their notes: write them again). With
// `--compare=<dist>` another build (another checkout's dist/, built) is measured in the same run, its pages interleaved
// with this build's, and the two are written side by side to .bench-results/first-event-compare.md: the same-run
// before/after comparison, e.g. against a build of 4af31fc.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { FIRST_EVENT_HEADING, FIRST_EVENT_SUMMARY_LABEL, firstEventSection, firstEventSummaryRows } from "./report-first-event.mjs";
import { firstEventPlan, measureFirstEventBuilds, startFirstEventStack } from "./scenarios/first-event.mjs";
import { ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");
const record = process.argv.includes("--record");
/** `--render`: measure nothing, rewrite BENCHMARKS.md's section from the recorded before figures (after editing their notes). */
const render = process.argv.includes("--render");
/** `--compare=<dist>`: another build measured in the same run. */
const compare = process.argv.find((arg) => arg.startsWith("--compare="))?.slice("--compare=".length);

if (record && quick) throw new Error("--record takes the full plan: run without --quick.");
if (compare !== undefined && (record || render)) throw new Error("--compare writes .bench-results/first-event-compare.md; record or render without it.");

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

/** The short commit of the checkout whose dist/ is `distDir`, or the directory's name when it is no git checkout. */
function commitOf(distDir) {
    try {
        return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: dirname(distDir), encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
        return basename(dirname(distDir));
    }
}

/** Where the before figures are kept (their `notes` are written by hand after the run: what the figures show). */
const BEFORE_FILE = join(ROOT, "bench", "first-event-before.json");

/** This run's figures (none with `--render`). */
let results = null;
if (!render) {
    const started = Date.now();
    results = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", loadStart: loadavg()[0], plan: FIRST_EVENT_PLAN };
    const browser = await launchChromium();
    results.chromium = browser.version();
    const targets = [];
    try {
        targets.push(await startFirstEventStack());
        if (compare !== undefined) targets.push(await startFirstEventStack(resolve(compare), "first-event-site-compare"));
        const [current, other] = await measureFirstEventBuilds(browser, targets, FIRST_EVENT_PLAN);
        Object.assign(results, current);
        if (other !== undefined) results.compare = { ...other, dist: resolve(compare), commit: commitOf(resolve(compare)) };
    } finally {
        for (const target of targets) await target.stack.server.close();
        await browser.close();
    }
    results.loadEnd = loadavg()[0];
    results.seconds = (Date.now() - started) / 1000;
    mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
    writeFileSync(join(ROOT, ".bench-results", "first-event.json"), JSON.stringify(results, null, 2) + "\n");
    for (const [name, run] of [["this build", results], ...(results.compare ? [[`compared build ${results.compare.commit}`, results.compare]] : [])]) {
        console.log(name);
        for (const row of run.rows) {
            const failed = row.failures.length > 0 ? `  failed ${row.failures.length}: ${row.failures[0]}` : "";
            console.log(`  ${row.kind.padEnd(10)} ${row.mode.padEnd(4)} +${String(row.latencyMs).padEnd(3)} first ${row.first.toFixed(1).padStart(7)} ms  here ${String(row.here?.toFixed(1) ?? "").padStart(6)}  reps ${row.reps}  requests ${JSON.stringify(row.requests)}${failed}`);
        }
    }
    if (results.compare) {
        const section = firstEventSection({ firstEvents: results, firstEventBefore: { ...results.compare, sameRun: true, date: results.date, loadStart: results.loadStart, loadEnd: results.loadEnd } });
        writeFileSync(join(ROOT, ".bench-results", "first-event-compare.md"), section.join("\n") + "\n");
        console.log("side by side in .bench-results/first-event-compare.md");
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
