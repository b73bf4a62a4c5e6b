import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { signJwt } from "../../src/dev/jwt/jwt";
import { parseCliArgs } from "../../src/dev/cli-args";

const CLI = "dist/dev/cli.js";
const running: ChildProcess[] = [];

beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does).`);
});
afterEach(() => {
    for (const child of running.splice(0)) child.kill("SIGTERM");
});

/** Run the CLI to completion. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
        const child = spawn(process.execPath, [CLI, ...args]);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
}

/** Start a long-running CLI command and resolve with the first URL it prints. */
async function start(args: string[]): Promise<string> {
    return (await startWithStderr(args)).url;
}

/** Start a long-running CLI command; resolve with the first URL it prints and a reader of its stderr so far. */
function startWithStderr(args: string[]): Promise<{ url: string; stderr: () => string }> {
    const child = spawn(process.execPath, [CLI, ...args]);
    running.push(child);
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    return new Promise((resolve, reject) => {
        let output = "";
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${output}`)), 20_000);
        child.stdout.on("data", (chunk) => {
            output += chunk;
            const url = /https?:\/\/127\.0\.0\.1:\d+[^\s]*/.exec(output);
            if (url) {
                clearTimeout(timer);
                resolve({ url: url[0], stderr: () => stderr });
            }
        });
    });
}

