import fc from "fast-check";
import { vi } from "vitest";
import { resetChunks } from "./chunks";
import { commandArbitraries, type Model } from "./commands";
import { seededRandom, useSeededRandomness } from "./determinism";
import { World, type WorldConfig } from "./world";

/*
 * One seed of the simulation: fast-check draws each run's world (its config and its randomness) and a sequence of
 * commands (commands.ts) from the seed, and runs the commands against a fresh world on fake timers. See
 * docs/architecture.md#the-simulation for what it models and how to replay a seed.
 */

/** The fake clock's start (2026-01-01): the same wall clock in every run. */
const EPOCH = Date.UTC(2026, 0, 1);

/** How a seed runs. */
export interface SimulationOptions {
    /** fast-check's seed. */
    readonly seed: number;
    /** How many runs (each a fresh world and a command sequence). */
    readonly runs: number;
    /** At most this many commands per run. */
    readonly steps: number;
    /** Replay this run (fast-check's `path` of a counterexample) instead of drawing runs. */
    readonly path?: string;
    /** With `path`: the counterexample's command `replayPath` (fast-check prints it in the sequence, as a comment). */
    readonly replayPath?: string;
    /** The issue 49 points left out (known-bugs.ts). */
    readonly known: ReadonlySet<string>;
    /** Shrink a failure to the shortest sequence that still fails (slow: each try is a run). */
    readonly shrink: boolean;
}

/** What one seed did: fast-check's report, and how many steps ran. */
export interface SimulationResult {
    readonly details: fc.RunDetails<[WorldConfig, number, Iterable<fc.AsyncCommand<Model, World>>]>;
    readonly steps: number;
}

/** The world configurations a run draws (see {@link WorldConfig}). */
function configs(): fc.Arbitrary<WorldConfig> {
    return fc.record({
        history: fc.boolean(),
        bearerFunction: fc.boolean(),
        xsrfCookie: fc.boolean(),
        rotateXsrf: fc.boolean(),
        leaveDelay: fc.constantFrom(5_000, 5_000, 0),
    });
}

/**
 * Run `commands` against a fresh world of `config`, its randomness drawn from `worldSeed`, on fake timers; rejects with
 * the first step's violations. Resolves with the number of steps run, which `counted` hears either way. (A regression
 * case replays a shrunk sequence through this: see regressions.test.ts.)
 */
export async function runScenario(
    config: WorldConfig,
    worldSeed: number,
    commands: Iterable<fc.AsyncCommand<Model, World>>,
    known: ReadonlySet<string>,
    counted: (steps: number) => void = () => undefined,
): Promise<number> {
    const random = seededRandom(worldSeed);
    useSeededRandomness(random);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"], now: EPOCH });
    resetChunks(() => 1 + Math.floor(random() * 150));
    const world = new World(config, random, known);
    const model: Model = { tabs: [], hubUp: true, known, history: config.history, bearerFunction: config.bearerFunction, xsrfCookie: config.xsrfCookie };
    try {
        await fc.asyncModelRun(() => ({ model, real: world }), commands);
    } finally {
        counted(world.step);
        world.dispose();
        vi.useRealTimers();
    }
    return world.step;
}

/** Run one seed (see {@link SimulationOptions}). */
export async function simulate(options: SimulationOptions): Promise<SimulationResult> {
    let steps = 0;
    const property = fc.asyncProperty(
        configs(),
        fc.integer(),
        fc.commands(commandArbitraries(), { maxCommands: options.steps, size: "max", ...(options.replayPath === undefined ? {} : { replayPath: options.replayPath }) }),
        async (config, worldSeed, commands) => {
            await runScenario(config, worldSeed, commands, options.known, (run) => (steps += run));
        },
    );
    const details = await fc.check(property, {
        seed: options.seed,
        numRuns: options.runs,
        endOnFailure: !options.shrink,
        ...(options.path === undefined ? {} : { path: options.path }),
    });
    return { details, steps };
}
