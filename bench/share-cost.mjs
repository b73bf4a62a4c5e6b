// Issue 31 on its own (after `npm run build`): `node bench/share-cost.mjs [--quick] [--before=<dist>]`.
// What tab sharing costs a page, in headless Chromium on the dev hub: a page's first join (scenarios/first-join.mjs)
// and the latency and main-thread time per message under a steady publish rate, sharing on (leading alone, and
// leading with a follower tab), off, and a raw EventSource (scenarios/delivery.mjs, measureSharingCost). With
// `--before=<dist>` another build (e.g. main's dist/, copied aside) is measured in the same run, the two builds
// alternating round by round, so that both see the same load. Writes .bench-results/share-cost.json; with `--record`
// (and `--before`) also bench/share-cost-compare.json, and rewrites BENCHMARKS.md's issue 31 section from it.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { startBenchStack } from "./lib/stack.mjs";
import { mergeSharingRuns, openSharingPages, sharingRuns, summarizeSharing } from "./scenarios/delivery.mjs";
import { measureFirstJoins } from "./scenarios/first-join.mjs";
import { SHARE_COST_HEADING, shareCostSection } from "./report-share-cost.mjs";
import { ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");
const before = process.argv.find((arg) => arg.startsWith("--before="))?.slice("--before=".length);
const record = process.argv.includes("--record");
if (record && (before === undefined || quick)) throw new Error("--record needs --before=<dist> and the full plan.");

/** The plan: `rounds` rounds of `sharing.reps` loaded runs per variant and `firstJoin.reps` pages per first-join case, per build. */
export const SHARE_COST_PLAN = {
    rounds: quick ? 1 : 3,
    firstJoin: { reps: quick ? 3 : 4, laterMs: 200, latencyMs: 20, follower: true },
    sharing: { reps: quick ? 1 : 2, durationMs: quick ? 600 : 1_000, rates: { public: 5_000, encrypted: 2_500 } },
};

const started = Date.now();
const results = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", loadStart: loadavg()[0], plan: SHARE_COST_PLAN, builds: {} };
const builds = [...(before === undefined ? [] : [["before", resolve(before)]]), ["after", undefined]];
const browser = await launchChromium();
results.chromium = browser.version();
const stacks = [];
try {
    for (const [name, distDir] of builds) {
        const stack = await startBenchStack({ history: false, distDir });
        stacks.push({ name, stack, pages: await openSharingPages(browser, stack), runs: [], firstJoins: [] });
    }
    for (let round = 0; round < SHARE_COST_PLAN.rounds; round++) {
        for (const entry of round % 2 === 0 ? stacks : [...stacks].reverse()) {
            const at = Date.now();
            entry.firstJoins.push(await measureFirstJoins(browser, entry.stack, SHARE_COST_PLAN.firstJoin));
            entry.runs.push(await sharingRuns(entry.pages, entry.stack, { ...SHARE_COST_PLAN.sharing, offset: round }));
            console.log(`round ${round + 1} ${entry.name}: ${((Date.now() - at) / 1000).toFixed(1)} s`);
        }
    }
    for (const entry of stacks) {
        const firstJoins = entry.firstJoins[0].map((row, i) => {
            const all = entry.firstJoins.map((rounds) => rounds[i]);
            return { share: row.share, delay: row.delay, latency: row.latency ?? 0, follower: row.follower ?? false, auth: medianOf(all.flatMap((r) => r.authRuns)), subscribed: medianOf(all.flatMap((r) => r.subscribedRuns)), reps: all.reduce((sum, r) => sum + r.reps, 0) };
        });
        results.builds[entry.name] = { distDir: entry.name === "before" ? before : "dist", firstJoins, sharing: summarizeSharing(mergeSharingRuns(entry.runs), SHARE_COST_PLAN.sharing) };
    }
} finally {
    for (const { stack, pages } of stacks) {
        await pages.on.close();
        await pages.off.close();
        await stack.server.close();
    }
    await browser.close();
}
results.seconds = (Date.now() - started) / 1000;
results.loadEnd = loadavg()[0];
mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
writeFileSync(join(ROOT, ".bench-results", "share-cost.json"), JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results.builds, (key, value) => (typeof value === "number" ? Math.round(value * 100) / 100 : value), 1));
if (record) {
    results.beforeCommit = commitOf(before);
    writeFileSync(join(ROOT, "bench", "share-cost-compare.json"), JSON.stringify(results, null, 2) + "\n");
    rewriteSection(shareCostSection({ shareCostCompare: results }));
    console.log("bench/share-cost-compare.json written, BENCHMARKS.md's issue 31 section rewritten");
}

/** The short commit of the checkout whose dist/ is `distDir` (its `.commit` file when it is a copy), else its name. */
function commitOf(distDir) {
    try {
        return readFileSync(join(distDir, ".commit"), "utf8").trim();
    } catch {
        try {
            return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: resolve(distDir, ".."), encoding: "utf8" }).trim();
        } catch {
            return distDir;
        }
    }
}

/** Replace BENCHMARKS.md's issue 31 section (to the next heading of its level or above), or add it after the first-join section. */
function rewriteSection(lines) {
    const file = join(ROOT, "BENCHMARKS.md");
    const text = readFileSync(file, "utf8");
    const at = text.indexOf(SHARE_COST_HEADING + "\n");
    const anchor = at >= 0 ? at : text.indexOf("### Construction to first event, per capability");
    if (anchor < 0) throw new Error("BENCHMARKS.md has neither the issue 31 section nor the first-event one to put it before.");
    const next = at >= 0 ? text.slice(at + SHARE_COST_HEADING.length).search(/\n#{2,3} /) : -1;
    const end = at < 0 ? anchor : next < 0 ? text.length : at + SHARE_COST_HEADING.length + next + 1;
    writeFileSync(file, text.slice(0, anchor) + lines.join("\n") + "\n" + text.slice(end));
}

function medianOf(values) {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
