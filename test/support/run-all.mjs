// `npm test`'s runner. Vitest runs a project whose files must run one at a time (the browser suite: each file drives
// Chromium and its own servers) after every other project, not beside them, so in one process the run lasts as long as
// both parts together. Here the browser suite runs in one vitest process and, beside it, the type check then every
// other project but the consumer apps in a second one (one file at a time as well: two processes for the machine's two
// cores), which ends the run about when the browser suite ends. The consumer apps (test/consumer/: apps built from the
// packed package, about two minutes) run in a third process once the first of those two has ended, in the core it
// leaves free. The browser process's output streams as it comes; the others' is printed whole when each ends, so that
// they never interleave. The last line sums them all: `N passed, N failed, N skipped` (see summary-reporter.ts), and a
// failed type check counts as one failure. With arguments (`npm test -- test/unit/x.test.ts`), one vitest process runs
// them as given, without the type check.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildReferenceHub, REFERENCE_HUB_VERSIONS } from "../reference-hub/hub.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const VITEST = join(ROOT, "node_modules", "vitest", "vitest.mjs");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const SUMMARY = /^(\d+) passed, (\d+) failed, (\d+) skipped$/m;

/** Run the Node.js script `script` with `args`; `live`: stream its output, else keep it. Resolves with its exit code and output. */
function node(script, args, live) {
    return new Promise((resolve) => {
        const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        const take = (stream) => (chunk) => {
            output += chunk;
            if (live) stream.write(chunk);
        };
        child.stdout.setEncoding("utf8").on("data", take(process.stdout));
        child.stderr.setEncoding("utf8").on("data", take(process.stderr));
        child.once("close", (code, signal) => resolve({ code: code ?? (signal === null ? 1 : 128), output }));
    });
}

/** Run vitest with `args` (see {@link node}). */
const vitest = (args, live) => node(VITEST, ["run", ...args], live);

const given = process.argv.slice(2);
if (given.length > 0) {
    const { code } = await vitest(given, true);
    process.exit(code);
}

// Built once here rather than by both processes' global set-up at the same time (the set-up then finds them built).
// Without Go, the set-up says what to do (and fails under CI=true).
try {
    for (const version of Object.keys(REFERENCE_HUB_VERSIONS)) buildReferenceHub(version);
} catch (error) {
    if (!/ENOENT|spawnSync go/.test(String(error))) throw error;
}

/** The projects of the second lane: every project of vitest.config.ts but `browser` and `consumer` (unit/lanes.test.ts checks). */
const OTHER_PROJECTS = ["unit", "sim", "kit-*", "dev", "e2e"];

const browserLane = vitest(["--project", "browser"], true);
const otherLane = node(TSC, ["--noEmit", "-p", "tsconfig.json"], false).then(async (typecheck) => {
    // The type check (tsc over src/ and test/) comes first in this lane: the browser suite is the longer one.
    const result = typecheck.code !== 0 ? { code: typecheck.code, output: "" } : await vitest([...OTHER_PROJECTS.flatMap((name) => ["--project", name]), "--maxWorkers", "1"], false);
    process.stdout.write(`\n== the type check, then the suites beside the browser suite ==\n${typecheck.output}${typecheck.code !== 0 ? "The type check failed: those suites did not run.\n" : ""}${result.output}\n`);
    return result;
});
const consumerLane = Promise.race([browserLane, otherLane]).then(async () => {
    const started = Date.now();
    const result = await vitest(["--project", "consumer"], false);
    process.stdout.write(`\n== the consumer apps (after the first lane ended; ${((Date.now() - started) / 1000).toFixed(0)} s) ==\n${result.output}\n`);
    return result;
});
const [browser, others, consumer] = await Promise.all([browserLane, otherLane, consumerLane]);
const totals = [0, 0, 0];
for (const { output } of [browser, others, consumer]) {
    const counts = [...output.matchAll(new RegExp(SUMMARY, "gm"))].at(-1);
    if (counts === undefined) continue;
    for (let i = 0; i < 3; i++) totals[i] += Number(counts[i + 1]);
}
// The failures, each named again at the very end, where a CI log's tail shows them.
for (const { output } of [browser, others, consumer]) for (const line of output.match(/^FAILED .*$/gm) ?? []) process.stdout.write(`\n${line}`);
const failed = browser.code !== 0 || others.code !== 0 || consumer.code !== 0;
// A process that failed without a summary (a config error) counts as one failure.
for (const { code, output } of [browser, others, consumer]) if (code !== 0 && !SUMMARY.test(output)) totals[1]++;
process.stdout.write(`\n${totals[0]} passed, ${totals[1]} failed, ${totals[2]} skipped\n`);
process.exit(failed ? 1 : 0);
