import type { DemoHub } from "./demo/own-hub";
import type { DevHubOptions } from "./hub/server";
import type { AccessTokenInput } from "./jwt/access-token";

/** What the command line asked for. */
export type CliCommand =
    | { command: "hub"; options: DevHubOptions; verbose: boolean; warnings: string[] }
    | { command: "token"; token: Omit<AccessTokenInput, "now"> }
    | { command: "demo"; port: number; hub: DemoHub | null }
    | { command: "help"; text: string }
    | { command: "version" };

/** The issuer the demo signs with against a user's hub unless `--issuer` says otherwise (the dev app's default). */
export const DEMO_ISSUER = "http://laravel.test";

/** The cookie the demo's hub token travels in unless `--cookie-name` says otherwise. */
export const DEMO_COOKIE_NAME = "mercure_access_token";

/** The shortest HS256 key Laravel's mercure driver accepts, in bytes (HS384: 48, HS512: 64). */
export const MIN_HS256_KEY_BYTES = 32;

/** The hub URL a `token` is minted for by default: the `hub` command's default port, reached as 127.0.0.1. */
export const DEFAULT_TOKEN_RESOURCE = "http://127.0.0.1:3000/.well-known/mercure";

/** A `token`'s default lifetime in seconds. */
export const DEFAULT_TOKEN_TTL = 3600;

/** An RFC 6265 cookie name (a token). */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A command-line mistake: printed with the usage hint, exit code 2. */
export class CliUsageError extends Error {
    override name = "CliUsageError";
}

/** The `--help` text: every command and flag. */
export const USAGE = `laravel-echo-mercure: development tools for the Laravel Echo Mercure connector

Usage:
  laravel-echo-mercure hub --jwt-key <secret> --issuer <iss> [options]   run a Mercure 1.0 development hub
  laravel-echo-mercure token --jwt-key <secret> --issuer <iss> [--publish <topic>] [--subscribe <topic>] [options]
                                                          print an access token for curl and scripts
  laravel-echo-mercure demo [--port <port>]               run the demo (hub + Laravel-compatible server + page)
  laravel-echo-mercure demo --hub <url> --jwt-key <secret> [options]
                                                          run the demo against your own Mercure hub (FrankenPHP, Mercure)
  laravel-echo-mercure doctor <app-url> [options]         check a live deployment (doctor --help for its options)
  laravel-echo-mercure --help                             show this text
  laravel-echo-mercure --version                          print the package version

hub options:
  --port <port>             port on 127.0.0.1 (default 3000; 0 picks a free one)
  --jwt-key <secret>        HS256 key for publisher and subscriber tokens (required; Laravel's MERCURE_JWT_SECRET)
  --issuer <iss>            trusted token issuer, bound to the key (required, repeatable; Laravel's
                            MERCURE_JWT_ISSUER, else APP_URL)
  --resource <aud>          resource identifier tokens must carry in "aud" (default: the hub URL as requested)
  --anonymous               let subscribers without a token receive public updates
  --cors-origin <origin>    allow credentialed cross-origin subscribers from <origin> (repeatable)
  --publish-origin <origin> allow cookie-authenticated publishes (whispers) from <origin> (repeatable)
  --cookie-name <name>      cookie carrying the token (default mercure_access_token; Laravel's MERCURE_COOKIE_NAME)
  --no-cookie-auth          ignore the cookie: accept only an Authorization: Bearer header (the connector's hubToken)
  --no-subscriptions        disable active subscriptions (presence)
  --no-history              keep no history, like "transport local": reconnects replay nothing
  --dispatch-timeout <ms>   end each stream this long before its deadline (default 5000, the reference hub's)
  --write-timeout <ms>      end every stream within 80-100 % of this, token or not (default 600000; 0: no cap)
  --verbose                 print why each refused request was refused (which token check failed) on stderr

token options (the token goes to stdout; HS256, typ "at+jwt", as the hub requires):
  --jwt-key <secret>        the hub's --jwt-key (required)
  --issuer <iss>            iss, one of the hub's --issuer values (required)
  --resource <aud>          aud: the hub URL exactly as you reach it, or the hub's --resource
                            (default ${DEFAULT_TOKEN_RESOURCE})
  --publish <topic>         grant publishing to <topic>; * for every topic (repeatable)
  --subscribe <topic>       grant subscribing to <topic>, private updates included; * for every topic (repeatable)
  --ttl <seconds>           lifetime (default ${DEFAULT_TOKEN_TTL})

demo options:
  --port <port>             port on 127.0.0.1 (default 8000; 0 picks a free one)
  --hub <url>               your running Mercure 1.0 hub, e.g. http://localhost:3000/.well-known/mercure: the demo's
                            Laravel stand-in publishes to it, and the page reaches it through the demo's origin
  --jwt-key <secret>        the hub's HS256 key for publishers and subscribers (with --hub; at least 32 bytes)
  --issuer <iss>            iss of the tokens: a trusted issuer of the hub (default ${DEMO_ISSUER})
  --cookie-name <name>      the hub's cookie_name (default ${DEMO_COOKIE_NAME})
  --audience <aud>          aud of the tokens: the hub's resource_identifier (default: the demo's hub URL,
                            http://127.0.0.1:<port>/.well-known/mercure)
  With --hub the demo prints what the hub must be configured with, then publishes a check update: it exits
  with the reason when the hub is unreachable or refuses the app's token or the browser's cookie.

The hub is served at http://127.0.0.1:<port>/.well-known/mercure. It is a development and test tool,
not a production hub: state is in memory and it listens on 127.0.0.1 only.
`;

