import type { Browser, BrowserContext, Page } from "playwright-core";
import { HARNESS_PAGE } from "./pages";
import { waitUntil, type WaitOptions } from "./wait";

/** A channel to join from the page, with the event names to record. */
export interface ChannelSpec {
    /** `public` → `echo.channel(name)`, `private` → `echo.private(name)`, `encrypted` → `echo.encryptedPrivate(name)`, `presence` → `echo.join(name)` (here/joining/leaving recorded). */
    kind: "public" | "private" | "encrypted" | "presence";
    /** The name as passed to Echo (without `private-`, `private-encrypted-` or `presence-`). */
    name: string;
    /** Event names passed to `listen()` as written (`"OrderShipped"`, `".order.shipped"`). */
    events?: string[];
    /** Also record `notification()` payloads (listener `"notification"`). */
    notifications?: boolean;
}

/** One event a page received. */
export interface ReceivedEvent {
    /** The full channel name. */
    channel: string;
    /** The event name as given to `listen()`, or `"notification"`. */
    listener: string;
    /** The payload handed to the callback. */
    payload: unknown;
}

/** One `error()` callback call. */
export interface ReceivedError {
    /** The full channel name the error concerns. */
    channel: string;
    /** The MercureError code. */
    code: string;
    /** The message. */
    message: string;
}

/** Everything a page recorded so far. */
export interface HarnessSnapshot {
    events: ReceivedEvent[];
    errors: ReceivedError[];
    /** Full channel names, once per `subscribed()` call. */
    subscribed: string[];
    /** The status at creation, then every change. */
    statuses: string[];
    /** `echo.connectionStatus()` now, or null before `create()`. */
    status: string | null;
    /** Presence callbacks in order: `here Ann,Bob`, `joining Bob`, `leaving Ann` (member names), by full channel name. */
    presence: Array<{ channel: string; line: string }>;
}

/** The in-page object that `pages.ts` installs as `window.harness`. */
interface InPageHarness {
    create(options: Record<string, unknown>): string;
    join(specs: ChannelSpec[]): void;
    leave(name: string): void;
    leaveChannel(name: string): void;
    snapshot(): HarnessSnapshot;
    members(name: string): string[] | null;
    login(id: number): Promise<number>;
}

/** `window` as the harness page extends it (type-only: this cast disappears before serialization). */
type HarnessWindow = { harness: InPageHarness };

/**
 * Drives one harness page in its own browser context (its own cookie jar, so one context = one user).
 */
export class PageHarness {
    /** Uncaught exceptions of the page; a test expects none. */
    readonly pageErrors: string[] = [];

    private constructor(
        /** The context, for its cookies. */
        readonly context: BrowserContext,
        /** The page. */
        readonly page: Page,
    ) {
        page.on("pageerror", (error) => this.pageErrors.push(error.message));
    }

    /**
     * Open the harness page (or another page carrying the harness script, at `path`) in a fresh context and,
     * when `userId` is given, log that dev user in; `prepare` runs on the context before the page loads (to record or
     * route its requests from the first).
     */
    static async open(browser: Browser, origin: string, userId: number | null, path: string = HARNESS_PAGE, prepare?: (context: BrowserContext) => Promise<void>): Promise<PageHarness> {
        const context = await browser.newContext();
        try {
            await prepare?.(context);
            const page = await context.newPage();
            const harness = new PageHarness(context, page);
            const response = await page.goto(origin + path);
            if (response?.status() !== 200) throw new Error(`The harness page answered ${response?.status()}.`);
            const loaded = await page.evaluate(() => typeof (window as unknown as { EchoMercure?: unknown }).EchoMercure);
            if (loaded !== "object") throw new Error("The bundle did not define window.EchoMercure on the harness page.");
            if (userId !== null) {
                const status = await page.evaluate((id) => (window as unknown as HarnessWindow).harness.login(id), userId);
                if (status !== 200) throw new Error(`Logging in dev user ${userId} answered ${status}.`);
            }
            return harness;
        } catch (error) {
            await context.close();
            throw error;
        }
    }

