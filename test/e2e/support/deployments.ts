import { startDevHub } from "../../../src/dev/hub";
import type { ServedHub } from "../../../src/dev/remote-hub";
import { DEFAULT_ISSUER } from "../../../src/dev/laravel/options";
import type { DevServer } from "../../../src/dev/server";
import type { MercureError } from "../../../src/errors";
import type { FetchLike } from "../../../src/transport/platform";
import { nodeClient, startStack, type NodeClient } from "./stack";
import { waitFor } from "./wait";

/**
 * A deployment of the dev stack, configured rightly or wrongly in one of the ways Mercure set-ups go
 * wrong (issue 10):
 *
 * - `healthy`: hub and app on one origin, configured as a deployment must be.
 * - `audience`: the hub's resource identifier is not the URL clients use, so every token's `aud` is refused.
 * - `cookie_name`: Laravel sets `laravel_mercure`, the hub (on another origin) reads `mercure_access_token`.
 * - `cors`: the hub is on another origin and does not list the app's in its CORS origins.
 * - `publish_origin`: the hub's publish origins do not list the app's origin (whispers get 400).
 * - `legacy`: a hub answering like Mercure 0.x.
 * - `external_healthy`: hub on another origin, configured rightly (CORS, cookie name, publish origins).
 */
export type DeploymentKind = "healthy" | "audience" | "cookie_name" | "cors" | "publish_origin" | "legacy" | "external_healthy";

/** A running deployment. */
export interface Deployment {
    /** The app (auth endpoint, pages). */
    readonly stack: DevServer;
    /** The hub clients use: the stack's own, or a separate one. */
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

/** The app's page: it announces `hubUrl` as browsers discover it. */
function page(hubUrl: string): string {
    return `<!doctype html><html><head><title>app</title><link rel="mercure" href="${hubUrl}"></head><body>app</body></html>`;
}

/** Start a deployment of `kind`. */
export async function deploy(kind: DeploymentKind): Promise<Deployment> {
    const pages: Record<string, string> = {};
    if (kind === "cookie_name" || kind === "cors" || kind === "external_healthy") {
        let hubUrl = "";
        const cookieName = kind === "cookie_name" ? "laravel_mercure" : "mercure_access_token";
        // The app's public_url is the separate hub's URL, known once that hub listens.
        const stack = await startStack({ jwtKey: KEY, pages, app: { cookieName, publicUrl: () => hubUrl } });
        const external = await startDevHub({
            jwtKey: KEY,
            issuers: [DEFAULT_ISSUER],
            corsOrigins: kind === "cors" ? [] : [stack.url],
            publishOrigins: [stack.url],
        });
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
    const hub =
        kind === "audience"
            ? { resource: "http://hub.example/.well-known/mercure" }
            : kind === "publish_origin"
              ? { publishOrigins: [] }
              : kind === "legacy"
                ? { legacyProtocol: true }
                : {};
    const stack = await startStack({ pages, hub });
    pages["/"] = page(stack.hubUrl);
    return { stack, hub: stack.hub, hubUrl: stack.hubUrl, appUrl: stack.url + "/", cookieName: "mercure_access_token", close: () => stack.close() };
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
 * Join `private-orders.1` and wait until its stream opens (`subscribed`) or fails (`stream_error`);
 * resolves with the errors reported on the channel.
 */
export async function joinOrders(client: NodeClient): Promise<{ subscribed: boolean; errors: MercureError[] }> {
    const errors: MercureError[] = [];
    let subscribed = false;
    client.echo
        .private("orders.1")
        .error((error: MercureError) => errors.push(error))
        .subscribed(() => (subscribed = true));
    await waitFor(() => subscribed || errors.some((error) => error.code === "stream_error"), "the stream to open or fail", 15_000);
    return { subscribed, errors };
}

/** The subscribe URL of the last stream the hub refused. */
export function lastRefusedStream(deployment: Deployment): string {
    const refused = deployment.hub.stats.subscribeConnections.filter((record) => record.status !== 200).at(-1);
    if (refused === undefined) throw new Error("the hub refused no stream");
    return `${deployment.hubUrl}?${refused.query}`;
}
