import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_ISSUER } from "../../src/dev/laravel/options";
import { ALL_HUBS, describeEachHub, type HubTarget } from "../support/hubs";
import { deploy, joinOrders, pageClient, type Deployment, type DeploymentKind } from "./support/deployments";
import type { NodeClient } from "./support/stack";

const CLI = "dist/dev/cli.js";
const running: Deployment[] = [];
const clients: NodeClient[] = [];

beforeAll(() => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does).`);
});
afterEach(async () => {
    for (const client of clients.splice(0)) client.echo.disconnect();
    await Promise.all(running.splice(0).map((deployment) => deployment.close()));
});

/** Run the built CLI to completion. */
function doctor(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
        const child = spawn(process.execPath, [CLI, "doctor", ...args]);
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
}

/** A report line per check: [verdict, name], read from the fixed-width columns. */
function verdicts(stdout: string): [string, string][] {
    return stdout
        .split("\n")
        .filter((line) => /^ {2}(pass|FAIL|warn|skip) /.test(line))
        .map((line) => [line.slice(2, 6).trim(), line.slice(8, 34).trim()]);
}

/** The names of the failed checks. */
function failed(stdout: string): string[] {
    return verdicts(stdout)
        .filter(([verdict]) => verdict === "FAIL")
        .map(([, name]) => name);
}

/** The hub the running suite deploys on (set before its tests run). */
let target: HubTarget = ALL_HUBS[0]!;

/** Start a deployment and obtain the hub cookie its auth endpoint sets for a logged-in user. */
async function deployWithCookie(kind: DeploymentKind): Promise<{ deployment: Deployment; cookie: string }> {
    const deployment = await deploy(kind, target);
    running.push(deployment);
    const client = await pageClient(deployment);
    clients.push(client);
    await joinOrders(client);
    const value = client.jar.get(deployment.cookieName);
    if (value === undefined) throw new Error(`the app set no ${deployment.cookieName} cookie`);
    return { deployment, cookie: `${deployment.cookieName}=${value}` };
}

describeEachHub("laravel-echo-mercure doctor against a deployment", ALL_HUBS, (hub) => {
    beforeAll(() => {
        target = hub;
    });

    it("passes every check of a healthy deployment, on one origin or two, and exits with 0", async () => {
        for (const kind of ["healthy", "external_healthy"] as const) {
            const { deployment, cookie } = await deployWithCookie(kind);
            // The app page on the hub's origin renders the hub's last event id (as the docs' middleware does); the
            // other deployment's page renders the hub link alone, and is told what that loses across pages.
            if (kind === "healthy") await deployment.stack.broadcast({ channels: ["news"], event: "App\\Events\\Published", payload: {} });
            const result = await doctor([deployment.appUrl, "--cookie", cookie]);
            expect(result.stdout).toContain(`pass  hub found                   ${deployment.hubUrl} (<link rel="mercure"> in the page)`);
            expect(failed(result.stdout)).toEqual([]);
            expect(verdicts(result.stdout).map(([verdict]) => verdict)).toEqual(["pass", "pass", "pass", "pass", "pass", "pass", "pass", "pass", "pass", kind === "healthy" ? "pass" : "warn"]);
            if (kind === "healthy") expect(result.stdout).toMatch(/pass {2}history across pages +the hub replays from the page's cursor \(urn:uuid:/);
            else expect(result.stdout).toMatch(/warn {2}history across pages +the page renders no last-event-id with its hub link/);
            expect(result.stdout).toContain("pass  credentials accepted        the hub accepts a subscription with --cookie mercure_access_token");
            expect(result.code).toBe(0);
        }
    });

    it("warns, once, that nothing can be replayed across pages on a hub without history (it answers earliest)", async () => {
        const { deployment, cookie } = await deployWithCookie("no_history");
        await deployment.stack.broadcast({ channels: ["news"], event: "App\\Events\\Published", payload: {} });
        const result = await doctor([deployment.appUrl, "--cookie", cookie]);
        expect(failed(result.stdout)).toEqual([]);
        expect(verdicts(result.stdout).filter(([verdict]) => verdict === "warn")).toEqual([["warn", "history across pages"]]);
        expect(result.stdout).toMatch(/warn {2}history across pages +the hub answered Mercure-Last-Event-ID: earliest to the page's cursor urn:uuid:\S+: it keeps no history/);
        expect(result.stdout).toContain("fix: keep history on the hub");
        expect(result.code).toBe(0);
    });

    it("reports the audience when the hub expects another resource identifier", async () => {
        const { deployment, cookie } = await deployWithCookie("audience");
        const result = await doctor([deployment.appUrl, "--cookie", cookie]);
        expect(failed(result.stdout)).toEqual(["metadata valid", "credentials accepted"]);
        expect(result.stdout).toContain(`FAIL  metadata valid              resource is "http://hub.example/.well-known/mercure" but the hub is reached at "${deployment.hubUrl}"`);
        expect(result.stdout).toContain(`because its aud is "${deployment.hubUrl}" while the hub expects "http://hub.example/.well-known/mercure"`);
        expect(result.stdout).toContain(`fix: set Laravel's MERCURE_PUBLIC_URL to "http://hub.example/.well-known/mercure", or the hub's resource identifier to "${deployment.hubUrl}"`);
        expect(result.code).toBe(1);
    });

    it("reports a cookie name that differs from the hub's", async () => {
        const { deployment, cookie } = await deployWithCookie("cookie_name");
        const result = await doctor([deployment.appUrl, "--cookie", cookie]);
        expect(failed(result.stdout)).toEqual(["cookie name", "credentials accepted"]);
        expect(result.stdout).toContain('FAIL  cookie name                 the cookie given is "laravel_mercure" but the hub reads "mercure_access_token"');
        expect(result.stdout).toContain('fix: use one cookie name on both sides: Laravel sets "laravel_mercure" (MERCURE_COOKIE_NAME) but the hub reads "mercure_access_token" (its cookie_name)');
        expect(result.stdout).toContain("FAIL  credentials accepted        No access token reached the hub (HTTP 401 without error)");
        expect(result.code).toBe(1);
    });

    it("reports CORS when the hub does not list the app's origin", async () => {
        const { deployment } = await deployWithCookie("cors");
        const result = await doctor([deployment.appUrl]);
        expect(failed(result.stdout)).toEqual(["CORS for the app origin"]);
        expect(result.stdout).toContain(`fix: add ${deployment.stack.url} to the hub's cors_origins`);
        expect(result.code).toBe(1);
    });

    it("reports a publish origin the hub refuses", async () => {
        const { deployment } = await deployWithCookie("publish_origin");
        const result = await doctor([deployment.appUrl]);
        expect(failed(result.stdout)).toEqual(["publish origin (whispers)"]);
        expect(result.stdout).toContain(`the hub refuses cookie-authenticated publishes (whispers) from ${deployment.stack.url} (HTTP 400 invalid_request)`);
        expect(result.stdout).toContain(`fix: add ${deployment.stack.url} to the hub's publish_origins`);
        expect(result.code).toBe(1);
    });

    it("reports a pre-1.0 hub, with or without credentials, and says to upgrade it", async () => {
        const { deployment, cookie } = await deployWithCookie("legacy");
        for (const args of [[deployment.appUrl], [deployment.appUrl, "--cookie", cookie]]) {
            const result = await doctor(args);
            expect(failed(result.stdout)).toEqual(["Mercure 1.0", ...(args.length > 1 ? ["credentials accepted"] : [])]);
            expect(result.stdout).toContain("fix: upgrade the hub to Mercure 1.0");
            // How: Laravel's issuer (read from the cookie given) and its cookie name.
            if (args.length > 1) expect(result.stdout).toContain(`trust "${DEFAULT_ISSUER}" (Laravel's MERCURE_JWT_ISSUER, else APP_URL) with an issuer block`);
            expect(result.stdout).toContain("skip  publish origin (whispers)");
            expect(result.code).toBe(1);
        }
    });

    it("reports a hub that verifies with another key or trusts another issuer, and says to trust Laravel's", async () => {
        for (const kind of ["key", "issuer"] as const) {
            const { deployment, cookie } = await deployWithCookie(kind);
            const result = await doctor([deployment.appUrl, "--cookie", cookie]);
            expect(failed(result.stdout), kind).toEqual(["credentials accepted"]);
            expect(result.stdout).toContain("FAIL  credentials accepted        The hub rejected the access token (HTTP 401 invalid_token) although its audience and expiry are right, so the issuer or the key differs");
            expect(result.stdout).toContain(`fix: make the hub trust the issuer "${DEFAULT_ISSUER}" and verify tokens with Laravel's MERCURE_JWT_SECRET`);
            expect(result.code).toBe(1);
        }
    });
});

describe("laravel-echo-mercure doctor's command line", () => {
    it("exits with 2 and the usage hint for a bad command line, and documents itself", async () => {
        const bad = await doctor(["--cookie", "nameonly", "http://127.0.0.1:1/"]);
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain('--cookie "nameonly" must be <name>=<value>');
        expect(bad.stderr).toContain("doctor --help");
        const help = await doctor(["--help"]);
        expect(help.code).toBe(0);
        for (const flag of ["--cookie", "--token", "--origin", "--timeout"]) expect(help.stdout).toContain(flag);
    });
});
