import { accessSync, constants } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Where Debian's Chromium lives; `CHROMIUM_PATH` overrides it. */
export const DEFAULT_CHROMIUM_PATH = "/usr/bin/chromium";

/** The one-line fix, shared by the CI failure and the local warning. */
const INSTALL_HINT = "apt-get install -y chromium";

/** Flags for a quiet, deterministic headless Chromium (no sandbox: tests run as root in containers). */
const LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
];

/** What the environment offers for the browser tests. */
export interface ChromiumAvailability {
    /** The executable looked for. */
    path: string;
    /** Whether it exists and is executable. */
    available: boolean;
    /** Whether we run in CI (`CI=true`), where a missing browser is a failure, not a skip. */
    ci: boolean;
}

/** Look for the Chromium executable (`CHROMIUM_PATH`, else `/usr/bin/chromium`). */
export function findChromium(env: NodeJS.ProcessEnv = process.env): ChromiumAvailability {
    const override = env["CHROMIUM_PATH"];
    const path = override !== undefined && override !== "" ? override : DEFAULT_CHROMIUM_PATH;
    let available = true;
    try {
        accessSync(path, constants.X_OK);
    } catch {
        available = false;
    }
    return { path, available, ci: env["CI"] === "true" };
}

/**
 * Decide whether the browser tests run: `true` when Chromium is there, or when it is missing in CI (so that
 * {@link launchChromium} fails them loudly); `false`, after a warning banner, when it is missing locally.
 */
export function shouldRunBrowserTests(availability: ChromiumAvailability = findChromium()): boolean {
    if (availability.available || availability.ci) return true;
    const rule = "!".repeat(78);
    console.warn(
        [
            rule,
            "!! BROWSER TESTS SKIPPED: Chromium was not found at " + availability.path,
            "!! The connector was NOT tested in a real browser.",
            `!! Install it with: ${INSTALL_HINT}   (or point CHROMIUM_PATH at a Chromium binary)`,
            "!! In CI (CI=true) a missing Chromium fails the suite instead.",
            rule,
        ].join("\n"),
    );
    return false;
}

/**
 * Launch headless Chromium, with `extraArgs` after the default flags (for example a host-resolver rule);
 * throws the install instruction when it is missing (the CI case).
 */
export async function launchChromium(availability: ChromiumAvailability = findChromium(), extraArgs: readonly string[] = []): Promise<Browser> {
    if (!availability.available) {
        throw new Error(
            availability.ci
                ? `Chromium is required in CI: ${INSTALL_HINT} (looked for ${availability.path}; set CHROMIUM_PATH to override).`
                : `Chromium was not found at ${availability.path}: ${INSTALL_HINT}, or set CHROMIUM_PATH.`,
        );
    }
    return chromium.launch({ executablePath: availability.path, args: [...LAUNCH_ARGS, ...extraArgs] });
}
