import type { DoctorOptions } from "./doctor";

/** The `doctor --help` text. */
export const DOCTOR_USAGE = `laravel-echo-mercure doctor: check a live Mercure deployment from the terminal

Usage:
  laravel-echo-mercure doctor <app-url> [--cookie <name>=<value>] [--token <jwt>] [--origin <origin>] [--timeout <ms>]

  <app-url>                  a page of the app; the hub is found from its Link header, its <link rel="mercure">,
                             the protected-resource metadata or /.well-known/mercure on its origin
  --cookie <name>=<value>    the hub cookie as the browser holds it (copy it from the developer tools):
                             checks its name against the hub's and that a subscription with it is accepted
  --token <jwt>              a bearer token to check a subscription with
  --origin <origin>          the origin the pages are served from (default: the app URL's)
  --timeout <ms>             deadline of each request (default 10000)

Prints one verdict per check (pass, FAIL, warn, skip) and the fix under each failure. Exits with 0 only
when no check failed (1 otherwise, 2 for a usage error). The publish-origin check POSTs to the hub without
a topic and with a dummy token: nothing can be published.
`;

/** A command-line mistake: printed with the usage hint, exit code 2. */
export class DoctorUsageError extends Error {
    override name = "DoctorUsageError";
}

/** What `doctor`'s command line asked for. */
export type DoctorCommand = { readonly help: true } | { readonly help: false; readonly options: DoctorOptions };

/** Parse `doctor`'s arguments (after the word `doctor`); throws {@link DoctorUsageError}. */
export function parseDoctorArgs(argv: readonly string[]): DoctorCommand {
    if (argv.includes("--help") || argv.includes("-h")) return { help: true };
    let appUrl: string | undefined;
    const options: Omit<DoctorOptions, "appUrl"> = {};
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i]!;
        const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
        const flag = eq === -1 ? arg : arg.slice(0, eq);
        if (!flag.startsWith("--")) {
            if (appUrl !== undefined) throw new DoctorUsageError(`Unexpected argument "${arg}": give one app URL.`);
            appUrl = absoluteUrl(arg);
            continue;
        }
        if (!["--cookie", "--token", "--origin", "--timeout"].includes(flag)) throw new DoctorUsageError(`Unknown option "${arg}".`);
        const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
        if (value === undefined || value === "" || (eq === -1 && value.startsWith("--"))) throw new DoctorUsageError(`${flag} needs a value.`);
        if (flag === "--cookie") options.cookie = cookie(value);
        else if (flag === "--token") options.token = value;
        else if (flag === "--origin") options.origin = origin(value);
        else options.timeout = milliseconds(value);
    }
    if (appUrl === undefined) throw new DoctorUsageError("Missing <app-url>: the URL of a page of your app, e.g. https://example.com/.");
    return { help: false, options: { appUrl, ...options } };
}

function absoluteUrl(value: string): string {
    try {
        const url = new URL(value);
        if (url.protocol === "http:" || url.protocol === "https:") return url.href;
    } catch {
        // Reported below.
    }
    throw new DoctorUsageError(`"${value}" is not an http(s) URL: give the URL of a page of your app.`);
}

function cookie(value: string): { name: string; value: string } {
    const eq = value.indexOf("=");
    const name = eq === -1 ? "" : value.slice(0, eq).trim();
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) {
        throw new DoctorUsageError(`--cookie "${value}" must be <name>=<value>, e.g. mercure_access_token=eyJ….`);
    }
    return { name, value: value.slice(eq + 1).trim() };
}

function origin(value: string): string {
    try {
        const url = new URL(value);
        if (url.origin !== "null" && url.origin === value.replace(/\/$/, "")) return url.origin;
    } catch {
        // Reported below.
    }
    throw new DoctorUsageError(`--origin "${value}" is not an origin such as https://example.com.`);
}

function milliseconds(value: string): number {
    if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
        throw new DoctorUsageError(`--timeout "${value}" is not a positive whole number of milliseconds.`);
    }
    return Number(value);
}
