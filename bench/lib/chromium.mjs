// Headless Chromium for the bench, launched as the browser tests launch it (test/browser/support/chromium.ts):
// Debian's /usr/bin/chromium (or CHROMIUM_PATH) through playwright-core, with the same quiet flags.
import { accessSync, constants } from "node:fs";
import { chromium } from "playwright-core";

/** The Chromium executable: `CHROMIUM_PATH`, else Debian's. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/** The flags of the browser tests. */
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

/** Launch Chromium; throws the install instruction when it is missing. */
export async function launchChromium() {
    try {
        accessSync(CHROMIUM_PATH, constants.X_OK);
    } catch {
        throw new Error(`npm run bench measures in Chromium, which was not found at ${CHROMIUM_PATH}: apt-get install -y chromium, or set CHROMIUM_PATH.`);
    }
    return chromium.launch({ executablePath: CHROMIUM_PATH, args: LAUNCH_ARGS });
}
