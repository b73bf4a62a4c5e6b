import { afterEach, describe, expect, it, vi } from "vitest";
import { MercureError } from "../../src/index";
import { createTestEcho, type TestEchoOptions } from "../../src/testing/index";

/** The Echo of the running test, disconnected after it. */
let current: { disconnect(): void } | null = null;

afterEach(() => {
    current?.disconnect();
    current = null;
});

function setup(options: TestEchoOptions = {}) {
    const made = createTestEcho(options);
    current = made.echo;
    return made;
}

describe("createTestEcho", () => {
    it("delivers a broadcast with Laravel's envelope and event names to the listener, after the connector authorized and subscribed in flush()", async () => {
        const { echo, hub } = setup();
        const shipped: unknown[] = [];
        const renamed: unknown[] = [];
        echo.private("orders.1").listen("OrderShipped", (payload: unknown) => shipped.push(payload));
        echo.channel("news").listen(".order.renamed", (payload: unknown) => renamed.push(payload));
        expect(hub.joined()).toEqual([]);
        await hub.flush();
        expect(hub.authRequests()).toEqual([["private-orders.1", "news"]]);
        expect(hub.joined()).toEqual(["private-orders.1", "news"]);
        expect(hub.listeners("private-orders.1")).toEqual(["App\\Events\\OrderShipped"]);
        hub.broadcast("private-orders.1", "OrderShipped", { id: 42 });
        hub.broadcast("news", ".order.renamed", { id: 7 });
        hub.broadcast("news", "OrderShipped", { id: 8 }); // App\Events\OrderShipped: nobody listens for it on news
        hub.broadcast("private-orders.1", "App\\Events\\OrderShipped", { id: 43 });
        expect(shipped).toEqual([{ id: 42 }, { id: 43 }]);
        expect(renamed).toEqual([{ id: 7 }]);
        expect(echo.connectionStatus()).toBe("connected");
    });

    it("honours toOthers(): a broadcast carrying the app's own socket id is dropped, another socket's is delivered", async () => {
        const { echo, hub } = setup();
        const received: unknown[] = [];
        echo.channel("chat").listen("MessagePosted", (payload: unknown) => received.push(payload));
        await hub.flush();
        hub.broadcast("chat", "MessagePosted", { text: "mine" }, { socket: echo.socketId() });
        hub.broadcast("chat", "MessagePosted", { text: "theirs" }, { socket: "someone-else" });
        expect(received).toEqual([{ text: "theirs" }]);
    });

    it("a channel left is no longer carried after flush(), and a broadcast to it reaches nobody", async () => {
        const { echo, hub } = setup();
        const received: unknown[] = [];
        echo.channel("a").listen("Ping", (payload: unknown) => received.push(payload));
        echo.channel("b").listen("Ping", () => undefined);
        await hub.flush();
        echo.leave("a");
        await hub.flush();
        expect(hub.joined()).toEqual(["b"]);
        expect(hub.authRequests()).toEqual([["a", "b"], ["b"]]);
        hub.broadcast("a", "Ping", {});
        expect(received).toEqual([]);
    });

    it("runs presence through the connector's snapshot and subscription events: here() with the app's user and the members, joining, leaving", async () => {
        const { echo, hub } = setup({ user: { id: 1, name: "Ada" } });
        hub.presence("presence-room.1").join({ id: 2, name: "Grace" });
        const log: unknown[] = [];
        echo.join("room.1")
            .here((members: unknown) => log.push(["here", members]))
            .joining((member: unknown) => log.push(["joining", member]))
            .leaving((member: unknown) => log.push(["leaving", member]));
        await hub.flush();
        expect(log).toEqual([["here", [{ id: 1, name: "Ada" }, { id: 2, name: "Grace" }]]]);
        hub.presence("presence-room.1").join({ id: 3, name: "Alan" });
        hub.presence("presence-room.1").leave({ id: 2, name: "Grace" });
        await hub.flush();
        expect(log.slice(1)).toEqual([
            ["joining", { id: 3, name: "Alan" }],
            ["leaving", { id: 2, name: "Grace" }],
        ]);
    });

    it("sends the app's whispers to the hub with the connector's envelope, and delivers other clients' whispers but not the app's own", async () => {
        const { echo, hub } = setup();
        const typing: unknown[] = [];
        const channel = echo.private("chat.1").listenForWhisper("typing", (payload: unknown) => typing.push(payload));
        await hub.flush();
        hub.whisper("private-chat.1", "typing", { name: "Grace" }, { from: "grace-socket" });
        hub.whisper("private-chat.1", "typing", { name: "me" }, { from: echo.socketId() });
        expect(typing).toEqual([{ name: "Grace" }]);
        channel.whisper("typing", { name: "Ada" });
        await hub.flush();
        expect(hub.whispers("private-chat.1")).toEqual([{ event: "typing", payload: { name: "Ada" } }]);
        expect(hub.listeners("private-chat.1")).toEqual(["client-typing"]);
    });

    it("reports a denied channel on its error() callbacks with the connector's own MercureError, and stops carrying it", async () => {
        const { echo, hub } = setup();
        hub.deny("private-secret");
        const errors: MercureError[] = [];
        echo.private("secret").error((error: MercureError) => errors.push(error));
        echo.channel("news");
        await hub.flush();
        expect(errors.map((error) => error.code)).toEqual(["auth_denied"]);
        expect(hub.joined()).toEqual(["news"]);
    });

    it("reports an auth endpoint that fails with its status on the batch's channels", async () => {
        const { echo, hub } = setup();
        hub.fail("private-orders.1", 500);
        const errors: MercureError[] = [];
        echo.private("orders.1").error((error: MercureError) => errors.push(error));
        await hub.flush();
        expect(errors).toHaveLength(1);
        expect(errors[0]).toBeInstanceOf(MercureError);
        expect(errors[0]!.message).toContain("500");
        expect(echo.connectionStatus()).toBe("reconnecting");
        expect(hub.joined()).toEqual([]);
    });

    it("drives the connection status: reconnecting, then connected with the replay of what was missed", async () => {
        const { echo, hub } = setup();
        const statuses: string[] = [];
        const received: unknown[] = [];
        echo.connector.onConnectionChange((status) => statuses.push(status));
        echo.channel("news").listen("Posted", (payload: unknown) => received.push(payload));
        await hub.flush();
        hub.broadcast("news", "Posted", { n: 0 });
        hub.status("reconnecting");
        await hub.flush();
        hub.broadcast("news", "Posted", { n: 1 });
        expect(received).toEqual([{ n: 0 }]);
        hub.status("connected");
        await hub.flush();
        expect(received).toEqual([{ n: 0 }, { n: 1 }]);
        expect(statuses).toEqual(["connecting", "connected", "reconnecting", "connected"]);
    });

    it("stops with failed when the hub refuses the stream", async () => {
        const { echo, hub } = setup();
        const errors: MercureError[] = [];
        echo.channel("news").error((error: MercureError) => errors.push(error));
        await hub.flush();
        hub.status("failed");
        await hub.flush();
        expect(echo.connectionStatus()).toBe("failed");
        expect(errors.length).toBeGreaterThan(0);
    });

    it("flushes under fake timers without advancing them: the kit waits on microtasks only", async () => {
        vi.useFakeTimers();
        try {
            const { echo, hub } = setup();
            const received: unknown[] = [];
            echo.private("orders.1").listen("OrderShipped", (payload: unknown) => received.push(payload));
            await hub.flush();
            hub.broadcast("private-orders.1", "OrderShipped", { id: 1 });
            expect(received).toEqual([{ id: 1 }]);
        } finally {
            vi.useRealTimers();
        }
    });

    it("delivers a Laravel notification to notification() callbacks with its id and type", async () => {
        const { echo, hub } = setup();
        const notifications: unknown[] = [];
        echo.private("App.Models.User.1").notification((notification: unknown) => notifications.push(notification));
        await hub.flush();
        hub.notify("private-App.Models.User.1", "App\\Notifications\\InvoicePaid", { amount: 10 }, "n-1");
        expect(notifications).toEqual([{ amount: 10, id: "n-1", type: "App\\Notifications\\InvoicePaid" }]);
    });

    it("joins presence members of several connections of one user once, and keeps the app's user in here()", async () => {
        const { echo, hub } = setup({ user: { id: 1, name: "Ada" } });
        const joining: unknown[] = [];
        const leaving: unknown[] = [];
        echo.join("room.2").joining((member: unknown) => joining.push(member)).leaving((member: unknown) => leaving.push(member));
        await hub.flush();
        const room = hub.presence("presence-room.2");
        room.join({ id: 2 }).join({ id: 2 });
        room.leave({ id: 2 });
        await hub.flush();
        expect(joining).toEqual([{ id: 2 }]);
        expect(leaving).toEqual([]);
        expect(() => room.leave({ id: 3 })).toThrow("not a member");
    });

    it("authorizes a channel again after allow(): joined anew, it is granted and carried", async () => {
        const { echo, hub } = setup();
        hub.deny("private-secret");
        echo.private("secret");
        await hub.flush();
        expect(hub.joined()).toEqual([]);
        hub.allow("private-secret");
        echo.private("secret");
        await hub.flush();
        expect(hub.joined()).toEqual(["private-secret"]);
        expect(hub.authRequests()).toEqual([["private-secret"], ["private-secret"]]);
    });
});