    /**
     * Open another tab of the same user: a second page in this context (same cookies), with the harness page
     * at `path` loaded; `timeout` (ms) bounds the page load (playwright's default otherwise).
     */
    async openTab(path: string = HARNESS_PAGE, timeout?: number): Promise<PageHarness> {
        const page = await this.context.newPage();
        const tab = new PageHarness(this.context, page);
        const response = await page.goto(new URL(path, this.page.url()).href, timeout === undefined ? {} : { timeout });
        if (response?.status() !== 200) throw new Error(`The harness page answered ${response?.status()} in a new tab.`);
        return tab;
    }

    /** Close this tab only; the context and its other tabs stay. */
    closeTab(): Promise<void> {
        return this.page.close();
    }

    /** The member names of the joined presence channel `name` (without `presence-`) now; null before its first here(). */
    members(name: string): Promise<string[] | null> {
        return this.page.evaluate((channel) => (window as unknown as HarnessWindow).harness.members(channel), name);
    }

    /**
     * Render the session's CSRF token into the page's `<head>` (`<meta name="csrf-token">`), as a Blade layout does when
     * the page loads: the dev stack's `/dev/csrf` gives the session's token.
     */
    renderCsrfToken(): Promise<void> {
        return this.page.evaluate(async () => {
            const { token } = (await (await fetch("/dev/csrf")).json()) as { token: string };
            const meta = document.createElement("meta");
            meta.name = "csrf-token";
            meta.content = token;
            document.head.append(meta);
        });
    }

    /** Create `MercureEcho` in the page; resolves with its socket id. */
    create(options: Record<string, unknown> = {}): Promise<string> {
        return this.page.evaluate((opts) => (window as unknown as HarnessWindow).harness.create(opts), options);
    }

    /** Join every channel in the same tick. */
    join(...specs: ChannelSpec[]): Promise<void> {
        return this.page.evaluate((list) => (window as unknown as HarnessWindow).harness.join(list), specs);
    }

    /** `echo.leave(name)`. */
    leave(name: string): Promise<void> {
        return this.page.evaluate((channel) => (window as unknown as HarnessWindow).harness.leave(channel), name);
    }

    /** What the page recorded so far. */
    snapshot(): Promise<HarnessSnapshot> {
        return this.page.evaluate(() => (window as unknown as HarnessWindow).harness.snapshot());
    }

    /** Poll the page's records until `predicate` holds; resolves with the snapshot that satisfied it. */
    async waitFor(what: string, predicate: (snapshot: HarnessSnapshot) => boolean, options: WaitOptions = {}): Promise<HarnessSnapshot> {
        let last: HarnessSnapshot | null = null;
        return waitUntil(
            what,
            async () => {
                last = await this.snapshot();
                return predicate(last) ? last : null;
            },
            { ...options, describe: () => last },
        );
    }

    /** Wait until `echo.connectionStatus()` is `status`. */
    waitForStatus(status: string, options: WaitOptions = {}): Promise<HarnessSnapshot> {
        return this.waitFor(`status "${status}"`, (snapshot) => snapshot.status === status, options);
    }

    /** Wait until `subscribed()` fired for every full channel name given. */
    waitForSubscribed(channels: string[], options: WaitOptions = {}): Promise<HarnessSnapshot> {
        return this.waitFor(
            `subscribed() on ${channels.join(", ")}`,
            (snapshot) => channels.every((name) => snapshot.subscribed.includes(name)),
            options,
        );
    }

    /** Close the context (and with it the page and its streams). */
    async close(): Promise<void> {
        await this.context.close();
    }
}

/** The presence callback lines of one channel (`here Ann,Bob`, `joining Bob`, ...), in order. */
export function presenceOf(snapshot: HarnessSnapshot, channel: string): string[] {
    return snapshot.presence.filter((entry) => entry.channel === channel).map((entry) => entry.line);
}

/** The events of one channel and listener, as their payloads, in arrival order. */
export function payloadsOf(snapshot: HarnessSnapshot, channel: string, listener?: string): unknown[] {
    return snapshot.events
        .filter((event) => event.channel === channel && (listener === undefined || event.listener === listener))
        .map((event) => event.payload);
}
