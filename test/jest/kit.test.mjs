/**
 * The testing kit under Jest (issue 34: "works in Vitest and Jest"): the built entry (dist/testing/index.js), in Jest's
 * ESM mode with jsdom, with Jest's own fake timers in one test. Run by test/e2e/jest-kit.test.ts (npm test).
 */
import { jest } from "@jest/globals";
import { createTestEcho } from "../../dist/testing/index.js";

let current = null;
afterEach(() => {
    current?.disconnect();
    current = null;
    jest.useRealTimers();
});

function setup(options = {}) {
    const made = createTestEcho(options);
    current = made.echo;
    return made;
}

test("runs in a jsdom window", () => {
    expect(typeof window.document.createElement).toBe("function");
});

test("delivers a broadcast with Laravel's envelope and event names once flush() has authorized and subscribed", async () => {
    const { echo, hub } = setup();
    const shipped = [];
    echo.private("orders.1").listen("OrderShipped", (payload) => shipped.push(payload));
    await hub.flush();
    expect(hub.authRequests()).toEqual([["private-orders.1"]]);
    expect(hub.joined()).toEqual(["private-orders.1"]);
    hub.broadcast("private-orders.1", "OrderShipped", { id: 42 });
    hub.broadcast("private-orders.1", "OrderShipped", { id: 43 }, { socket: echo.socketId() }); // toOthers(): dropped
    expect(shipped).toEqual([{ id: 42 }]);
    expect(echo.connectionStatus()).toBe("connected");
});

test("works under Jest's fake timers (with microtasks left real, as Vitest's are): flush() needs no clock", async () => {
    jest.useFakeTimers({ doNotFake: ["queueMicrotask", "nextTick"] });
    const { echo, hub } = setup({ user: { id: 1, name: "Ada" } });
    const log = [];
    echo.join("room.1")
        .here((list) => log.push(["here", list.map((member) => member.name)]))
        .leaving((member) => log.push(["leaving", member.name]));
    hub.presence("presence-room.1").join({ id: 2, name: "Ann" });
    await hub.flush();
    hub.presence("presence-room.1").leave({ id: 2, name: "Ann" });
    await hub.flush();
    expect(log).toEqual([
        ["here", ["Ada", "Ann"]],
        ["leaving", "Ann"],
    ]);
});

test("deny(channel) reaches the channel's error() as auth_denied", async () => {
    const { echo, hub } = setup();
    const errors = [];
    hub.deny("private-secret");
    echo.private("secret").error((error) => errors.push(error.code));
    await hub.flush();
    expect(errors).toEqual(["auth_denied"]);
});
