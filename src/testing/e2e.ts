/**
 * `laravel-echo-mercure/testing/e2e`: the dev stack for an app's end-to-end tests (Playwright, Vitest browser mode):
 * a Mercure hub and a Laravel stand-in on one free port of 127.0.0.1, with helpers to log a browser in, broadcast as
 * Laravel does, and stop. Node.js only: the unit-test kit (`laravel-echo-mercure/testing`) imports nothing of it.
 */
import { startDevServer, type ChannelCallback, type DevServer, type DevServerOptions, type DevUser } from "../dev/index";
import { wireEventName } from "./event-names";

/** Options of {@link startTestStack}. */
export interface TestStackOptions {
    /** The users a browser may log in as. Default: `{ id: 1, name: "Ada" }` and `{ id: 2, name: "Grace" }`. */
    users?: DevUser[];
    /**
     * The channel callbacks, as `routes/channels.php` registers them (`"orders.{id}": (user, { id }) => …`; a
     * presence callback returns the member's info). Default: every private and presence channel is granted, with the
     * user as presence info.
     */
    channels?: Record<string, ChannelCallback>;
    /** Echo's event namespace the `broadcast()` helper names events with, as `createTestEcho()` does. Default `App.Events`. */
    namespace?: string | false;
    /** Anything else of the dev server (`port`, `pages`, `distDir`, `hub`, `app`). */
    server?: Omit<DevServerOptions, "channels">;
}

/** Where a browser is logged in: a Playwright `Page` or `BrowserContext` (their `request` shares the browser's cookies). */
export interface LoginTarget {
    /** The API request context whose cookies the browser uses. */
    readonly request: { post(url: string): Promise<{ ok(): boolean; status(): number }> };
}

/** A running test stack. */
export interface TestStack {
    /** The origin (`http://127.0.0.1:<port>`): serve the app under test from here, or proxy to it. */
    readonly url: string;
    /** The hub URL, the connector's `host`. */
    readonly hubUrl: string;
    /** The auth endpoint, the connector's `authEndpoint`. */
    readonly authEndpoint: string;
    /** The dev server underneath (hub statistics, the Laravel stand-in). */
    readonly server: DevServer;
    /** Log `target`'s browser in as user `userId` (the session cookie Laravel's auth endpoint reads). */
    login(target: LoginTarget, userId: string | number): Promise<void>;
    /** Broadcast as Laravel does, with the event naming of `hub.broadcast()` of the unit kit; resolves once the hub has it. */
    broadcast(channels: string | readonly string[], event: string, payload?: unknown, options?: { socket?: string | null }): Promise<string[]>;
    /** Stop the stack for good. */
    stop(): Promise<void>;
}

/** Users of the default stack. */
const DEFAULT_USERS: DevUser[] = [
    { id: 1, name: "Ada" },
    { id: 2, name: "Grace" },
];

/**
 * The default channel callbacks: every private and presence channel of up to eight dot-separated segments (Laravel's
 * patterns match one segment per parameter) is granted, with the user as presence info.
 */
const GRANT_EVERY_CHANNEL: Record<string, ChannelCallback> = Object.fromEntries(
    Array.from({ length: 8 }, (_, index) => [Array.from({ length: index + 1 }, (_, segment) => `{s${segment}}`).join("."), (user: DevUser) => user]),
);

/**
 * Start a dev hub and a Laravel stand-in on a free port for end-to-end tests; `stop()` it after them. Every
 * private and presence channel is granted unless `channels` says otherwise.
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
    const users = options.users ?? DEFAULT_USERS;
    const channels = options.channels ?? GRANT_EVERY_CHANNEL;
    const server = await startDevServer({ ...options.server, app: { ...options.server?.app, users }, channels });
    const namespace = options.namespace ?? "App.Events";
    return {
        url: server.url,
        hubUrl: server.hubUrl,
        authEndpoint: server.authEndpoint,
        server,
        async login(target, userId) {
            const response = await target.request.post(`${server.url}/dev/login?user=${encodeURIComponent(String(userId))}`);
            if (!response.ok()) throw new Error(`Logging in as user ${String(userId)} failed with HTTP ${response.status()}: pass a user of the stack's users option.`);
        },
        broadcast(names, event, payload = {}, broadcastOptions = {}) {
            return server.broadcast({
                channels: typeof names === "string" ? [names] : [...names],
                event: wireEventName(event, namespace),
                payload,
                socket: broadcastOptions.socket ?? null,
            });
        },
        stop: () => server.close(),
    };
}
