import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findChromium, launchChromium, shouldRunBrowserTests } from "../browser/support/chromium";
import { closedPort } from "../support/ports";
import { blockKind, describeBlock, extractBlocks, outputMatches, typeCheck, extractAllBlocks, docFiles } from "../e2e/support/readme-blocks";
import { npmEnvironment, prepareScratch, ROOT, type Scratch } from "./support/scratch";

// Issue 51: apps built from the packed package, in a folder outside the repository that installs only the tarball and
// what an app installs from the npm registry (no pusher-js, none of our devDependencies); see ./support/scratch.ts.
// Their files are the docs' own blocks (./support/doc-files.ts), so a doc example that stops working fails here.
// One install for all the apps, one Chromium for the pages this file drives (the Playwright example runs its own).

/** Whether the apps' pages run in Chromium: skipped after a warning when it is missing locally, failed when missing in CI. */
const inChromium = shouldRunBrowserTests(findChromium());

let scratch: Scratch;
let browser: Browser | null = null;
/** What each step took, printed at the end (the time the consumer apps add to `npm test`). */
const timings: Array<[string, number]> = [];

beforeAll(() => {
    scratch = prepareScratch();
    timings.push(["npm pack + npm ci", scratch.installMs]);
}, 600_000);

afterAll(async () => {
    await browser?.close();
    scratch?.dispose();
    console.log(`consumer apps: ${timings.map(([step, ms]) => `${step} ${(ms / 1000).toFixed(1)} s`).join(", ")}`);
});

/** What a finished command printed. */
interface Finished {
    code: number | null;
    stdout: string;
    stderr: string;
}