/** Poll `condition` every 20 ms until it holds; throws with `what` after `timeout` ms. */
async function eventually(condition: () => boolean, what: string, timeout = 10_000): Promise<void> {
    const deadline = Date.now() + timeout;
    while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

describe("the laravel-echo-mercure command", () => {
    it("documents every hub flag in --help", async () => {
        const result = await run(["--help"]);
        expect(result.code).toBe(0);
        const flags = ["--port", "--jwt-key", "--issuer", "--resource", "--anonymous", "--cors-origin", "--publish-origin", "--cookie-name", "--no-subscriptions", "--no-history", "--dispatch-timeout", "--write-timeout"];
        for (const flag of flags) {
            expect(result.stdout).toContain(flag);
        }
        expect(result.stdout).toContain("not a production hub");
        for (const flag of ["--verbose", "token", "--publish", "--subscribe", "--ttl", "--version"]) {
            expect(result.stdout).toContain(flag);
        }
    });

    it("prints the package version with --version", async () => {
        const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
        const result = await run(["--version"]);
        expect([result.code, result.stdout, result.stderr]).toEqual([0, `laravel-echo-mercure ${version}\n`, ""]);
    });

    it("warns about a --jwt-key shorter than the 32 bytes Laravel needs for HS256, and not about a long one", async () => {
        const short = await startWithStderr(["hub", "--port", "0", "--jwt-key", "short", "--issuer", "test"]);
        await eventually(() => short.stderr().includes("warning"), "the warning");
        expect(short.stderr()).toContain("warning: --jwt-key is 5 bytes long");
        expect(short.stderr()).toContain("32 bytes");
        expect(parseCliArgs(["hub", "--jwt-key", "k".repeat(32), "--issuer", "test"])).toMatchObject({ command: "hub", warnings: [] });
        expect(parseCliArgs(["hub", "--jwt-key", "k".repeat(31), "--issuer", "test"])).toMatchObject({ command: "hub", warnings: [expect.stringContaining("31 bytes")] });
    });

    it("mints tokens the hub accepts, and with --verbose the hub says why it refused one", async () => {
        const key = "a-development-key-of-at-least-32-bytes!";
        const hub = await startWithStderr(["hub", "--port", "0", "--jwt-key", key, "--issuer", "test", "--verbose"]);
        const mint = async (resource: string) => {
            const result = await run(["token", "--jwt-key", key, "--issuer", "test", "--resource", resource, "--publish", "*"]);
            expect([result.code, result.stderr]).toEqual([0, ""]);
            return result.stdout.trim();
        };
        const publishWith = (jwt: string) =>
            fetch(hub.url, {
                method: "POST",
                headers: { Authorization: `Bearer ${jwt}`, "Content-Type": "application/x-www-form-urlencoded" },
                body: "topic=https%3A%2F%2Fexample.com%2Fbooks%2F1&data=hi",
            });
        const accepted = await publishWith(await mint(hub.url));
        expect(accepted.status).toBe(200);
        expect(await accepted.text()).toMatch(/^urn:uuid:/);
        expect(hub.stderr()).toBe("");
        const localhost = hub.url.replace("127.0.0.1", "localhost");
        expect((await publishWith(await mint(localhost))).status).toBe(401);
        await eventually(() => hub.stderr().includes("refused"), "the refusal line");
        expect(hub.stderr()).toContain(`its aud "${localhost}" does not contain this hub's resource identifier "${hub.url}"`);
    });

    it.each([
        [["hub", "--jwt-key", "k", "--issuer", "i", "--bogus"], 'Unknown option "--bogus"'],
        [["hub"], "Missing --jwt-key"],
        [["hub", "--jwt-key", "k"], "Missing --issuer"],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--port", "http"], '--port "http" is not a port number'],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--cors-origin", "localhost"], "is not an origin"],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--dispatch-timeout", "5s"], '--dispatch-timeout "5s" is not a whole number of milliseconds'],
        [["serve"], 'Unknown command "serve"'],
        [["token", "--jwt-key", "k", "--issuer", "i"], "Pass --publish <topic> or --subscribe <topic>"],
        [["token", "--issuer", "i", "--publish", "*"], "Missing --jwt-key"],
        [["token", "--jwt-key", "k", "--issuer", "i", "--publish", "*", "--ttl", "1h"], '--ttl "1h" is not a positive whole number of seconds'],
    ])("exits with 2 and a clear message for %j", async (args, message) => {
        const result = await run(args);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(message);
        expect(result.stderr).toContain("--help");
    });

    it("runs a hub that says what it is and enforces the key and the issuer it was given", async () => {
        const key = "a-development-key-of-at-least-32-bytes!";
        const url = await start(["hub", "--port", "0", "--jwt-key", key, "--issuer", "test", "--no-history", "--cookie-name", "hub_token"]);
        expect(url).toMatch(/\/\.well-known\/mercure$/);
        const origin = new URL(url).origin;
        const home = await fetch(origin + "/");
        expect(home.headers.get("content-type")).toContain("text/html");
        expect(await home.text()).toMatch(/development/i);
        expect((await fetch(url + "?match=x")).status).toBe(401);
        const now = Math.floor(Date.now() / 1000);
        const publisherToken = (iss: string) =>
            signJwt(
                {
                    iss,
                    aud: url,
                    exp: now + 60,
                    authorization_details: [{ type: "https://mercure.rocks/authorization-detail", actions: ["publish"], topics: [{ match: "*" }] }],
                },
                key,
            );
        const publishAs = (iss: string) =>
            fetch(url, {
                method: "POST",
                headers: { Authorization: `Bearer ${publisherToken(iss)}`, "Content-Type": "application/x-www-form-urlencoded" },
                body: "topic=https%3A%2F%2Fexample.com%2Fa&data=hi",
            });
        expect((await publishAs("someone-else")).status).toBe(401);
        const published = await publishAs("test");
        expect(published.status).toBe(200);
        expect(await published.text()).toMatch(/^urn:uuid:/);
        const metadata = (await (await fetch(`${origin}/.well-known/oauth-protected-resource/.well-known/mercure`)).json()) as Record<string, unknown>;
        expect(metadata["mercure_cookie"]).toBe("hub_token");
    });

    it("parses repeatable origins and switches into hub options", () => {
        expect(parseCliArgs(["hub", "--verbose", "--jwt-key=k", "--issuer", "https://app.test", "--issuer=https://other.test", "--cors-origin", "http://a.test", "--cors-origin=http://b.test:8000", "--anonymous", "--no-subscriptions", "--resource", "https://r.test/hub", "--dispatch-timeout", "1000", "--write-timeout=0"])).toEqual({
            command: "hub",
            options: {
                port: 3000,
                jwtKey: "k",
                issuers: ["https://app.test", "https://other.test"],
                dispatchTimeout: 1000,
                writeTimeout: 0,
                anonymous: true,
                subscriptions: false,
                history: true,
                corsOrigins: ["http://a.test", "http://b.test:8000"],
                publishOrigins: [],
                resource: "https://r.test/hub",
            },
            verbose: true,
            warnings: [expect.stringContaining("--jwt-key is 1 bytes long")],
        });
    });

    it("serves the demo page and the browser build", async () => {
        const url = await start(["demo", "--port", "0"]);
        const page = await (await fetch(url)).text();
        expect(page).toContain("/dist/laravel-echo-mercure.iife.js");
        // A page without an icon link makes browsers request /favicon.ico, a 404 on the dev server.
        expect(page).toMatch(/<link rel="icon" href="data:[^"]*">/);
        const bundle = await fetch(new URL("/dist/laravel-echo-mercure.iife.js", url));
        expect(bundle.status).toBe(200);
        expect(await bundle.text()).toContain("EchoMercure");
    });
});
