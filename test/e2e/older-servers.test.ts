import { afterEach, describe, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import type { DevServer } from "../../src/dev/server";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { waitFor } from "./support/wait";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
});

async function stack(options: Parameters<typeof startStack>[0]): Promise<{ server: DevServer; ann: NodeClient }> {
    const server = await startStack(options);
    cleanup.push(() => server.close());
    const ann = await nodeClient(server, 1);
    cleanup.push(() => ann.echo.disconnect());
    return { server, ann };
}

describe("older Laravel servers", () => {
    it("all-or-nothing 403: the newly joined channel is left with an error, the others are re-authorized and keep working", async () => {
        const { server, ann } = await stack({ app: { allOrNothing: true } });
        const got: string[] = [];
        const errors: MercureError[] = [];
        ann.echo.channel("news").listen(".e", () => got.push("news"));
        ann.echo.private("orders.1").listen(".e", () => got.push("orders"));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        ann.echo.private("App.Models.User.2").error((error: MercureError) => errors.push(error));
        await waitFor(() => errors.length === 1, "the rejection");
        expect(errors[0]!.code).toBe("auth_rejected");
        expect(errors[0]!.status).toBe(403);
        // The survivors are re-authorized right after the eviction.
        await waitFor(() => server.app.stats.authRequests.length === 3, "the survivors' auth request");
        expect(server.app.stats.authRequests.map((request) => request.status)).toEqual([200, 403, 200]);
        expect(server.app.stats.authRequests.at(-1)!.channelNames).toEqual(["news", "private-orders.1"]);
        expect(Object.keys(ann.echo.connector.channels)).toEqual(["news", "private-orders.1"]);
        await server.broadcast({ channels: ["news"], event: "e", payload: {} });
        await server.broadcast({ channels: ["private-orders.1"], event: "e", payload: {} });
        await waitFor(() => got.length === 2, "both channels' events");
        expect(got.sort()).toEqual(["news", "orders"]);
    });

    it("no topic_prefix: bare channel names as topics, end to end", async () => {
        const { server, ann } = await stack({ app: { topicPrefix: null } });
        const got: unknown[] = [];
        ann.echo.private("orders.1").listen("OrderShipped", (payload: unknown) => got.push(payload));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        expect(new URLSearchParams(server.hub.stats.subscribeConnections.at(-1)!.query).getAll("match")).toEqual(["private-orders.1"]);
        await server.broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { id: 5 } });
        await waitFor(() => got.length === 1, "the broadcast");
        expect(got).toEqual([{ id: 5 }]);
    });
});
