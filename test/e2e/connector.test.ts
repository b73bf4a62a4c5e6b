import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import type { DevServer } from "../../src/dev/server";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { waitFor } from "./support/wait";
import { ALL_HUBS, describeEachHub } from "../support/hubs";

let server: DevServer;
const clients: NodeClient[] = [];

async function client(userId?: number): Promise<NodeClient> {
    const created = await nodeClient(server, userId);
    clients.push(created);
    return created;
}

/** Wait until the client's stream carries every named channel. */
async function subscribed(c: NodeClient, ...names: string[]): Promise<void> {
    const done = new Set<string>();
    for (const name of names) c.echo.connector.channels[name]!.subscribed(() => done.add(name));
    await waitFor(() => done.size === names.length, `subscribed(${names.join(", ")})`);
}

describeEachHub("the connector against the dev stack over real HTTP (Node)", ALL_HUBS, (hub) => {
    beforeAll(async () => {
        server = await startStack({}, hub);
    });
    afterAll(() => server.close());
    afterEach(() => {
        for (const client of clients.splice(0)) client.echo.disconnect();
    });

    it("receives public and private broadcasts, with Echo's namespace formatting", async () => {
        const ann = await client(1);
        const got: unknown[] = [];
        ann.echo.channel("news").listen("OrderShipped", (e: unknown) => got.push(["namespaced", e]));
        ann.echo.channel("news").listen(".order.shipped", (e: unknown) => got.push(["dotted", e]));
        ann.echo.private("App.Models.User.1").notification((n: unknown) => got.push(["notification", n]));
        await subscribed(ann, "news", "private-App.Models.User.1");
        await server.broadcast({ channels: ["news"], event: "App\\Events\\OrderShipped", payload: { id: 7, url: "a/b", name: "Zoë" } });
        await server.broadcast({ channels: ["news"], event: "order.shipped", payload: {} });
        await server.broadcast({
            channels: ["private-App.Models.User.1"],
            event: "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated",
            payload: { id: "n1", type: "Invoice" },
        });
        await waitFor(() => got.length === 3, "three broadcasts");
        expect(got).toEqual([
            ["namespaced", { id: 7, url: "a/b", name: "Zoë" }],
            ["dotted", []],
            ["notification", { id: "n1", type: "Invoice" }],
        ]);
        expect(ann.echo.connectionStatus()).toBe("connected");
    });

    it("reports a denied channel on its error() while the channel beside it keeps working", async () => {
        const ben = await client(2);
        const errors: MercureError[] = [];
        const got: unknown[] = [];
        ben.echo.private("App.Models.User.1").error((error: MercureError) => errors.push(error));
        ben.echo.private("App.Models.User.2").listen(".ping", (e: unknown) => got.push(e));
        await waitFor(() => errors.length === 1, "the denial");
        expect(errors[0]!.code).toBe("auth_denied");
        expect(errors[0]!.channel).toBe("private-App.Models.User.1");
        await subscribed(ben, "private-App.Models.User.2");
        await server.broadcast({ channels: ["private-App.Models.User.1"], event: "ping", payload: { to: 1 } });
        await server.broadcast({ channels: ["private-App.Models.User.2"], event: "ping", payload: { to: 2 } });
        await waitFor(() => got.length === 1, "ben's ping");
        expect(got).toEqual([{ to: 2 }]);
        expect(Object.keys(ben.echo.connector.channels)).toEqual(["private-App.Models.User.2"]);
    });

    it("costs one auth request and one subscribe connection for a burst of joins", async () => {
        const ann = await client(1);
        const auths = server.app.stats.authRequests.length;
        const connections = server.hub.stats.subscribeConnections.length;
        const names = ["a", "b", "c", "d", "e"];
        for (const name of names) ann.echo.channel(name);
        ann.echo.private("orders.1");
        await subscribed(ann, ...names, "private-orders.1");
        expect(server.app.stats.authRequests.length - auths).toBe(1);
        expect(server.app.stats.authRequests.at(-1)!.channelNames).toEqual([...names, "private-orders.1"]);
        const opened = server.hub.stats.subscribeConnections.slice(connections);
        expect(opened).toHaveLength(1);
        expect(new URLSearchParams(opened[0]!.query).getAll("match")).toHaveLength(6);
    });

    it("reopens without a left channel and stops delivering it", async () => {
        const ann = await client(1);
        const got: string[] = [];
        ann.echo.channel("keep").listen(".e", () => got.push("keep"));
        ann.echo.channel("drop").listen(".e", () => got.push("drop"));
        await subscribed(ann, "keep", "drop");
        const connections = server.hub.stats.subscribeConnections.length;
        ann.echo.leave("drop");
        await waitFor(() => server.hub.stats.subscribeConnections.length > connections, "the reopen");
        const query = new URLSearchParams(server.hub.stats.subscribeConnections.at(-1)!.query);
        expect(query.getAll("match")).toEqual(["https://laravel.alt/echo/channel/keep"]);
        await waitFor(() => server.hub.stats.openConnections === countOpen(), "the old stream to close");
        await server.broadcast({ channels: ["drop", "keep"], event: "e", payload: {} });
        await waitFor(() => got.length >= 1, "keep's event");
        await server.broadcast({ channels: ["keep"], event: "e", payload: {} });
        await waitFor(() => got.length >= 2, "the second event");
        expect(got).toEqual(["keep", "keep"]);
    });

    it("joins the other channels when one makes every batch fail (an encrypted channel, no encryption_key: HTTP 500), and reports it on that channel alone", async () => {
        const ann = await client(1);
        const errors: MercureError[] = [];
        const got: unknown[] = [];
        ann.echo.channel("news").listen(".headline", (e: unknown) => got.push(e));
        ann.echo.private("orders.1").listen(".shipped", (e: unknown) => got.push(e));
        ann.echo.encryptedPrivate("orders.1").error((error: MercureError) => errors.push(error));
        await subscribed(ann, "news", "private-orders.1");
        expect(errors.at(-1)).toMatchObject({ code: "auth_failed", status: 500, channel: "private-encrypted-orders.1" });
        expect(errors.at(-1)!.message).toContain("the other channels joined without it");
        await server.broadcast({ channels: ["news"], event: "headline", payload: { n: 1 } });
        await server.broadcast({ channels: ["private-orders.1"], event: "shipped", payload: { n: 2 } });
        await waitFor(() => got.length === 2, "both broadcasts");
        expect(got).toEqual([{ n: 1 }, { n: 2 }]);
    });

    it("honours toOthers(): the sender's own socket is skipped, others receive", async () => {
        const ann = await client(1);
        const ben = await client(2);
        const got: string[] = [];
        ann.echo.channel("chat").listen(".said", () => got.push("ann"));
        ben.echo.channel("chat").listen(".said", () => got.push("ben"));
        await subscribed(ann, "chat");
        await subscribed(ben, "chat");
        await server.broadcast({ channels: ["chat"], event: "said", payload: {}, socket: ann.echo.socketId() });
        await server.broadcast({ channels: ["chat"], event: "said", payload: {}, socket: "someone-else" });
        await waitFor(() => got.filter((who) => who === "ben").length === 2, "ben's two events");
        await waitFor(() => got.includes("ann"), "ann's event from someone else");
        expect(got.filter((who) => who === "ann")).toHaveLength(1);
    });

    it("moves through connecting, connected, reconnecting (hub down), connected and disconnected", async () => {
        const ann = await client(1);
        ann.echo.channel("status");
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        await server.stop();
        await waitFor(() => ann.echo.connectionStatus() === "reconnecting", "reconnecting");
        await server.restart();
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected again", 10_000);
        ann.echo.leave("status");
        await waitFor(() => ann.echo.connectionStatus() === "disconnected", "disconnected");
        expect(ann.statuses[0]).toBe("connecting");
        expect(ann.statuses).toEqual(expect.arrayContaining(["connecting", "connected", "reconnecting", "disconnected"]));
        expect(ann.statuses.at(-1)).toBe("disconnected");
    });
});

/** Subscribe connections the live clients of this file hold open. */
function countOpen(): number {
    return clients.filter((client) => client.echo.connectionStatus() === "connected").length;
}
