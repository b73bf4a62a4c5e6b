import { MercureEcho, type MercureEchoOptions } from "../../../src/connector/mercure-echo";
import type { MercureError } from "../../../src/errors";
import type { DevServer, DevServerOptions } from "../../../src/dev/server";
import { DEV_HUB, type HubTarget } from "../../support/hubs";
import { connectorFetch, CookieJar } from "./node-client";

/** The users every e2e stack knows. */
export const USERS = [
    { id: 1, name: "Ann" },
    { id: 2, name: "Ben" },
];

/** Start a dev stack on `hub` (default the dev hub) with the users and the channel rules the e2e suites share. */
export function startStack(options: DevServerOptions = {}, hub: HubTarget = DEV_HUB): Promise<DevServer> {
    return hub.start({
        ...options,
        app: { users: USERS, ...options.app },
        channels: {
            "App.Models.User.{id}": (user, params) => String(user.id) === params["id"],
            "orders.{id}": (user) => user.id === 1,
            ...options.channels,
        },
    });
}

/** A Node client: its own cookie jar (a browser profile), logged in as `userId` when given. */
export interface NodeClient {
    echo: MercureEcho;
    jar: CookieJar;
    errors: MercureError[];
    statuses: string[];
}

/** Create a logged-in Node client of the stack. */
export async function nodeClient(server: DevServer, userId?: number, options: MercureEchoOptions = {}): Promise<NodeClient> {
    const jar = new CookieJar();
    if (userId !== undefined) {
        const response = await jar.fetch(`${server.url}/dev/login?user=${userId}`, { method: "POST" });
        if (!response.ok) throw new Error(`login failed with HTTP ${response.status}`);
    }
    const echo = new MercureEcho({ host: server.hubUrl, eventSource: jar.eventSource(), fetch: connectorFetch(jar), ...options });
    const statuses: string[] = [];
    echo.connector.onConnectionChange((status) => statuses.push(status));
    return { echo, jar, errors: [], statuses };
}
