import { startDevHub } from "../../../src/dev/hub";
import type { ServedHub } from "../../../src/dev/remote-hub";
import { DEFAULT_ISSUER } from "../../../src/dev/laravel/options";
import { startDevServer, type DevServer, type DevServerOptions, type ExternalHub, type ExternalHubContext } from "../../../src/dev/server";
import { DEV_HUB, type HubTarget } from "../../support/hubs";
import { referenceHubLogs, startReferenceHub, type ReferenceHubConfig, type ReferenceHubVersion } from "../../support/reference-hub";
import type { MercureError } from "../../../src/errors";
import type { FetchLike } from "../../../src/transport/platform";
import { nodeClient, startStack, type NodeClient } from "./stack";
import { waitFor } from "./wait";

/**
 * A deployment of the app and a hub, configured rightly or wrongly in one of the ways Mercure set-ups go
 * wrong (issue 10), on the dev hub or the reference hub (issue 27):
 *
 * - `healthy`: hub and app on one origin, configured as a deployment must be.
 * - `audience`: the hub's resource identifier is not the URL clients use, so every token's `aud` is refused.
 * - `key`: the hub verifies tokens with another key than the one Laravel signs with.
 * - `issuer`: the hub trusts another issuer than the one Laravel signs as.
 * - `cookie_name`: Laravel sets `laravel_mercure`, the hub (on another origin) reads `mercure_access_token`.
 * - `cors`: the hub is on another origin and does not list the app's in its CORS origins.
 * - `publish_origin`: the hub's publish origins do not list the app's origin (whispers get 400).
 * - `legacy`: a Mercure 0.x hub: the dev hub's `legacyProtocol`, or the reference hub v0.24.2.
 * - `external_healthy`: hub on another origin, configured rightly (CORS, cookie name, publish origins).
 */
export type DeploymentKind = "healthy" | "audience" | "key" | "issuer" | "cookie_name" | "cors" | "publish_origin" | "legacy" | "external_healthy" | "no_history";

/** A running deployment. */
export interface Deployment {
    /** The app (auth endpoint, pages). */
    readonly stack: DevServer;
    /** The hub clients use: the stack's own, or a separate one (for the reference hub, the proxy in front of it). */
    readonly hub: ServedHub;
    /** The hub URL clients use. */
    readonly hubUrl: string;
    /** A page of the app announcing the hub with `<link rel="mercure">`. */
    readonly appUrl: string;
    /** The name of the cookie Laravel sets. */
    readonly cookieName: string;
    /** Stop everything. */
    close(): Promise<void>;
}

/** A key of at least 32 bytes, shared by the app and a separate hub. */
const KEY = "e2e-diagnostics-key-of-at-least-32-bytes!";

/** The key a hub of the `key` deployment verifies with instead. */
const OTHER_KEY = "another-e2e-key-the-app-does-not-sign-with!";

/** The issuer a hub of the `issuer` deployment trusts instead of Laravel's. */
export const OTHER_ISSUER = "https://other-app.test";

/** The resource identifier a hub of the `audience` deployment expects. */
export const OTHER_RESOURCE = "http://hub.example/.well-known/mercure";

/** The app's channels beyond the e2e stack's own: a presence channel, whose members the subscriptions API lists. */
const CHANNELS: DevServerOptions["channels"] = { "room.{id}": (user) => ({ id: user.id, name: user.name }) };

/** The app's page: it announces `hubUrl` as browsers discover it. */
function page(hubUrl: string, hubLink = `<link rel="mercure" href="${hubUrl}">`): string {
    return `<!doctype html><html><head><title>app</title>${hubLink}</head><body>app</body></html>`;
}

/** Whether the hub of `kind` runs on another origin than the app. */
function separate(kind: DeploymentKind): boolean {
    return kind === "cookie_name" || kind === "cors" || kind === "external_healthy";
}

/**
 * Start a deployment of `kind` on `target` (default the dev hub), the app serving `appPages` besides its `/`
 * page. On the reference hub, a hub on another origin
 * is the Go hub behind a second dev server's proxy (that origin is its resource identifier, and the proxy keeps
 * the request counters); a `legacy` deployment runs the reference hub v0.24.2.
 */
