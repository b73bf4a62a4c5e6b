import { afterEach, describe, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import type { DevServer } from "../../src/dev/server";
import { referenceHubAvailable } from "../support/reference-hub";
import { OUTDATED_HUBS, outdatedHub, type OutdatedHubSetup } from "./support/deployments";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { sleep, waitFor } from "./support/wait";

// A Laravel app pointed at a Mercure 0.x hub (the reference hub v0.24.2, issue 27): Laravel signs 1.0 tokens and the
// connector sends `match=`, which a 0.x hub refuses with 400 (it asks for `topic`) or, when no token it can use
// reaches it, with a bare 401 (no WWW-Authenticate, no metadata). Either way every channel must hear `hub_outdated`
// within seconds, and nothing may loop: no auth request, no stream reopened after the diagnosis.

const V0 = "v0.24.2" as const;

/** The channels a page of the app joins: one of each kind Laravel authorizes. */
const CHANNELS = ["news", "private-orders.1", "presence-room.1"] as const;

/** Long enough for a reconnect or a re-authorization loop to show (the first backoff is 1 s ± 20 %). */
const QUIET_WINDOW_MS = 3_000;

let server: DevServer | null = null;
const clients: NodeClient[] = [];

afterEach(async () => {
    for (const client of clients.splice(0)) client.echo.disconnect();
    await server?.close();
    server = null;
});

/** Start the Laravel stand-in in front of a v0.24.2 hub set up as `deployment` says (same JWT key). */
async function startOutdated(deployment: OutdatedHubSetup): Promise<DevServer> {
    const hub = outdatedHub(deployment);
    server = await startStack({ channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) }, externalHub: hub.externalHub });
    return server;
}

describe.skipIf(!referenceHubAvailable(V0))(`a Laravel app on a Mercure 0.x hub (reference hub ${V0}, Node)`, () => {
    for (const deployment of OUTDATED_HUBS) {
        it(`${deployment.title}: every channel hears hub_outdated within 5 s, status failed, and nothing loops`, async () => {
            const stack = await startOutdated(deployment);
            const client = await nodeClient(stack, 1);
            clients.push(client);
            const errors: MercureError[] = [];
            const started = Date.now();
            client.echo.channel("news").error((error: MercureError) => errors.push(error));
            client.echo.private("orders.1").error((error: MercureError) => errors.push(error));
            client.echo.join("room.1").error((error: MercureError) => errors.push(error));
            const outdated = () => errors.filter((error) => error.code === "hub_outdated");
            await waitFor(() => outdated().length === CHANNELS.length, "hub_outdated on every channel", 5_000);
            expect(Date.now() - started).toBeLessThanOrEqual(5_000);

            expect(outdated().map((error) => error.channel).sort()).toEqual([...CHANNELS].sort());
            for (const error of outdated()) {
                expect(error.status).toBe(deployment.answer);
                expect(error.message).toContain(`The hub at ${stack.hubUrl} `);
                expect(error.message).toContain("upgrade the hub to Mercure 1.0");
            }
            expect(client.echo.connector.connectionStatus()).toBe("failed");
            // The stream the hub refused really reached the 0.x hub, with the answer the deployment predicts.
            expect(stack.hub.stats.subscribeConnections[0]?.status).toBe(deployment.answer);

            const auth = stack.app.stats.authRequests.length;
            const streams = stack.hub.stats.subscribeConnections.length;
            await sleep(QUIET_WINDOW_MS);
            // At most one renewal for the 401; after the diagnosis, not one more auth request or stream.
            expect(auth).toBeLessThanOrEqual(2);
            expect(stack.app.stats.authRequests.length).toBe(auth);
            // The refused stream, the diagnosis probe, and at most one reopen after a renewal.
            expect(streams).toBeLessThanOrEqual(3);
            expect(stack.hub.stats.subscribeConnections.length).toBe(streams);
            expect(client.echo.connector.connectionStatus()).toBe("failed");
            // Each channel heard one stream_error, then the cause; nothing after.
            for (const channel of CHANNELS) {
                expect(errors.filter((error) => error.channel === channel).map((error) => error.code)).toEqual(["stream_error", "hub_outdated"]);
            }
        });
    }
});
