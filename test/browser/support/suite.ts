import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect } from "vitest";
import type { DevServer, DevServerOptions } from "../../../src/dev/server";
import { ALL_HUBS, type HubTarget } from "../../support/hubs";
import { findChromium, launchChromium, shouldRunBrowserTests } from "./chromium";
import { PageHarness } from "./harness";
import { HARNESS_PAGE } from "./pages";
import { waitForNoStreams } from "./tabs";

// The set-up every browser suite shares: the build checked, one Chromium and one dev server per suite, what a
// test opened closed after it (failing the test on an uncaught page error), everything closed at the end.

/** The repository root, for the build paths the suites need. */
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The build the harness pages load. */
export const IIFE_BUNDLE = "dist/laravel-echo-mercure.iife.js";

/** The folder the dev server serves at `/dist/` for most suites. */
export const DIST_DIR = ROOT + "dist/";

/** Something a test opened that is closed after it; its uncaught page errors (if it has pages) fail the test. */
export interface Closable {
    /** Close it (a rejection is ignored: the test's own failure, if any, is the one to read). */
    close(): unknown;
    /** Uncaught exceptions of its pages so far; absent for what has no page (a raw stream, a second server). */
    readonly pageErrors?: readonly string[];
}

/** What differs between the browser suites. */
export interface BrowserSuiteOptions {
    /**
     * The dev server of the suite: its options, or a function that starts it on the given hub (run after
     * {@link prepare}); `hub.start(options)` starts one.
     */
    server: DevServerOptions | ((hub: HubTarget) => Promise<DevServer>);
    /** The hubs the suite runs against, once each; default every hub ({@link ALL_HUBS}). */
    hubs?: readonly HubTarget[];
    /** Build outputs the suite needs, relative to the repository root; default the IIFE bundle. */
    builds?: readonly string[];
    /** Chromium flags after the default ones (for example a host-resolver rule). */
    launchArgs?: readonly string[];
    /** Work before Chromium starts (building fixture apps), after the build check. */
    prepare?: () => Promise<void>;
    /** The `beforeAll` timeout in ms; the project's hook timeout otherwise. */
    setUpTimeout?: number;
    /** Restart the dev server after each test (a test that stopped it and failed must not leave it down). */
    restartAfterEach?: boolean;
    /** After each test (and the restart), wait up to this many ms until no stream is open at the hub. */
    streamsClosedWithin?: number;
    /** Work after the browser and the server closed (removing a temporary folder). */
    tearDown?: () => void;
}

/** The handles a suite's tests use; each accessor throws when the set-up did not get that far. */
export interface BrowserSuite {
    /** The hub this run of the suite is on (to start a second server on the same kind of hub). */
    readonly hub: HubTarget;
    /** The running Chromium. */
    browser(): Browser;
    /** The running dev server. */
    dev(): DevServer;
    /** Close `item` after the running test, and fail the test on its uncaught page errors; returns it. */
    track<T extends Closable>(item: T): T;
    /** Open the harness page (or `path`) in a fresh context on `origin` (the dev server), logged in as `userId` unless null; tracked. */
    open(userId: number | null, path?: string, origin?: string): Promise<PageHarness>;
    /** A blank page in a fresh context, its context tracked and its uncaught page errors collected. */
    newPage(): Promise<Page>;
}

/**
 * `describe(title)` for a browser suite, once per hub of `options.hubs` (the title names the hub), skipped after a
 * loud warning when Chromium is missing locally (run, and failed by the launch, when it is missing in CI:
 * {@link shouldRunBrowserTests}), and on a hub that is not available. Registers the suite's hooks, then calls
 * `body` with its handles.
 */
export function describeInChromium(title: string, options: BrowserSuiteOptions, body: (suite: BrowserSuite) => void): void {
    const chromium = findChromium();
    const runs = shouldRunBrowserTests(chromium);
    for (const hub of options.hubs ?? ALL_HUBS) {
        describe.skipIf(!runs || !hub.available)(`${title} [${hub.name}]`, () => suiteOn(hub, chromium, options, body));
    }
}

/** The hooks and handles of one suite on one hub. */
function suiteOn(hub: HubTarget, chromium: ReturnType<typeof findChromium>, options: BrowserSuiteOptions, body: (suite: BrowserSuite) => void): void {
    {
        let browser: Browser | undefined;
        let server: DevServer | undefined;
        /** What the running test opened; closed after it. */
        let opened: Closable[] = [];

        beforeAll(async () => {
            for (const build of options.builds ?? [IIFE_BUNDLE]) {
                if (!existsSync(ROOT + build)) throw new Error(`${ROOT + build} is missing: run \`npm run build\` before the browser tests.`);
            }
            await options.prepare?.();
            browser = await launchChromium(chromium, options.launchArgs);
            server = typeof options.server === "function" ? await options.server(hub) : await hub.start(options.server);
        }, options.setUpTimeout);

        afterEach(async () => {
            const closing = opened;
            opened = [];
            const errors = closing.flatMap((item) => item.pageErrors ?? []);
            await Promise.allSettled(closing.map(async (item) => item.close()));
            if (server !== undefined && options.restartAfterEach === true) await server.restart();
            if (server !== undefined && options.streamsClosedWithin !== undefined) await waitForNoStreams(server, options.streamsClosedWithin);
            expect(errors, "uncaught exceptions in the pages").toEqual([]);
        });

        afterAll(async () => {
            await Promise.allSettled([browser?.close(), server?.close()]);
            options.tearDown?.();
        });

        const suite: BrowserSuite = {
            hub,
            browser() {
                if (browser === undefined) throw new Error("Chromium did not start.");
                return browser;
            },
            dev() {
                if (server === undefined) throw new Error("The dev server did not start.");
                return server;
            },
            track(item) {
                opened.push(item);
                return item;
            },
            async open(userId, path = HARNESS_PAGE, origin) {
                return suite.track(await PageHarness.open(suite.browser(), origin ?? suite.dev().url, userId, path));
            },
            async newPage() {
                const context = await suite.browser().newContext();
                const pageErrors: string[] = [];
                suite.track({ close: () => context.close(), pageErrors });
                const page = await context.newPage();
                page.on("pageerror", (error) => pageErrors.push(error.message));
                return page;
            },
        };
        body(suite);
    }
}
