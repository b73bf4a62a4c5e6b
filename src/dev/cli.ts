#!/usr/bin/env node
// The `laravel-echo-mercure` command: a development hub, or the demo (on the embedded hub or the user's own).
import { readFileSync } from "node:fs";
import { CliUsageError, parseCliArgs, type CliCommand } from "./cli-args";
import { startDemo } from "./demo/demo";
import { checkOwnHub, ownHubRequirements, type DemoHub } from "./demo/own-hub";
import { doctorCommand } from "./doctor";
import { startDevHub, type DevHub, type DevHubOptions } from "./hub/server";
import { mintAccessToken } from "./jwt/access-token";
import type { DevServer } from "./server";

/** The package's version, from the package.json two levels above this file (dist/dev/ or src/dev/). */
function packageVersion(): string {
    const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return String(manifest.version);
}

async function main(): Promise<void> {
    // `doctor` parses its own arguments (src/dev/doctor/args.ts).
    if (process.argv[2] === "doctor") return void (process.exitCode = await doctorCommand(process.argv.slice(3)));
    let parsed: CliCommand;
    try {
        parsed = parseCliArgs(process.argv.slice(2));
    } catch (error) {
        if (!(error instanceof CliUsageError)) throw error;
        process.stderr.write(`laravel-echo-mercure: ${error.message}\nRun "laravel-echo-mercure --help" for usage.\n`);
        process.exit(2);
    }
    if (parsed.command === "help") {
        process.stdout.write(parsed.text);
        return;
    }
    if (parsed.command === "version") {
        process.stdout.write(`laravel-echo-mercure ${packageVersion()}\n`);
        return;
    }
    if (parsed.command === "token") {
        process.stdout.write(mintAccessToken({ ...parsed.token, now: Date.now() }) + "\n");
        return;
    }
    if (parsed.command === "hub") {
        for (const warning of parsed.warnings) process.stderr.write(`laravel-echo-mercure: warning: ${warning}\n`);
        if (parsed.verbose) parsed.options.onRefusal = (message) => process.stderr.write(`laravel-echo-mercure hub: ${message}\n`);
    }
    const running = parsed.command === "hub" ? await startHub(parsed.options) : await startDemoCommand(parsed.port, parsed.hub);
    const shutdown = () => {
        void running.close().then(() => process.exit(0));
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
}

/** The `hub` command: the dev hub, and what it is. */
async function startHub(options: DevHubOptions): Promise<DevHub> {
    const hub = await startDevHub(options);
    process.stdout.write(`Mercure development hub listening at ${hub.url}\n(not a production hub; Ctrl+C to stop)\n`);
    return hub;
}

/**
 * The `demo` command: the demo on the embedded hub, or on the user's own (`--hub`), whose requirements are
 * printed and then checked; a hub the demo cannot use ends the command with the reason and exit code 1.
 */
async function startDemoCommand(port: number, ownHub: DemoHub | null): Promise<DevServer> {
    const server = await startDemo(ownHub === null ? { port } : { port, ownHub });
    if (ownHub !== null) {
        process.stdout.write(ownHubRequirements(server, ownHub));
        const check = await checkOwnHub(server, ownHub);
        if (!check.ok) {
            await server.close();
            // stdout and stderr may be pipes, written asynchronously: let both drain before exiting.
            await new Promise((drained) => process.stdout.write("", drained));
            process.stderr.write(`laravel-echo-mercure demo: ${check.reason}\n`, () => process.exit(1));
            return new Promise<never>(() => undefined);
        }
        for (const warning of check.warnings) process.stderr.write(`laravel-echo-mercure demo: warning: ${warning}\n`);
        process.stdout.write(`The hub accepted the app's publish and the page's cookie.\n`);
    }
    process.stdout.write(
        `laravel-echo-mercure demo running at ${server.url}/\n` +
            `  open it as ?user=1 and ?user=2 in two browsers (or a normal and a private window: one browser holds one login) and broadcast from either; Ctrl+C to stop\n` +
            `  hub ${server.hubUrl}${ownHub === null ? "" : ` → ${ownHub.url}`} · auth ${server.authEndpoint}\n`,
    );
    return server;
}

main().catch((error: unknown) => {
    const code = (error as { code?: string }).code;
    process.stderr.write(
        code === "EADDRINUSE"
            ? "laravel-echo-mercure: the port is already in use; pass another with --port.\n"
            : `laravel-echo-mercure: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
});