/** Run `command` in `cwd` (a folder of the scratch app), without npm's variables of this repository's run; times the step. */
async function run(step: string, command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeout = 240_000): Promise<Finished> {
    const started = Date.now();
    const child = spawn(command, args, { cwd, env: { ...npmEnvironment(), NO_COLOR: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    clearTimeout(timer);
    timings.push([step, Date.now() - started]);
    const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");
    return { code, stdout: plain(stdout), stderr: plain(stderr) };
}

/** The scratch app's folder `name`. */
const app = (name: string) => join(scratch.dir, name);
/** A binary the scratch app installed. */
const bin = (name: string) => join(scratch.dir, "node_modules/.bin", name);

/** The one Chromium of this file, launched at first use. */
async function chromium(): Promise<Browser> {
    browser ??= await launchChromium(findChromium());
    return browser;
}

/** A page in a fresh context whose uncaught errors and console errors are collected. */
async function openPage(): Promise<{ context: BrowserContext; page: Page; errors: string[]; console: string[] }> {
    const context = await (await chromium()).newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    const console: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => {
        console.push(message.text());
        if (message.type() === "error") errors.push(message.text());
    });
    return { context, page, errors, console };
}

/** Wait until `page`'s text matches `pattern` (at most 20 s). */
async function seen(page: Page, pattern: RegExp): Promise<void> {
    await page.getByText(pattern).first().waitFor({ timeout: 20_000 });
}

/** The tarball's own dev entry and testing kit, as the scratch app installed them. */
async function installedDev(): Promise<typeof import("../../src/dev/index")> {
    return (await import(join(app("node_modules/laravel-echo-mercure/dist/dev/index.js")))) as typeof import("../../src/dev/index");
}
async function installedE2e(): Promise<typeof import("../../src/testing/e2e")> {
    return (await import(join(app("node_modules/laravel-echo-mercure/dist/testing/e2e.js")))) as typeof import("../../src/testing/e2e");
}

describe("the scratch app", () => {
    it("installs the packed package and what an app installs, without pusher-js", () => {
        const installed = JSON.parse(readFileSync(app("node_modules/laravel-echo-mercure/package.json"), "utf8")) as { version: string };
        expect(installed.version).toBe((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
        expect(existsSync(app("node_modules/pusher-js"))).toBe(false);
        expect(existsSync(app("node_modules/laravel-echo-mercure/src"))).toBe(false);
    });
});

describe("the package as tools see it", () => {
    it("has nothing publint reports", async () => {
        const { publint } = await import("publint");
        const { formatMessage } = await import("publint/utils");
        const tarball = readFileSync(scratch.tarball);
        const { messages, pkg } = await publint({ pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) }, level: "suggestion" });
        expect(messages.map((message) => formatMessage(message, pkg))).toEqual([]);
    });

    it("resolves as docs/configuration.md's \"Module formats\" says (@arethetypeswrong/cli): CommonJS for the core and the testing kit, ES modules only elsewhere", async () => {
        // ./iife is a file for a <script> tag, not a module: it has no types by design.
        // Its JSON goes to a file: attw exits before a pipe takes the whole of it.
        const report = app("attw.json");
        const command = [join(ROOT, "node_modules/@arethetypeswrong/cli/dist/index.js"), scratch.tarball, "--format", "json", "--no-definitely-typed", "--exclude-entrypoints", "iife"];
        const result = await run("attw", "/bin/sh", ["-c", `"$0" "$@" > ${JSON.stringify(report)}`, process.execPath, ...command], scratch.dir);
        expect(result.stderr).toBe("");
        const { analysis } = JSON.parse(readFileSync(report, "utf8")) as { analysis: { problems: Array<{ kind: string; entrypoint: string; resolutionKind: string }> } };
        const problems = analysis.problems.map((problem) => `${problem.entrypoint} ${problem.resolutionKind}: ${problem.kind}`).sort();
        // The ES-only entries (docs/configuration.md "Module formats"): /dev and /testing/e2e are `require()`d by Node.js
        // >= 20.19 (require(esm)) and typed from CommonJS by TypeScript's `nodenext`; the browser entries are for bundlers.
        // attw's node16 check from CommonJS flags exactly these; node10 resolves all of them (typesVersions).
        const esmOnly = ["./dev", "./discovery", "./http", "./no-pusher", "./react", "./svelte", "./testing/e2e", "./vite", "./vue"];
        expect(problems).toEqual(esmOnly.map((entry) => `${entry} node16-cjs: CJSResolvesToESM`));
    }, 120_000);
});

describe("the README's and docs' TypeScript, compiled in the app under strict", () => {
    it("compiles every script block against the installed package, checking its declaration files (skipLibCheck off)", () => {
        const started = Date.now();
        const dir = app("typecheck");
        writeFileSync(app("typecheck-globals.d.ts"), readFileSync(join(ROOT, "test/consumer/support/app-globals.d.ts"), "utf8"));
        writeFileSync(app("typecheck-shims.d.ts"), readFileSync(join(ROOT, "test/e2e/support/readme-shims.d.ts"), "utf8"));
        const blocks = extractAllBlocks(docFiles());
        /** laravel-echo's own declarations import pusher-js, which the app does not install: what skipLibCheck is for (README "The front end"). */
        const documented: string[] = [];
        const libraryProblems: string[] = [];
        const diagnostics = typeCheck(
            blocks,
            dir,
            { globals: [app("typecheck-globals.d.ts"), app("typecheck-shims.d.ts")], typeRoots: [app("node_modules/@types")], skipLibCheck: false, vueMacros: false },
            (diagnostic) => {
                const file = diagnostic.file?.fileName ?? "";
                if (!file.includes("/node_modules/")) return false;
                const text = `${file.slice(file.indexOf("/node_modules/") + 1)}: TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, " ")}`;
                if (file.includes("/node_modules/laravel-echo/") && diagnostic.code === 2307 && text.includes("'pusher-js'")) documented.push(text);
                // Another library's declarations are its business; ours must compile.
                else if (file.includes("/node_modules/laravel-echo-mercure/")) libraryProblems.push(text);
                return true;
            },
        );
        timings.push(["tsc", Date.now() - started]);
        expect(libraryProblems).toEqual([]);
        expect(documented.length, "laravel-echo's declarations still need pusher-js: the README says so").toBeGreaterThan(0);
        const problems = blocks.filter((block) => ["script", "vue", "svelte", "html"].includes(blockKind(block) ?? "")).flatMap((block) => (diagnostics.get(block.index) ?? []).map((line) => `${describeBlock(block)}: ${line}`));
        expect(problems).toEqual([]);
    }, 240_000);
});

describe("the testing kit in the apps' component tests", () => {
    it.each(["react", "vue"])("passes the %s component test of docs/testing.md under Vitest, configured as docs/testing.md says, with no warning", async (framework) => {
        const result = await run(`vitest (${framework})`, bin("vitest"), ["run"], app(framework), { CI: "true", FORCE_COLOR: "0" });
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
        expect(result.stdout).toMatch(/Tests\s+1 passed \(1\)/);
        // Issue 51: maps that named the unpublished src/ made Vite warn once per file.
        expect(result.stdout).not.toMatch(/Sourcemap|pusher-js|warn/i);
    }, 120_000);

    it("passes the CommonJS Jest test of docs/testing.md with Jest's defaults (its require() gets the kit's CommonJS build)", async () => {
        const result = await run("jest (CommonJS)", process.execPath, [app("node_modules/jest/bin/jest.js"), "--ci", "--rootDir", "."], app("jest"), { FORCE_COLOR: "0" });
        expect({ code: result.code, output: result.stderr }).toMatchObject({ code: 0 });
        expect(result.stderr).toMatch(/Tests:\s+1 passed, 1 total/);
    }, 120_000);
});

describe("Node.js scripts of docs/node-and-ssr.md, against the package's demo", () => {
    const blocks = extractBlocks(readFileSync(join(ROOT, "docs/node-and-ssr.md"), "utf8"), "docs/node-and-ssr.md");
    const runs = blocks.filter((block) => block.directive === "run with the demo");
    const outputOf = (block: (typeof blocks)[number]) => blocks.find((other) => other.index > block.index && other.directive === "output")!;

    it("has an ES module and a CommonJS script", () => {
        expect(runs.map((block) => (/^import /m.test(block.code) ? "esm" : /\brequire\(/.test(block.code) ? "cjs" : "?"))).toEqual(["esm", "cjs"]);
    });

    it.each(runs.map((block) => [describeBlock(block), block] as const))("%s prints what the page says", async (_name, block) => {
        const { startDemo } = await installedDev();
        const demo = await startDemo({ port: 0 });
        try {
            mkdirSync(app("node"), { recursive: true });
            const file = app(`node/run-${block.index}.${/^import /m.test(block.code) ? "mjs" : "cjs"}`);
            writeFileSync(file, block.code.split("http://127.0.0.1:8000").join(demo.url));
            const result = await run(`node ${file.split("/").at(-1)!}`, process.execPath, [file], app("node"));
            expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
            expect(outputMatches(result.stdout, outputOf(block).code), result.stdout).toBe(true);
        } finally {
            await demo.close();
        }
    }, 60_000);
});

/** The page of a Vite app, as Laravel's layout would load its entry. */
const INDEX_HTML = (entry: string) => `<!doctype html>\n<html><head><title>App</title></head><body><div id="app"></div><script type="module" src="./${entry}"></script></body></html>\n`;

/** A key for encrypted channels (base64 of 32 bytes): any will do in a test. */
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");

describe.skipIf(!inChromium).each([
    ["react", "app.tsx", true],
    ["vue", "app.ts", true],
    ["svelte", "app.ts", false],
] as const)("the %s app of the docs, built by Vite and run in Chromium", (framework, entry, encrypted) => {
    it("builds with `vite build`, and receives on a private channel what the server broadcasts", async () => {
        writeFileSync(app(`${framework}/index.html`), INDEX_HTML(entry));
        const build = await run(`vite build (${framework})`, bin("vite"), ["build", "--base", "/dist/"], app(framework), { FORCE_COLOR: "0" });
        expect({ code: build.code, stderr: build.stderr.replace(/^.*chunks are larger than[\s\S]*$/m, "") }).toEqual({ code: 0, stderr: "" });
        const { startTestStack } = await installedE2e();
        // Vite's content-hashed files served as production serves them (the dev server's cacheAssets, issue 53).
        const stack = await startTestStack({ server: { distDir: app(`${framework}/dist`), cacheAssets: /^assets\//, pages: { "/orders/42": readFileSync(app(`${framework}/dist/index.html`), "utf8") }, app: { encryptionKey: ENCRYPTION_KEY } } });
        const { context, page, errors, console } = await openPage();
        const assets: Array<string | null> = [];
        page.on("response", (response) => {
            if (new URL(response.url()).pathname.startsWith("/dist/assets/")) assets.push(response.headers()["cache-control"] ?? null);
        });
        const started = Date.now();
        try {
            await stack.login(context, 1);
            await page.goto(stack.url + "/orders/42");
            await seen(page, /Order 42: pending.*\(connected\)/);
            expect(assets.length).toBeGreaterThan(0);
            expect(new Set(assets)).toEqual(new Set(["public, max-age=31536000, immutable"]));
            if (framework === "svelte") await seen(page, /watched by Ada/);
            await stack.broadcast("private-orders.42", "OrderShipped", { order: { id: 42, status: "shipped" } });
            await seen(page, /Order 42: shipped/);
            if (encrypted) {
                await stack.broadcast("news", ".headline", { title: "Hello" });
                await seen(page, /shipped\. Hello/);
                await stack.broadcast("private-encrypted-orders.42", "NoteAdded", { note: "sealed note" });
                await expect.poll(() => console, { timeout: 20_000 }).toContain("sealed note");
            }
            expect(errors).toEqual([]);
        } finally {
            timings.push([`Chromium (${framework})`, Date.now() - started]);
            await context.close();
            await stack.stop();
        }
    }, 180_000);

    it.runIf(framework === "react")("on a page rendered with the hub's last event id, receives what was broadcast before its scripts ran (issue 52)", async () => {
        // The page as the docs' middleware renders it (the stand-in asks the hub at each request), its scripts held back
        // until the order shipped: only the cursor in its <head> link brings that event to the app.
        const html = readFileSync(app(`${framework}/dist/index.html`), "utf8");
        const { startTestStack } = await installedE2e();
        const stack = await startTestStack({ server: { distDir: app(`${framework}/dist`), pages: { "/orders/42": (rendered) => html.replace("<head>", () => `<head>${rendered.hubLink}`) }, app: { encryptionKey: ENCRYPTION_KEY } } });
        const { context, page, errors } = await openPage();
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        await page.route("**/dist/assets/**", async (route) => {
            await held;
            await route.continue();
        });
        try {
            await stack.login(context, 1);
            // Something in the hub's history first, so that the page's cursor is an event's id (a fresh hub renders "earliest").
            await stack.broadcast("news", "Published", { title: "before the page" });
            await page.goto(stack.url + "/orders/42", { waitUntil: "commit" });
            await expect.poll(() => page.locator('head > link[rel="mercure"]').getAttribute("last-event-id")).toMatch(/^urn:uuid:/);
            await stack.broadcast("private-orders.42", "OrderShipped", { order: { id: 42, status: "shipped" } });
            release();
            await seen(page, /Order 42: shipped/);
            expect(errors).toEqual([]);
        } finally {
            await context.close();
            await stack.stop();
        }
    }, 180_000);
});

/**
 * A page of a multi-page app on the installed package's `<script>` build: `resumeAcrossPages` and the hub's `host` (a
 * hub found by discovery goes through the tabs' engine), the session's CSRF token in its `<head>` as a Blade layout
 * renders it, private `orders.42` listened to, each step written into the page.
 */
const NAVIGATION_PAGE = `<!doctype html>
<html><head><meta name="csrf-token" content="consumer0session0token0of0forty0chars00"><script src="/dist/laravel-echo-mercure.iife.js"></script></head>
<body><p id="log"></p><script>
const log = (line) => document.getElementById("log").append(line + "; ");
const echo = new EchoMercure.MercureEcho({ broadcaster: "mercure", host: "/.well-known/mercure", resumeAcrossPages: true });
echo.private("orders.42").subscribed(() => log("subscribed")).listen("OrderShipped", (event) => log("shipped " + event.n));
</script></body></html>
`;

describe.skipIf(!inChromium)("a multi-page app on the packed <script> build (issue 53's navigation)", () => {
    it("opens the next page's stream beside its auth request: it receives while the answer is held, and keeps that stream", async () => {
        const { startTestStack } = await installedE2e();
        const stack = await startTestStack({ server: { distDir: app("node_modules/laravel-echo-mercure/dist"), pages: { "/orders/1": NAVIGATION_PAGE, "/orders/2": NAVIGATION_PAGE } } });
        const { context, page, errors } = await openPage();
        try {
            await stack.login(context, 1);
            await page.goto(stack.url + "/orders/1");
            await seen(page, /subscribed/);
            await stack.broadcast("private-orders.42", "OrderShipped", { n: 1 });
            await seen(page, /shipped 1/);
            // The next page's auth request is held until the test lets it go; its streams are counted.
            let release = (): void => undefined;
            const held = new Promise<void>((resolve) => (release = resolve));
            let asked = 0;
            await page.route("**/broadcasting/auth", async (route) => {
                asked++;
                await held;
                await route.continue();
            });
            const streams: string[] = [];
            page.on("request", (request) => void (request.resourceType() === "eventsource" && streams.push(request.url())));
            await page.goto(stack.url + "/orders/2");
            await expect.poll(() => asked, { timeout: 20_000 }).toBe(1);
            await stack.broadcast("private-orders.42", "OrderShipped", { n: 2 });
            // 2 arrives with the answer held: the stream opened beside the request, on the cookie the first page left.
            await seen(page, /shipped 2/);
            expect(await page.locator("#log").textContent()).toBe("shipped 2; ");
            expect(streams).toHaveLength(1);
            release();
            await seen(page, /subscribed/);
            await stack.broadcast("private-orders.42", "OrderShipped", { n: 3 });
            await seen(page, /shipped 3/);
            expect(await page.locator("#log").textContent()).toBe("shipped 2; subscribed; shipped 3; ");
            expect(streams).toHaveLength(1);
            expect(asked).toBe(1);
            expect(errors).toEqual([]);
        } finally {
            await context.close();
            await stack.stop();
        }
    }, 120_000);
});

describe.skipIf(!inChromium)("the Playwright example of docs/testing.md", () => {
    it("passes with @playwright/test, on the React app's build", async () => {
        expect(existsSync(app("react/dist/index.html")), "the React app is built above").toBe(true);
        writeFileSync(
            app("react/playwright.config.ts"),
            `import { defineConfig } from "@playwright/test";\n\nexport default defineConfig({\n    testDir: "e2e",\n    workers: 1,\n    reporter: "line",\n    use: { launchOptions: { executablePath: ${JSON.stringify(findChromium().path)}, args: ["--no-sandbox"] } },\n});\n`,
        );
        const result = await run("playwright test", process.execPath, [app("node_modules/@playwright/test/cli.js"), "test"], app("react"), { FORCE_COLOR: "0" });
        expect({ code: result.code, output: result.stdout + result.stderr }).toMatchObject({ code: 0 });
        expect(result.stdout).toMatch(/1 passed/);
    }, 180_000);
});

describe.skipIf(!inChromium)("your own page on the dev stack, without PHP (docs/getting-started.md)", () => {
    let server: ReturnType<typeof spawn> | null = null;
    let url = "";
    let output = "";
    /** The port Vite's dev server will listen on, told to server.mjs as the origin it trusts (`VITE_ORIGIN`). */
    let vitePort = 0;
    afterAll(() => server?.kill("SIGTERM"));

    /** A browser of its own (a context), logged in as `name` through the page's own button. */
    async function visitor(origin: string, name: string) {
        const opened = await openPage();
        await opened.page.goto(origin + "/");
        // The login regenerates the session's CSRF token, as Laravel's does: an auth request that the guest page sent
        // just before it may be refused (419) on that page, which the page's reload then ends. What is checked is the
        // page after the login, from its navigation on (its scripts have not run when it commits).
        const reloaded = opened.page.waitForEvent("framenavigated", (frame) => frame === opened.page.mainFrame());
        await opened.page.getByRole("button", { name: `Log in as ${name}` }).click();
        await reloaded;
        opened.errors.length = 0;
        await seen(opened.page, new RegExp(`Logged in as ${name}`));
        return opened;
    }

    /** POST /dev/broadcast as the page's curl lines do. */
    async function broadcast(body: unknown): Promise<void> {
        const response = await fetch(`${url}/dev/broadcast`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
        expect(response.status).toBe(200);
    }

    it("builds with `npx vite build` and starts with `node server.mjs`, logging the folder it serves", async () => {
        const build = await run("vite build (vanilla)", bin("vite"), ["build"], app("vanilla"), { FORCE_COLOR: "0" });
        expect({ code: build.code, stderr: build.stderr }).toEqual({ code: 0, stderr: "" });
        vitePort = await closedPort();
        const env = { ...npmEnvironment(), PORT: "0", VITE_ORIGIN: `http://127.0.0.1:${vitePort}` };
        server = spawn(process.execPath, ["server.mjs"], { cwd: app("vanilla"), env, stdio: ["ignore", "pipe", "pipe"] });
        server.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
        server.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
        const deadline = Date.now() + 20_000;
        while (!/Open (http:\/\/127\.0\.0\.1:\d+)\//.test(output) && Date.now() < deadline && server.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
        url = /Open (http:\/\/127\.0\.0\.1:\d+)\//.exec(output)?.[1] ?? "";
        expect(url, output).not.toBe("");
        expect(output).toContain(`laravel-echo-mercure dev server: serves ${app("vanilla/build")} at ${url}/dist/`);
    }, 120_000);

    it("shows two users each other (presence), carries a whisper between them, and delivers public, private and encrypted broadcasts", async () => {
        expect(url).not.toBe("");
        const started = Date.now();
        const ann = await visitor(url, "Ann");
        const bob = await visitor(url, "Bob");
        try {
            await seen(bob.page, /here: Ann, Bob/);
            await seen(ann.page, /joining: Bob/);
            await ann.page.getByRole("button", { name: 'Whisper "typing"' }).click();
            await seen(bob.page, /Ann is typing/);
            await broadcast({ channels: ["private-App.Models.User.1"], event: "App\\Events\\OrderShipped", payload: { order: { id: 7 } } });
            await seen(ann.page, /order 7 shipped/);
            await broadcast({ channels: ["private-encrypted-secrets.1"], event: "App\\Events\\SecretShared", payload: { text: "sealed" } });
            await seen(ann.page, /secret: sealed/);
            await seen(bob.page, /secret: sealed/);
            await broadcast({ channels: ["news"], event: "headline", payload: { title: "Hello" } });
            await seen(ann.page, /news: Hello/);
            await seen(bob.page, /news: Hello/);
            expect(await bob.page.getByText("order 7 shipped").count()).toBe(0);
            expect([...ann.errors, ...bob.errors]).toEqual([]);
            // Issue 53: each page is alone in its browser and joined its channels once, so it downloaded the capabilities'
            // chunks it uses and none of tab sharing's (the app's bundler names each chunk after its module).
            for (const visitorPage of [ann.page, bob.page]) {
                const scripts = await visitorPage.evaluate(() => performance.getEntriesByType("resource").map((entry) => new URL(entry.name).pathname).filter((path) => path.endsWith(".js")));
                expect(scripts.filter((path) => /\/presence-capability-[\w-]+\.js$/.test(path))).toHaveLength(1);
                expect(scripts.filter((path) => /\/(share-platform|leadership|protocol)-[\w-]+\.js$/.test(path))).toEqual([]);
            }
        } finally {
            timings.push(["Chromium (own page)", Date.now() - started]);
            await ann.context.close();
            await bob.context.close();
        }
    }, 120_000);

    it("runs behind Vite's dev server, which sends the stack's routes on to it (one origin)", async () => {
        expect(url).not.toBe("");
        const config = app("vanilla/vite.config.js");
        writeFileSync(config, readFileSync(config, "utf8").split("http://127.0.0.1:8000").join(url));
        const port = vitePort;
        const vite = spawn(bin("vite"), ["--port", String(port), "--strictPort", "--host", "127.0.0.1"], { cwd: app("vanilla"), env: { ...npmEnvironment(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
        let printed = "";
        vite.stdout.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk.replace(/\x1b\[[0-9;]*m/g, "")));
        const started = Date.now();
        try {
            const deadline = Date.now() + 30_000;
            while (!printed.includes(`:${port}`) && Date.now() < deadline && vite.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
            expect(printed).toContain(`:${port}`);
            const ann = await visitor(`http://127.0.0.1:${port}`, "Ann");
            try {
                await seen(ann.page, /here: Ann/);
                await broadcast({ channels: ["private-App.Models.User.1"], event: "App\\Events\\OrderShipped", payload: { order: { id: 8 } } });
                await seen(ann.page, /order 8 shipped/);
                expect(ann.errors).toEqual([]);
            } finally {
                await ann.context.close();
            }
        } finally {
            timings.push(["Vite dev server", Date.now() - started]);
            vite.kill("SIGTERM");
        }
    }, 120_000);
});
