import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, envelope, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

async function connected(options = {}) {
    const h = createHarness(options);
    const channel = h.connector.channel("news");
    const room = h.connector.privateChannel("room.1");
    await h.flush();
    const stream = h.stream();
    stream.emitOpen();
    return { h, channel, room, stream };
}

describe("dispatching a broadcast", () => {
    it("formats event names with the namespace exactly like Echo", async () => {
        const { channel, stream } = await connected();
        const got: string[] = [];
        channel.listen("OrderShipped", () => got.push("namespaced"));
        channel.listen(".order.shipped", () => got.push("dotted"));
        channel.listen("\\Custom\\Event", () => got.push("backslash"));
        stream.emitMessage(envelope(["news"], "App\\Events\\OrderShipped"), "1");
        stream.emitMessage(envelope(["news"], "order.shipped"), "2");
        stream.emitMessage(envelope(["news"], "Custom\\Event"), "3");
        stream.emitMessage(envelope(["news"], "OrderShipped"), "4");
        expect(got).toEqual(["namespaced", "dotted", "backslash"]);
    });

    it("honours a custom or disabled namespace", async () => {
        const custom = await connected({ namespace: "Domain.Events" });
        const got: string[] = [];
        custom.channel.listen("Paid", () => got.push("custom"));
        custom.stream.emitMessage(envelope(["news"], "Domain\\Events\\Paid"), "1");
        const none = await connected({ namespace: false });
        none.channel.listen("Paid", () => got.push("none"));
        none.stream.emitMessage(envelope(["news"], "Paid"), "1");
        expect(got).toEqual(["custom", "none"]);
    });

    it("passes the payload and reaches private channels", async () => {
        const { room, stream } = await connected();
        const payloads: unknown[] = [];
        room.listen("MessageSent", (payload: unknown) => payloads.push(payload));
        stream.emitMessage(envelope(["private-room.1"], "App\\Events\\MessageSent", { text: "hi" }), "1");
        expect(payloads).toEqual([{ text: "hi" }]);
    });

    it("drops envelopes carrying this connection's socket id (toOthers)", async () => {
        const { h, channel, stream } = await connected();
        const got: unknown[] = [];
        channel.listen(".e", (payload: unknown) => got.push(payload));
        stream.emitMessage(envelope(["news"], "e", { from: "me" }, h.connector.socketId()), "1");
        stream.emitMessage(envelope(["news"], "e", { from: "other" }, "someone-else"), "2");
        expect(got).toEqual([{ from: "other" }]);
    });

    it("has a socket id at once, stable for the connector's life", async () => {
        const h = createHarness();
        const id = h.connector.socketId();
        expect(id).toMatch(/^[0-9a-f-]{36}$/);
        h.connector.channel("a");
        await h.flush();
        h.connector.disconnect();
        expect(h.connector.socketId()).toBe(id);
        expect(createHarness().connector.socketId()).not.toBe(id);
    });

    it("never reads an encrypted update as plaintext", async () => {
        const { channel, stream } = await connected();
        const got: string[] = [];
        channel.listen(".e", () => got.push("news"));
        stream.emitMessage({ channels: ["news", "private-encrypted-x"], data: "eyJ.x.y.z.w", event: "e" }, "2");
        expect(got).toEqual([]);
    });

    it("ignores malformed hub data and keeps working", async () => {
        const { channel, stream } = await connected();
        const got: unknown[] = [];
        channel.listen(".e", (payload: unknown) => got.push(payload));
        for (const data of ["not json", "null", "[1]", '{"channels":"news","event":"e"}', '{"channels":["news"],"event":5}', '{"channels":[1,null],"event":"e"}', ""]) {
            stream.emitMessage(data, "x" + data.length);
        }
        stream.emitMessage(envelope(["news"], "e", { ok: true }), "ok");
        expect(got).toEqual([{ ok: true }]);
    });

    it("only delivers to channels the delivering stream carries", async () => {
        const { h, channel, stream } = await connected();
        const got: string[] = [];
        channel.listen(".e", () => got.push("news"));
        h.auth.hold();
        h.connector.channel("sports").listen(".e", () => got.push("sports"));
        await h.flush();
        stream.emitMessage(envelope(["news", "sports"], "e"), "1");
        expect(got).toEqual(["news"]);
    });

    it("keeps the remaining listeners when one throws", async () => {
        const { channel, stream } = await connected();
        const got: string[] = [];
        const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
        channel.listen(".e", () => {
            throw new Error("boom");
        });
        channel.listen(".e", () => got.push("second"));
        stream.emitMessage(envelope(["news"], "e"), "1");
        stream.emitMessage(envelope(["news"], "e"), "2");
        expect(got).toEqual(["second", "second"]);
        expect(spy).toHaveBeenCalledTimes(2);
        spy.mockRestore();
    });

    it("delivers an id replayed after the stream reconnects once", async () => {
        const { channel, stream } = await connected();
        const got: unknown[] = [];
        channel.listen(".e", (payload: unknown) => got.push(payload));
        stream.emitMessage(envelope(["news"], "e", 1), "urn:1");
        stream.emitMessage(envelope(["news"], "e", 2), "urn:2");
        // The stream reconnects by itself; a hub that replays from an older point repeats urn:2.
        stream.emitError(false);
        stream.emitOpen();
        stream.emitMessage(envelope(["news"], "e", 2), "urn:2");
        stream.emitMessage(envelope(["news"], "e", 3), "");
        stream.emitMessage(envelope(["news"], "e", 4), "urn:4");
        expect(got).toEqual([1, 2, 3, 4]);
    });
});