/**
 * Parse `argv` (without `node` and the script); throws {@link CliUsageError} on anything unknown or missing.
 */
export function parseCliArgs(argv: readonly string[]): CliCommand {
    const [command, ...rest] = argv;
    if (command === undefined || command === "--help" || command === "-h" || command === "help") return { command: "help", text: USAGE };
    if (command === "--version" || command === "-v" || command === "version") return { command: "version" };
    if (rest.includes("--help") || rest.includes("-h")) return { command: "help", text: USAGE };
    if (command === "hub") {
        const verbose = rest.includes("--verbose");
        const options = parseHubFlags(rest.filter((arg) => arg !== "--verbose"));
        return { command: "hub", options, verbose, warnings: keyWarnings(options.jwtKey) };
    }
    if (command === "token") return { command: "token", token: parseTokenFlags(rest) };
    if (command === "demo") {
        const flags = readFlags(rest, new Set(["--port", "--hub", "--jwt-key", "--issuer", "--cookie-name", "--audience"]), new Set());
        return { command: "demo", port: flags.port ?? 8000, hub: demoHub(flags.values) };
    }
    throw new CliUsageError(`Unknown command "${command}": use "hub", "token" or "demo".`);
}

/** The `demo --hub` settings, or null without `--hub`; the hub flags are refused without it. */
function demoHub(values: ReadonlyMap<string, string[]>): DemoHub | null {
    const last = (flag: string) => values.get(flag)?.at(-1);
    const rawUrl = last("--hub");
    if (rawUrl === undefined) {
        const stray = ["--jwt-key", "--issuer", "--cookie-name", "--audience"].find((flag) => values.has(flag));
        if (stray !== undefined) throw new CliUsageError(`${stray} applies to the demo only with --hub <url> (your own hub).`);
        return null;
    }
    const url = hubUrl(rawUrl);
    const jwtKey = last("--jwt-key");
    if (jwtKey === undefined || jwtKey === "") throw new CliUsageError("Missing --jwt-key <secret>: the HS256 key your hub verifies tokens with (its publisher and subscriber jwt key).");
    const bytes = Buffer.byteLength(jwtKey, "utf8");
    if (bytes < MIN_HS256_KEY_BYTES) {
        throw new CliUsageError(`--jwt-key is ${bytes} bytes long: Laravel's mercure driver, which the demo stands in for, refuses HS256 keys shorter than ${MIN_HS256_KEY_BYTES} bytes.`);
    }
    const issuer = last("--issuer") ?? DEMO_ISSUER;
    if (issuer === "") throw new CliUsageError("--issuer needs a value: one of your hub's trusted issuers.");
    const cookieName = last("--cookie-name") ?? DEMO_COOKIE_NAME;
    if (!COOKIE_NAME.test(cookieName)) throw new CliUsageError(`--cookie-name "${cookieName}" is not a valid cookie name.`);
    if (cookieName.startsWith("__")) {
        throw new CliUsageError(`--cookie-name "${cookieName}": browsers keep a __ cookie only over https, and the demo page is http://127.0.0.1; set the hub's cookie_name to a name without the prefix.`);
    }
    const audience = last("--audience") ?? null;
    if (audience === "") throw new CliUsageError("--audience needs a value: your hub's resource_identifier.");
    return { url, jwtKey, issuer, cookieName, audience };
}