export async function deploy(kind: DeploymentKind, target: HubTarget = DEV_HUB, appPages: Readonly<Record<string, string>> = {}): Promise<Deployment> {
    const pages: NonNullable<DevServerOptions["pages"]> = { ...appPages };
    if (separate(kind)) {
        let hubUrl = "";
        const cookieName = kind === "cookie_name" ? "laravel_mercure" : "mercure_access_token";
        // The app's public_url is the separate hub's URL, known once that hub listens.
        const stack = await startStack({ jwtKey: KEY, pages, channels: CHANNELS, app: { cookieName, publicUrl: () => hubUrl } });
        const hubSettings = { jwtKey: KEY, corsOrigins: kind === "cors" ? [] : [stack.url], publishOrigins: [stack.url] };
        let external: { hub: ServedHub; url: string; close(): Promise<void> };
        try {
            if (target.reference === null) {
                const started = await startDevHub({ ...hubSettings, issuers: [DEFAULT_ISSUER] });
                external = { hub: started.hub, url: started.url, close: () => started.close() };
            } else {
                const version = target.reference;
                const front = await startDevServer({
                    jwtKey: KEY,
                    externalHub: (context) => startLoggedReferenceHub(version, { ...hubSettings, issuer: DEFAULT_ISSUER, resource: context.publicUrl, cookieName: "mercure_access_token" }),
                });
                external = { hub: front.hub, url: front.hubUrl, close: () => front.close() };
            }
        } catch (error) {
            await stack.close();
            throw error;
        }
        hubUrl = external.url;
        pages["/"] = page(hubUrl);
        return {
            stack,
            hub: external.hub,
            hubUrl,
            appUrl: stack.url + "/",
            cookieName,
            close: async () => {
                await external.close();
                await stack.close();
            },
        };
    }
    const stack = await startStack(target.reference === null ? { pages, channels: CHANNELS, hub: devHubSettings(kind) } : { pages, channels: CHANNELS, externalHub: referenceHubSettings(kind, target.reference) });
    // Rendered as the docs' middleware renders a Laravel page: the hub link with the hub's last event id.
    pages["/"] = (rendered) => page(stack.hubUrl, rendered.hubLink);
    return { stack, hub: stack.hub, hubUrl: stack.hubUrl, appUrl: stack.url + "/", cookieName: "mercure_access_token", close: () => stack.close() };
}

/** The dev hub's options for a deployment on the app's origin. */
function devHubSettings(kind: DeploymentKind): DevServerOptions["hub"] {
    switch (kind) {
        case "audience":
            return { resource: OTHER_RESOURCE };
        case "key":
            return { publisherJwtKey: OTHER_KEY, subscriberJwtKey: OTHER_KEY };
        case "issuer":
            return { issuers: [OTHER_ISSUER] };
        case "publish_origin":
            return { publishOrigins: [] };
        case "legacy":
            return { legacyProtocol: true };
        case "no_history":
            return { history: false };
        default:
            return {};
    }
}

/** The reference hub behind the app's proxy, configured as the app's own settings say except where `kind` is wrong. */
function referenceHubSettings(kind: DeploymentKind, version: ReferenceHubVersion): (context: ExternalHubContext) => Promise<ExternalHub> {
    return (context) =>
        startLoggedReferenceHub(kind === "legacy" ? "v0.24.2" : version, {
            jwtKey: kind === "key" ? OTHER_KEY : context.jwtKey,
            issuer: kind === "issuer" ? OTHER_ISSUER : context.issuer,
            resource: kind === "audience" ? OTHER_RESOURCE : context.publicUrl,
            cookieName: context.cookieName,
            publishOrigins: kind === "publish_origin" ? [] : [context.origin],
            ...(kind === "no_history" ? { history: false } : {}),
        });
}

/** Start a reference hub whose log a failing test prints; closed with its dev server. */
async function startLoggedReferenceHub(version: ReferenceHubVersion, config: ReferenceHubConfig): Promise<ExternalHub> {
    const started = await startReferenceHub(version, config);
    referenceHubLogs.add(started);
    return {
        url: started.url,
        close: async () => {
            referenceHubLogs.delete(started);
            await started.close();
        },
    };
}

/**
 * A logged-in client of the deployment. With `origin`, the connector's own fetch (auth, whisper POSTs,
 * diagnostics probes) sends the app's `Origin` header, as a browser page's POSTs do: Node's fetch sends
 * none, and a hub checks a cookie-authenticated publish's `Origin` against its publish origins.
 */
export async function pageClient(deployment: Deployment, options: { origin?: boolean } = {}): Promise<NodeClient> {
    const connection = { host: deployment.hubUrl, authEndpoint: deployment.stack.authEndpoint };
    if (options.origin !== true) return nodeClient(deployment.stack, 1, connection);
    // The jar exists once nodeClient made it; the connector fetches nothing before a channel is joined.
    let client: NodeClient | null = null;
    const fetch: FetchLike = (url, init) => {
        if (client === null) throw new Error("the connector fetched before the client was ready");
        return pageFetch(client, deployment)(url, init);
    };
    client = await nodeClient(deployment.stack, 1, { ...connection, fetch });
    return client;
}