describe("channel listeners", () => {
    it("stopListening(event, callback) removes only that callback; without one, all", async () => {
        const { channel, stream } = await connected();
        const got: string[] = [];
        const a = () => got.push("a");
        const b = () => got.push("b");
        channel.listen("Evt", a).listen("Evt", b);
        channel.stopListening("Evt", a);
        stream.emitMessage(envelope(["news"], "App\\Events\\Evt"), "1");
        channel.stopListening("Evt");
        stream.emitMessage(envelope(["news"], "App\\Events\\Evt"), "2");
        expect(got).toEqual(["b"]);
    });

    it("listenToAll() receives every event named as listen() takes it, until stopListeningToAll()", async () => {
        const { channel, stream } = await connected();
        const got: Array<[string, unknown]> = [];
        const all = (event: string, payload: unknown) => got.push([event, payload]);
        const other = () => got.push(["other", null]);
        channel.listenToAll(all).listenToAll(other);
        stream.emitMessage(envelope(["news"], "App\\Events\\Shipped", { a: 1 }), "1");
        stream.emitMessage(envelope(["news"], "custom.name", { b: 2 }), "2");
        channel.stopListeningToAll(other);
        stream.emitMessage(envelope(["news"], "x"), "3");
        channel.stopListeningToAll();
        stream.emitMessage(envelope(["news"], "y"), "4");
        expect(got).toEqual([
            ["Shipped", { a: 1 }],
            ["other", null],
            [".custom.name", { b: 2 }],
            ["other", null],
            [".x", {}],
        ]);
    });

    it("notification() listens to Laravel's BroadcastNotificationCreated until stopped", async () => {
        const { room, stream } = await connected();
        const got: unknown[] = [];
        const callback = (payload: unknown) => got.push(payload);
        room.notification(callback);
        const event = "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated";
        stream.emitMessage(envelope(["private-room.1"], event, { id: "n1", type: "Invoice" }), "1");
        room.stopListeningForNotification(callback);
        stream.emitMessage(envelope(["private-room.1"], event, { id: "n2" }), "2");
        expect(got).toEqual([{ id: "n1", type: "Invoice" }]);
    });
});
