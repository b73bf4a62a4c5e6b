#!/usr/bin/env node
// The `laravel-echo-mercure` command: a development hub, or the demo.
import { readFileSync } from "node:fs";
import { CliUsageError, parseCliArgs, type CliCommand } from "./cli-args";
import { startDemo } from "./demo/demo";
import { doctorCommand } from "./doctor";
import { startDevHub } from "./hub/server";
import { mintAccessToken } from "./jwt/access-token";

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
    const running =
        parsed.command === "hub"
            ? await startDevHub(parsed.options).then((hub) => {
                  process.stdout.write(`Mercure development hub listening at ${hub.url}\n(not a production hub; Ctrl+C to stop)\n`);
                  return hub;
              })
            : await startDemo({ port: parsed.port }).then((server) => {
                  process.stdout.write(
                      `laravel-echo-mercure demo running at ${server.url}/\n` +
                          `  open it in two windows (?user=1, ?user=2) and broadcast from either; Ctrl+C to stop\n` +
                          `  hub ${server.hubUrl} · auth ${server.authEndpoint}\n`,
                  );
                  return server;
              });
    const shutdown = () => {
        void running.close().then(() => process.exit(0));
    };
    process.once("SIGINT", shutdown);
    process.once("SIGTERM", shutdown);
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