/** The `--hub` URL, checked; a URL without a path gets the well-known hub path. */
function hubUrl(value: string): string {
    let url: URL;
    try {
        url = new URL(value);
    } catch {
        throw new CliUsageError(`--hub "${value}" is not a URL such as http://localhost:3000/.well-known/mercure.`);
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
        throw new CliUsageError(`--hub "${value}" is not a hub URL such as http://localhost:3000/.well-known/mercure (http: or https:, no query).`);
    }
    if (url.pathname === "/") url.pathname = "/.well-known/mercure";
    return url.href;
}

/** A warning for a key Laravel would refuse: HS256 needs at least 32 bytes. */
function keyWarnings(jwtKey: string): string[] {
    const bytes = Buffer.byteLength(jwtKey, "utf8");
    return bytes >= MIN_HS256_KEY_BYTES
        ? []
        : [
              `--jwt-key is ${bytes} bytes long: Laravel's mercure driver refuses HS256 keys shorter than ${MIN_HS256_KEY_BYTES} bytes, so use the MERCURE_JWT_SECRET your app signs with (openssl rand -base64 32 makes one).`,
          ];
}

function parseTokenFlags(args: readonly string[]): Omit<AccessTokenInput, "now"> {
    const flags = readFlags(args, new Set(["--jwt-key", "--issuer", "--resource", "--publish", "--subscribe", "--ttl"]), new Set());
    const jwtKey = flags.values.get("--jwt-key")?.at(-1);
    if (jwtKey === undefined || jwtKey === "") throw new CliUsageError("Missing --jwt-key <secret>: the hub's --jwt-key.");
    const issuer = flags.values.get("--issuer")?.at(-1);
    if (issuer === undefined || issuer === "") throw new CliUsageError("Missing --issuer <iss>: one of the hub's --issuer values.");
    const resource = flags.values.get("--resource")?.at(-1) ?? DEFAULT_TOKEN_RESOURCE;
    if (!/^https?:\/\/[^/?#\s]+/.test(resource)) {
        throw new CliUsageError(`--resource "${resource}" is not a URL such as ${DEFAULT_TOKEN_RESOURCE}.`);
    }
    const publish = flags.values.get("--publish") ?? [];
    const subscribe = flags.values.get("--subscribe") ?? [];
    if (publish.length + subscribe.length === 0) throw new CliUsageError("Pass --publish <topic> or --subscribe <topic> (* for every topic): a token without grants can do nothing.");
    if ([...publish, ...subscribe].includes("")) throw new CliUsageError("--publish and --subscribe need a topic, or * for every topic.");
    const rawTtl = flags.values.get("--ttl")?.at(-1);
    const ttl = rawTtl === undefined ? DEFAULT_TOKEN_TTL : Number(rawTtl);
    if (rawTtl !== undefined && (!/^\d+$/.test(rawTtl) || ttl < 1 || !Number.isSafeInteger(ttl))) {
        throw new CliUsageError(`--ttl "${rawTtl}" is not a positive whole number of seconds.`);
    }
    return { jwtKey, issuer, resource, publish, subscribe, ttl };
}

function parseHubFlags(args: readonly string[]): DevHubOptions {
    const valued = new Set([
        "--port",
        "--jwt-key",
        "--issuer",
        "--resource",
        "--cors-origin",
        "--publish-origin",
        "--cookie-name",
        "--dispatch-timeout",
        "--write-timeout",
    ]);
    const switches = new Set(["--anonymous", "--no-subscriptions", "--no-history", "--no-cookie-auth"]);
    const flags = readFlags(args, valued, switches);
    const jwtKey = flags.values.get("--jwt-key")?.at(-1);
    if (jwtKey === undefined || jwtKey === "") throw new CliUsageError("Missing --jwt-key <secret>: the key your Laravel app signs tokens with (MERCURE_JWT_SECRET).");
    const issuers = flags.values.get("--issuer") ?? [];
    if (issuers.length === 0 || issuers.includes("")) {
        throw new CliUsageError("Missing --issuer <iss>: the iss claim your Laravel app puts in its tokens (MERCURE_JWT_ISSUER, else APP_URL).");
    }
    const options: DevHubOptions = {
        port: flags.port ?? 3000,
        jwtKey,
        issuers,
        anonymous: flags.switches.has("--anonymous"),
        subscriptions: !flags.switches.has("--no-subscriptions"),
        history: !flags.switches.has("--no-history"),
        ...(flags.switches.has("--no-cookie-auth") ? { cookieAuth: false } : {}),
        corsOrigins: (flags.values.get("--cors-origin") ?? []).map((value) => origin("--cors-origin", value)),
        publishOrigins: (flags.values.get("--publish-origin") ?? []).map((value) => origin("--publish-origin", value)),
    };
    const resource = flags.values.get("--resource")?.at(-1);
    if (resource !== undefined) options.resource = resource;
    const cookieName = flags.values.get("--cookie-name")?.at(-1);
    if (cookieName !== undefined) {
        if (!COOKIE_NAME.test(cookieName)) throw new CliUsageError(`--cookie-name "${cookieName}" is not a valid cookie name.`);
        options.cookieName = cookieName;
    }
    const dispatchTimeout = flags.values.get("--dispatch-timeout")?.at(-1);
    if (dispatchTimeout !== undefined) options.dispatchTimeout = milliseconds("--dispatch-timeout", dispatchTimeout);
    const writeTimeout = flags.values.get("--write-timeout")?.at(-1);
    if (writeTimeout !== undefined) options.writeTimeout = milliseconds("--write-timeout", writeTimeout);
    return options;
}

/** A non-negative whole number of milliseconds. */
function milliseconds(flag: string, value: string): number {
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
        throw new CliUsageError(`${flag} "${value}" is not a whole number of milliseconds.`);
    }
    return Number(value);
}

