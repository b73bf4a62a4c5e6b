// `npm run fuzz`: the simulation (test/sim/) on many more seeds than `npm test` runs, shrinking a failure to the shortest
// sequence of steps that still fails. Arguments (all optional):
//   --seeds N    how many consecutive seeds to run (default 1)
//   --seed S     the first seed (default: drawn from the clock, and printed)
//   --runs R     runs per seed, each a fresh world and a command sequence (default 10)
//   --steps K    at most K steps per run (default 40)
//   --path P     replay the run at fast-check's path P of seed S (from a failure's report), and shrink it
//   --replay R   with --path: the sequence's replay path (fast-check prints it in the sequence: replayPath="R")
//   --known L    the issue 49 points to leave out (see test/sim/known-bugs.ts): a comma-separated list, or "none"
//   --no-shrink  report the first failing sequence as found, and go on with the next seed (a survey of many seeds)
// It runs vitest's `sim` project with the arguments in the environment, niced: the machine is shared.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const NAMES = { "--seeds": "SIM_SEEDS", "--seed": "SIM_SEED", "--runs": "SIM_RUNS", "--steps": "SIM_STEPS", "--path": "SIM_PATH", "--known": "SIM_KNOWN", "--replay": "SIM_REPLAY" };

const env = { ...process.env, SIM_FUZZ: "1" };
const args = process.argv.slice(2);
for (let at = 0; at < args.length; at++) {
    if (args[at] === "--no-shrink") {
        env.SIM_SHRINK = "0";
        continue;
    }
    const [flag, inline] = args[at].split("=", 2);
    const name = NAMES[flag];
    if (name === undefined) {
        console.error(`unknown argument ${args[at]}; known: ${Object.keys(NAMES).join(", ")}`);
        process.exit(2);
    }
    env[name] = inline ?? args[++at];
}
env.SIM_SEED ??= String(Date.now() % 1_000_000);
console.log(`fuzzing from seed ${env.SIM_SEED} (${env.SIM_SEEDS ?? 1} seed(s), ${env.SIM_RUNS ?? 10} run(s) each, up to ${env.SIM_STEPS ?? 40} steps)`);

const child = spawn("nice", ["-n", "10", process.execPath, join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--project", "sim", "test/sim/simulation.test.ts"], { cwd: ROOT, env, stdio: "inherit" });
child.once("close", (code) => process.exit(code ?? 1));
