import fc from "fast-check";
import { beforeAll, describe, expect, it, vi } from "vitest";
import "../../src/connector/mercure-connector";
import { preloadChunks } from "./chunks";
import { shimWebCrypto } from "./determinism";
import { ALL_KNOWN, KNOWN_BUGS } from "./known-bugs";
import { simulate } from "./simulation";
import { CHANNELS } from "./world";

// Every lazy chunk loads through the simulation's loader (test/sim/chunks.ts): no real-time import during a run.
vi.mock("../../src/lazy-chunk", async () => ({ lazyChunk: (await import("./chunks")).simLazyChunk }));

/**
 * The seeds `npm test` runs, each with {@link RUNS} runs of at most {@link STEPS} steps (about 8,000 steps, 15 s on the
 * 2-core machine). `npm run fuzz` runs more (see docs/architecture.md#the-simulation); a bug it finds is kept as a
 * regression case in regressions.test.ts, as its shrunk sequence.
 */
const SEEDS = Array.from({ length: 16 }, (_, index) => index + 1);
const RUNS = 12;
const STEPS = 40;

/** `npm run fuzz` (test/sim/fuzz.mjs) passes its arguments in the environment. */
const fuzz = process.env["SIM_FUZZ"] === "1";
/** `--no-shrink`: survey many seeds, each failure reported as found (not shrunk), without stopping at the first. */
const survey = process.env["SIM_SHRINK"] === "0";
const env = (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name]));
const known = process.env["SIM_KNOWN"] === undefined ? KNOWN_BUGS : new Set(process.env["SIM_KNOWN"] === "none" ? [] : process.env["SIM_KNOWN"].split(",").filter((point) => (ALL_KNOWN as readonly string[]).includes(point)));

beforeAll(async () => {
    await preloadChunks();
    await shimWebCrypto(CHANNELS.filter((name) => name.startsWith("private-encrypted-")));
});

/** Run `seed` and fail with fast-check's report (the seed, the path, the shortest sequence found) and how to replay it. */
async function run(seed: number, runs: number, steps: number, path?: string, totals?: { runs: number; steps: number }): Promise<void> {
    const replayPath = process.env["SIM_REPLAY"];
    const result = await simulate({ seed, runs, steps, known, shrink: fuzz && !survey, ...(path === undefined ? {} : { path }), ...(replayPath === undefined ? {} : { replayPath }) });
    const { details } = result;
    if (totals !== undefined) {
        totals.runs += details.numRuns;
        totals.steps += result.steps;
    }
    if (fuzz) console.log(`SIM seed ${seed}: ${details.numRuns} run(s), ${result.steps} step(s), ${details.failed ? "FAILED" : "passed"}`);
    if (details.failed) {
        const replayPath = /replayPath="([^"]*)"/.exec(String(details.counterexample?.[2]))?.[1];
        const replay = `npm run fuzz -- --seed ${details.seed} --path ${details.counterexamplePath}${replayPath === undefined ? "" : ` --replay '${replayPath}'`} --steps ${steps}${known === KNOWN_BUGS ? "" : ` --known ${[...known].join(",") || "none"}`}`;
        const error = details.errorInstance instanceof Error ? (details.errorInstance.stack ?? details.errorInstance.message) : String(details.errorInstance);
        throw new Error(`${fc.defaultReportMessage(details)}\n\n${error}\n\nReplay (and shrink) with: ${replay}`);
    }
    expect(details.numRuns).toBeGreaterThan(0);
}

describe.skipIf(fuzz)("the seeded simulation (issue 49)", () => {
    for (const seed of SEEDS) {
        it(`keeps every invariant for seed ${seed} (${RUNS} runs of up to ${STEPS} steps)`, () => run(seed, RUNS, STEPS));
    }
});

describe.runIf(fuzz)("the simulation's fuzzer (npm run fuzz)", () => {
    it("keeps every invariant for the seeds asked for", async () => {
        const first = env("SIM_SEED") ?? Date.now() % 1_000_000;
        const seeds = env("SIM_SEEDS") ?? 1;
        const failures: string[] = [];
        const totals = { runs: 0, steps: 0 };
        for (let seed = first; seed < first + seeds; seed++) {
            try {
                await run(seed, env("SIM_RUNS") ?? 10, env("SIM_STEPS") ?? 40, process.env["SIM_PATH"], totals);
            } catch (error) {
                if (!survey) throw error;
                failures.push(String(error));
                console.log(`SIM seed ${seed} failed:\n${String(error).split("\n").filter((line) => /Counterexample|violation|^  step|^Error|Replay/.test(line)).join("\n")}`);
            }
        }
        console.log(`SIM total: ${seeds} seed(s) from ${first}, ${totals.runs} run(s), ${totals.steps} step(s), ${failures.length} failed seed(s)`);
        expect(failures).toEqual([]);
    });
});