function readFlags(args: readonly string[], valued: Set<string>, switches: Set<string>) {
    const values = new Map<string, string[]>();
    const seen = new Set<string>();
    for (let i = 0; i < args.length; i++) {
        const arg = args[i]!;
        const [name, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
        if (switches.has(name) && inline === undefined) {
            seen.add(name);
        } else if (valued.has(name)) {
            const value = inline ?? args[++i];
            if (value === undefined || (inline === undefined && value.startsWith("--"))) throw new CliUsageError(`${name} needs a value.`);
            values.set(name, [...(values.get(name) ?? []), value]);
        } else {
            throw new CliUsageError(`Unknown option "${arg}".`);
        }
    }
    const rawPort = values.get("--port")?.at(-1);
    let port: number | undefined;
    if (rawPort !== undefined) {
        port = Number(rawPort);
        if (!/^\d+$/.test(rawPort) || port > 65535) throw new CliUsageError(`--port "${rawPort}" is not a port number (0-65535).`);
    }
    return { values, switches: seen, port };
}

function origin(flag: string, value: string): string {
    try {
        const url = new URL(value);
        if (url.origin === "null" || url.origin !== value.replace(/\/$/, "")) throw new Error("not an origin");
        return url.origin;
    } catch {
        throw new CliUsageError(`${flag} "${value}" is not an origin such as http://localhost:8000.`);
    }
}
