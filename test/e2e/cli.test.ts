import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
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
function start(args: string[]): Promise<string> {
    const child = spawn(process.execPath, [CLI, ...args]);
    running.push(child);
    return new Promise((resolve, reject) => {
        let output = "";
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${output}`)), 10_000);
        child.stdout.on("data", (chunk) => {
            output += chunk;
            const url = /https?:\/\/127\.0\.0\.1:\d+[^\s]*/.exec(output);
            if (url) {
                clearTimeout(timer);
                resolve(url[0]);
            }
        });
    });
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
    });

    it.each([
        [["hub", "--jwt-key", "k", "--issuer", "i", "--bogus"], 'Unknown option "--bogus"'],
        [["hub"], "Missing --jwt-key"],
        [["hub", "--jwt-key", "k"], "Missing --issuer"],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--port", "http"], '--port "http" is not a port number'],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--cors-origin", "localhost"], "is not an origin"],
        [["hub", "--jwt-key", "k", "--issuer", "i", "--dispatch-timeout", "5s"], '--dispatch-timeout "5s" is not a whole number of milliseconds'],
        [["serve"], 'Unknown command "serve"'],
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
        expect(parseCliArgs(["hub", "--jwt-key=k", "--issuer", "https://app.test", "--issuer=https://other.test", "--cors-origin", "http://a.test", "--cors-origin=http://b.test:8000", "--anonymous", "--no-subscriptions", "--resource", "https://r.test/hub", "--dispatch-timeout", "1000", "--write-timeout=0"])).toEqual({
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
        });
    });

    it("serves the demo page and the browser build", async () => {
        const url = await start(["demo", "--port", "0"]);
        const page = await (await fetch(url)).text();
        expect(page).toContain("/dist/laravel-echo-mercure.iife.js");
        const bundle = await fetch(new URL("/dist/laravel-echo-mercure.iife.js", url));
        expect(bundle.status).toBe(200);
        expect(await bundle.text()).toContain("EchoMercure");
    });
});
