import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { EventSource } from "eventsource";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { MercureEcho } from "../../src/connector/mercure-echo";
import { cookieJarFetch } from "../../src/dev/cookie-jar";
import { signJwt } from "../../src/dev/jwt/jwt";
import { parseCliArgs } from "../../src/dev/cli-args";
import { CURRENT_HUB, referenceHubAvailable, startReferenceHub, type ReferenceHub, type ReferenceHubConfig } from "../support/reference-hub";

const CLI = "dist/dev/cli.js";
const running: ChildProcess[] = [];

beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does).`);
});
const hubs: ReferenceHub[] = [];
const echos: MercureEcho[] = [];
afterEach(async () => {
    for (const echo of echos.splice(0)) echo.disconnect();
    for (const child of running.splice(0)) child.kill("SIGTERM");
    await Promise.all(hubs.splice(0).map((hub) => hub.close()));
});

/** A key of the 32 bytes Laravel's HS256 needs. */
const KEY = "a-development-key-of-at-least-32-bytes!";

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
        for (const flag of ["--verbose", "token", "--publish", "--subscribe", "--ttl", "--version", "--hub", "--audience", "resource_identifier"]) {
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
        [["demo", "--jwt-key", KEY], "--jwt-key applies to the demo only with --hub"],
        [["demo", "--hub", "ftp://hub.test/.well-known/mercure", "--jwt-key", KEY], "is not a hub URL"],
        [["demo", "--hub", "http://hub.test"], "Missing --jwt-key"],
        [["demo", "--hub", "http://hub.test", "--jwt-key", "short"], "--jwt-key is 5 bytes long"],
        [["demo", "--hub", "http://hub.test", "--jwt-key", KEY, "--cookie-name", "__Secure-mercure_access_token"], "browsers keep a __ cookie only over https"],
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

/** How `demo --hub` ended its start: running at `url`, or exited with `code`; what it printed either way. */
interface DemoStart {
    url: string | null;
    code: number | null;
    stdout: string;
    stderr: () => string;
}

/** Start `demo --hub …`; resolve once it says it runs (the URL) or exits (the code). */
function startOwnHubDemo(args: string[]): Promise<DemoStart> {
    const child = spawn(process.execPath, [CLI, "demo", "--port", "0", ...args]);
    running.push(child);
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`demo --hub neither ran nor exited within 20 s: ${stdout}${stderr}`)), 20_000);
        child.stdout.on("data", (chunk) => {
            stdout += chunk;
            const url = /demo running at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout);
            if (url === null) return;
            clearTimeout(timer);
            resolve({ url: url[1]!, code: null, stdout, stderr: () => stderr });
        });
        child.on("close", (code) => {
            clearTimeout(timer);
            resolve({ url: null, code, stdout, stderr: () => stderr });
        });
    });
}

/** A reference hub configured as a user would configure theirs for the demo (the audience pinned). */
async function userHub(config: Partial<ReferenceHubConfig> = {}): Promise<ReferenceHub> {
    const hub = await startReferenceHub(CURRENT_HUB, {
        jwtKey: KEY,
        issuer: "https://app.test",
        resource: "https://hub.test/.well-known/mercure",
        cookieName: "demo_hub_token",
        publishOrigins: ["*"],
        ...config,
    });
    hubs.push(hub);
    return hub;
}

/** The flags that match {@link userHub}'s defaults. */
const USER_HUB_FLAGS = ["--jwt-key", KEY, "--issuer", "https://app.test", "--cookie-name", "demo_hub_token", "--audience", "https://hub.test/.well-known/mercure"];

describe.skipIf(!referenceHubAvailable())(`demo --hub against the user's own hub [reference hub ${CURRENT_HUB}]`, () => {
    it("prints what the hub needs, checks it, and a Node client of the demo receives a private broadcast made from the demo page's route", async () => {
        const hub = await userHub();
        const demo = await startOwnHubDemo(["--hub", hub.url, ...USER_HUB_FLAGS]);
        expect([demo.code, demo.stderr()]).toEqual([null, ""]);
        const url = demo.url!;
        expect(demo.stdout).toContain(`Your hub at ${hub.url}`);
        for (const line of ["issuer https://app.test {", "jwt {env.MERCURE_JWT_SECRET}", "resource_identifier https://hub.test/.well-known/mercure", "cookie_name demo_hub_token", `publish_origins ${url}`, "subscriptions"]) {
            expect(demo.stdout).toContain(line);
        }
        // The key itself is never printed.
        expect(demo.stdout).not.toContain(KEY);

        // What the demo page does, from Node.js: log in as Ann, listen to her notifications, broadcast one to her.
        const fetch = cookieJarFetch();
        expect((await fetch(`${url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
        const page = await fetch(url);
        expect(await page.text()).toContain('host: "/.well-known/mercure"');
        const echo = new MercureEcho({ host: `${url}/.well-known/mercure`, eventSource: EventSource, fetch });
        echos.push(echo);
        const received: unknown[] = [];
        const errors: unknown[] = [];
        let subscribed = false;
        echo.private("App.Models.User.1")
            .notification((notification: unknown) => received.push(notification))
            .subscribed(() => (subscribed = true))
            .error((error: unknown) => errors.push(error));
        await eventually(() => subscribed || errors.length > 0, "the channel to be subscribed", 15_000);
        expect(errors).toEqual([]);
        const broadcast = await fetch(`${url}/dev/broadcast`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({
                channels: ["private-App.Models.User.1"],
                event: "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated",
                payload: { id: "n-1", type: "OrderShipped", text: "Your order shipped" },
            }),
        });
        expect(broadcast.status).toBe(200);
        expect(((await broadcast.json()) as { ids: string[] }).ids[0]).toMatch(/^urn:uuid:/);
        await eventually(() => received.length > 0, "the notification", 15_000);
        expect(received).toEqual([{ id: "n-1", type: "OrderShipped", text: "Your order shipped" }]);
    }, 60_000);

    it("exits with 1 and says the hub could not be reached when nothing answers at --hub", async () => {
        // Port 1 on the loopback interface: nothing listens there.
        const demo = await startOwnHubDemo(["--hub", "http://127.0.0.1:1/.well-known/mercure", ...USER_HUB_FLAGS]);
        expect(demo.code).toBe(1);
        expect(demo.stderr()).toContain("The hub at http://127.0.0.1:1/.well-known/mercure could not be reached");
    });

    it("exits with 1 and names the key, the issuer and the audience when the hub refuses the app's publisher token", async () => {
        const hub = await userHub({ jwtKey: "another-key-of-at-least-32-bytes-long!!" });
        const demo = await startOwnHubDemo(["--hub", hub.url, ...USER_HUB_FLAGS]);
        expect(demo.code).toBe(1);
        expect(demo.stderr()).toContain("refused the app's publisher token (401)");
        expect(demo.stderr()).toContain('the issuer "https://app.test" with the --jwt-key');
    });

    it("signs for the page's hub URL without --audience, and says so when the hub's resource_identifier differs", async () => {
        const hub = await userHub();
        const demo = await startOwnHubDemo(["--hub", hub.url, ...USER_HUB_FLAGS.slice(0, -2)]);
        expect(demo.code).toBe(1);
        const audience = /resource_identifier (http:\/\/127\.0\.0\.1:\d+\/\.well-known\/mercure)\n/.exec(demo.stdout)?.[1];
        expect(audience).toBeDefined();
        expect(demo.stderr()).toContain(`its resource_identifier must be "${audience}"`);
    });

    it("exits with 1 and names the cookie when the hub reads another cookie than the page's", async () => {
        const hub = await userHub({ cookieName: "hub_cookie" });
        const demo = await startOwnHubDemo(["--hub", hub.url, ...USER_HUB_FLAGS]);
        expect(demo.code).toBe(1);
        expect(demo.stderr()).toContain('found no token in the page\'s cookie (401): its cookie_name must be "demo_hub_token"');
    });

    it("runs, with a warning about whispers, when the hub does not list the page's origin in its publish origins", async () => {
        const hub = await userHub({ publishOrigins: ["http://elsewhere.test"] });
        const demo = await startOwnHubDemo(["--hub", hub.url, ...USER_HUB_FLAGS]);
        expect(demo.url).not.toBeNull();
        expect(demo.stderr()).toContain(`warning: The hub refused a publish from the page's origin (400): add ${demo.url} to its publish_origins`);
    });
});
