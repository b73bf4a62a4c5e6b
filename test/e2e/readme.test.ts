import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemo } from "../../src/dev/demo/demo";
import type { DevServer } from "../../src/dev/server";
import {
    blockFile,
    blockKind,
    commandProblems,
    createAppDir,
    describeBlock,
    directiveProblems,
    docFiles,
    extractAllBlocks,
    outputMatches,
    phpProblems,
    ROOT,
    scriptSources,
    shellCommands,
    typeCheck,
    type PackageManifest,
    type ReadmeBlock,
} from "./support/readme-blocks";

// How blocks are found, checked and run: see the comment at the top of ./support/readme-blocks.ts. Every markdown
// file (README.md and docs/*.md) gets the same checks; the run steps of one file share that file's demo and ports.

const files = docFiles();
const blocks = extractAllBlocks(files);
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as PackageManifest;

/** The `.env` values the README's shell blocks expect (a key of at least 32 bytes, as Laravel wants). */
const ENV = { MERCURE_JWT_SECRET: "readme-check-secret-of-at-least-32-bytes", APP_URL: "http://localhost" };

const ofKind = (kind: ReturnType<typeof blockKind>) => blocks.filter((block) => blockKind(block) === kind).map((block) => [describeBlock(block), block] as const);

/** The app directory the blocks compile and run in. */
let app: ReturnType<typeof createAppDir>;

beforeAll(() => {
    if (!existsSync(join(ROOT, "dist/index.d.ts")) || !existsSync(join(ROOT, "dist/dev/cli.js"))) {
        throw new Error('dist/ is missing: run "npm run build" first (npm test does).');
    }
    app = createAppDir();
});
afterAll(() => app?.dispose());

describe("code blocks of README.md and docs/*.md", () => {
    it("has code blocks, each tagged with a language the check knows and with valid directives", () => {
        expect(files).toContain("README.md");
        expect(files.length).toBeGreaterThan(1);
        expect(blocks.length).toBeGreaterThanOrEqual(15);
        const problems = blocks.flatMap((block) => [
            ...(blockKind(block) === null ? [`${describeBlock(block)}: tag it with a language the README check knows (text or dotenv for what is not code)`] : []),
            ...directiveProblems(block).map((problem) => `${describeBlock(block)}: ${problem}`),
        ]);
        expect(problems).toEqual([]);
    });

    describe("TypeScript and JavaScript blocks", () => {
        let diagnostics: Map<number, string[]>;
        beforeAll(() => {
            diagnostics = typeCheck(blocks, app.dir);
        }, 120_000);

        it.each([...ofKind("script"), ...ofKind("html"), ...ofKind("vue")])("%s compiles under strict as its own module", (_name, block) => {
            expect(diagnostics.get(block.index) ?? []).toEqual([]);
        });
    });

    it.each(ofKind("shell"))("%s names real scripts, packages, CLI commands and flags", (_name, block) => {
        const commands = shellCommands(block.code, ENV);
        expect(commands.length).toBeGreaterThan(0);
        expect(commands.flatMap((command) => commandProblems(command, manifest))).toEqual([]);
    });

    // An html block that is a file of an app (the docs' own page on the dev stack) loads the app's own scripts.
    it.each(ofKind("html").filter(([, block]) => blockFile(block) === null))("%s loads a file of the build", (_name, block) => {
        for (const file of scriptSources(block.code)) expect(existsSync(join(ROOT, "dist", file)), file).toBe(true);
    });

    it.each(ofKind("php"))("%s uses only keys of Laravel's mercure connection", (_name, block) => {
        expect(phpProblems(block.code)).toEqual([]);
    });
});

/** A block that runs, and the output block that says what it prints. */
interface RunStep {
    block: ReadmeBlock;
    output: ReadmeBlock | null;
}

/** The run blocks of one file in order, each with its output block (the nearest one below it, see readme-blocks.ts). */
function runSteps(fileBlocks: readonly ReadmeBlock[]): RunStep[] {
    const steps: RunStep[] = [];
    for (const block of fileBlocks) {
        if (block.directive?.startsWith("run") === true) steps.push({ block, output: null });
        if (block.directive === "output") {
            const owner = [...steps].reverse().find((step) => step.output === null);
            if (owner === undefined) throw new Error(`${describeBlock(block)}: an output block with no run block above it`);
            owner.output = block;
        }
    }
    return steps;
}

/** A started process and what it printed so far. */
interface Running {
    child: ChildProcess;
    stdout: string;
    stderr: string;
    exit: Promise<number | null>;
}

/** Start `command` in the app directory, in its own process group (so that stopping it stops its children). */
function launch(command: string, args: string[], env: NodeJS.ProcessEnv): Running {
    const child = spawn(command, args, { cwd: app.dir, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const running: Running = {
        child,
        stdout: "",
        stderr: "",
        exit: new Promise((resolve) => child.on("close", (code) => resolve(code))),
    };
    child.stdout!.on("data", (chunk: Buffer) => (running.stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (running.stderr += chunk.toString("utf8")));
    return running;
}

/** Stop a process group this test started. */
function stop(running: Running): void {
    if (running.child.exitCode === null && running.child.pid !== undefined) {
        try {
            process.kill(-running.child.pid, "SIGTERM");
        } catch {
            // Already gone.
        }
    }
}

/** Wait until `condition` holds, polling every 20 ms; throws with `what` (and the output) after `timeout` ms. */
async function until(condition: () => boolean, what: () => string, timeout: number): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

/** Wait for a process to exit, at most `timeout` ms (then stop it and fail). */
async function finish(running: Running, timeout: number): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeout)));
    const result = await Promise.race([running.exit, timedOut]);
    clearTimeout(timer);
    if (result === "timeout") {
        stop(running);
        throw new Error(`did not exit within ${timeout} ms; stdout:\n${running.stdout}\nstderr:\n${running.stderr}`);
    }
    return result;
}