/**
 * The client's fetch, typed as the connector's, sending the app's origin as a page's POSTs and
 * cross-origin requests do (Node's fetch sends none).
 */
export function pageFetch(client: NodeClient, deployment: Deployment): FetchLike {
    const origin = deployment.stack.url;
    return (url, init) => client.jar.fetch(url, { ...init, headers: { Origin: origin, ...(init.headers as Record<string, string> | undefined) } });
}

/**
 * Join `private-orders.1` and wait until its stream opens (`subscribed`) or fails (the error that names the cause, or
 * the `stream_error` when none is named: the connector holds it while its probe runs, issue 51); resolves with the
 * errors reported on the channel.
 */
export async function joinOrders(client: NodeClient): Promise<{ subscribed: boolean; errors: MercureError[] }> {
    const errors: MercureError[] = [];
    let subscribed = false;
    client.echo
        .private("orders.1")
        .error((error: MercureError) => errors.push(error))
        .subscribed(() => (subscribed = true));
    await waitFor(() => subscribed || errors.length > 0, "the stream to open or fail", 15_000);
    return { subscribed, errors };
}

/** The subscribe URL of the last stream the hub refused. */
export function lastRefusedStream(deployment: Deployment): string {
    const refused = deployment.hub.stats.subscribeConnections.filter((record) => record.status !== 200).at(-1);
    if (refused === undefined) throw new Error("the hub refused no stream");
    return `${deployment.hubUrl}?${refused.query}`;
}

/** How a Mercure 0.x hub (the reference hub v0.24.2) in front of the app is set up. */
export interface OutdatedHubSetup {
    /** Says how, in a test title. */
    readonly title: string;
    /** The cookie the hub reads: Laravel's `mercure_access_token`, or 0.x's default `mercureAuthorization`. */
    readonly cookieName: string;
    /** Whether it accepts subscribers without a token. */
    readonly anonymous: boolean;
    /** What it answers the connector's stream: 400 (it asks for `topic`) or a bare 401 (it wants a token). */
    readonly answer: 400 | 401;
}

/** The ways a Laravel app meets a 0.x hub: Laravel's 1.0 token is valid there but grants nothing. */
export const OUTDATED_HUBS: readonly OutdatedHubSetup[] = [
    // The token reaches the hub and is valid for it (0.x checks only the signature and exp): 400, `topic` missing.
    { title: "configured with Laravel's key and cookie name", cookieName: "mercure_access_token", anonymous: false, answer: 400 },
    // 0.x's default cookie name: no token reaches it, and it wants one: a bare 401 on every request.
    { title: "reading its default cookie mercureAuthorization", cookieName: "mercureAuthorization", anonymous: false, answer: 401 },
    // No token reaches it, but it takes anonymous subscribers: 400 again.
    { title: "reading mercureAuthorization, anonymous subscribers allowed", cookieName: "mercureAuthorization", anonymous: true, answer: 400 },
];

/** A reference hub v0.24.2 for `startDevServer({ externalHub })`, with the stack's key; `url()` once it runs. */
export interface OutdatedHub {
    /** The `externalHub` option: starts the hub (its log printed when a test fails), closed with the stack. */
    readonly externalHub: (stack: ExternalHubContext) => Promise<ExternalHub>;
    /** The hub's own URL; throws before the stack started it. */
    url(): string;
}

/**
 * A Mercure 0.x hub (reference hub v0.24.2) set up as `setup` says, the app's origin allowed to publish; with
 * `crossOrigin`, pages of the app may also read its answers (CORS), as a hub on another origin must allow.
 */
export function outdatedHub(setup: OutdatedHubSetup, crossOrigin = false): OutdatedHub {
    let url: string | null = null;
    return {
        externalHub: async (stack) => {
            const started = await startLoggedReferenceHub("v0.24.2", {
                jwtKey: stack.jwtKey,
                issuer: stack.issuer,
                resource: stack.publicUrl,
                cookieName: setup.cookieName,
                anonymous: setup.anonymous,
                corsOrigins: crossOrigin ? [stack.origin] : [],
                publishOrigins: [stack.origin],
            });
            url = started.url;
            return started;
        },
        url: () => {
            if (url === null) throw new Error("The 0.x hub has not been started.");
            return url;
        },
    };
}