/** bash prelude: `npx laravel-echo-mercure` is this build's CLI, and nothing else is fetched. */
const SHELL_PRELUDE = `set -e -o pipefail
npx() {
  if [ "$1" = ${JSON.stringify(manifest.name)} ]; then shift; node ${JSON.stringify(join(ROOT, "dist/dev/cli.js"))} "$@"
  else echo "the README check runs no npx but npx ${manifest.name} (asked for: $1)" >&2; return 127; fi
}
`;

const stepsByFile = files.map((file) => ({ file, steps: runSteps(blocks.filter((block) => block.file === file)) }));

describe("examples marked to run", () => {
    it("include the Node.js, startDevServer and curl examples, each with an output block unless it runs in the background", () => {
        const steps = stepsByFile.flatMap(({ steps }) => steps);
        const runs = steps.map((step) => step.block);
        expect(runs.some((block) => block.directive === "run with the demo" && block.code.includes("eventsource"))).toBe(true);
        expect(runs.some((block) => block.language === "js" && block.code.includes("startDevServer"))).toBe(true);
        expect(runs.some((block) => blockKind(block) === "shell" && block.code.includes("curl") && block.code.includes("--publish"))).toBe(true);
        expect(steps.filter((step) => step.block.directive !== "run in the background").every((step) => step.output !== null)).toBe(true);
    });
});

for (const { file, steps } of stepsByFile.filter(({ steps }) => steps.length > 0)) describe(`${file} examples, run as written`, () => {
    /** `127.0.0.1:<README port>` → `127.0.0.1:<real port>`, learnt from the servers started so far. */
    const ports = new Map<string, string>();
    const background: Array<{ step: RunStep; running: Running }> = [];
    let demo: DevServer | null = null;

    const substitute = (code: string) => {
        let result = code;
        for (const [from, to] of ports) result = result.split(`127.0.0.1:${from}`).join(`127.0.0.1:${to}`);
        return result;
    };

    afterAll(async () => {
        for (const { running } of background) stop(running);
        await demo?.close();
    });

    for (const step of steps) {
        const { block } = step;
        it(`${describeBlock(block)} ${block.directive === "run in the background" ? "starts" : `prints what ${file} says`}`, async () => {
            let code = block.code;
            if (block.directive === "run with the demo") {
                demo ??= await startDemo({ port: 0 });
                ports.set("8000", String(demo.port));
            }
            if (blockKind(block) === "shell") {
                const announced = /--port\s+(\d+)/.exec(code)?.[1];
                code = substitute(code);
                if (block.directive === "run in the background" && announced !== undefined) code = code.replace(/--port\s+\d+/, "--port 0");
                const running = launch("bash", ["-c", SHELL_PRELUDE + code], { ...process.env, ...ENV });
                if (block.directive === "run in the background") {
                    background.push({ step, running });
                    // Ready once it printed something: a server its URL, a subscriber the stream's first comment.
                    await until(() => running.stdout !== "" || running.child.exitCode !== null, () => `${describeBlock(block)} to print something`, 20_000);
                    expect(running.child.exitCode, running.stderr).toBeNull();
                    if (announced !== undefined) {
                        const real = /https?:\/\/127\.0\.0\.1:(\d+)/.exec(running.stdout)?.[1];
                        expect(real, running.stdout).toBeDefined();
                        ports.set(announced, real!);
                    }
                    return;
                }
                const status = await finish(running, 60_000);
                expect({ status, stderr: running.stderr }).toEqual({ status: 0, stderr: "" });
                expect(outputMatches(running.stdout, step.output!.code), `stdout:\n${running.stdout}`).toBe(true);
                return;
            }
            // A block that require()s and imports nothing is CommonJS (docs/node-and-ssr.md shows both kinds).
            const commonJs = /\brequire\(/.test(code) && !/^import /m.test(code);
            const script = join(app.dir, `run-${block.index}.${commonJs ? "cjs" : "mjs"}`);
            writeFileSync(script, substitute(code));
            const running = launch(process.execPath, [script], process.env);
            const status = await finish(running, 60_000);
            expect({ status, stderr: running.stderr }).toEqual({ status: 0, stderr: "" });
            expect(outputMatches(running.stdout, step.output!.code), `stdout:\n${running.stdout}`).toBe(true);
        }, 120_000);
    }

    it(`has the blocks that ran in the background print what ${file} says`, async () => {
        for (const { step, running } of background) {
            if (step.output === null) continue;
            const expected = step.output.code;
            await until(() => outputMatches(running.stdout, expected), () => `${describeBlock(step.block)} to print:\n${expected}\nit printed:\n${running.stdout}`, 20_000);
        }
    }, 60_000);
});
