import Echo from "laravel-echo";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import { MercureEcho, encryptedPrivate } from "../../../src/connector/mercure-echo";
import { MercureChannel } from "../../../src/channel/mercure-channel";
import { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import { MercurePrivateChannel } from "../../../src/channel/mercure-private-channel";
import { MercureError } from "../../../src/errors";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { envelope, HUB, topic, useScopedFakeTimers } from "../../fakes/connector-harness";
import { createFakeEventSource } from "../../fakes/fake-event-source";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("stock laravel-echo 2.5.0 with MercureConnector", () => {
    it("refuses the string \"mercure\" with its generic message, as README's Quick start says (the class, or MercureEcho, is the way)", () => {
        expect(() => new Echo({ broadcaster: "mercure" } as never)).toThrow("Broadcaster string mercure is not supported.");
        expect(new MercureEcho({ broadcaster: "mercure", host: HUB, eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch }).connector).toBeInstanceOf(MercureConnector);
    });

    it("drives channel(), private(), listen(), leave(), leaveAllChannels(), socketId() and connectionStatus()", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        const echo = new Echo({ broadcaster: MercureConnector, host: HUB, eventSource: EventSource, fetch: auth.fetch, withoutInterceptors: true });
        expect(echo.connector).toBeInstanceOf(MercureConnector);
        expect(echo.connectionStatus()).toBe("disconnected");
        expect(echo.socketId()).toBe((echo.connector as unknown as MercureConnector).socketId());

        const got: unknown[] = [];
        echo.channel("orders").listen("OrderShipped", (payload: unknown) => got.push(payload));
        echo.private("orders.1").listen(".status", (payload: unknown) => got.push(payload));
        echo.listen("feed", ".post", (payload: unknown) => got.push(payload));
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["orders", "private-orders.1", "feed"]]);
        const stream = EventSource.last();
        stream.emitOpen();
        expect(echo.connectionStatus()).toBe("connected");
        stream.emitMessage(envelope(["orders"], "App\\Events\\OrderShipped", { id: 1 }), "1");
        stream.emitMessage(envelope(["private-orders.1"], "status", { id: 2 }), "2");
        stream.emitMessage(envelope(["feed"], "post", { id: 3 }), "3");
        expect(got).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);

        echo.leave("orders.1");
        expect(Object.keys((echo.connector as unknown as MercureConnector).channels)).toEqual(["orders", "feed"]);
        await vi.advanceTimersByTimeAsync(0);
        EventSource.last().emitOpen();
        await vi.advanceTimersByTimeAsync(1_500);
        expect(EventSource.live().map((source) => source.matches())).toEqual([[topic("orders"), topic("feed")]]);

        echo.leaveAllChannels();
        await vi.advanceTimersByTimeAsync(0);
        expect(EventSource.live()).toHaveLength(0);
        expect(echo.connectionStatus()).toBe("disconnected");
        expect(auth.requests).toHaveLength(2);
    });

    it("joins an encrypted channel through encryptedPrivate(echo, name), which stock Echo's own encryptedPrivate() refuses", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        const echo = new Echo({ broadcaster: MercureConnector, host: HUB, eventSource: EventSource, fetch: auth.fetch, withoutInterceptors: true });
        expect(() => echo.encryptedPrivate("orders.1")).toThrow(/does not support encrypted private channels/);
        const channel = encryptedPrivate(echo, "orders.1");
        expect(channel).toBeInstanceOf(MercurePrivateChannel);
        expect(channel.name).toBe("private-encrypted-orders.1");
        expect(echo.private("encrypted-orders.1")).toBe(channel);
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.lastNames()).toEqual(["private-encrypted-orders.1"]);

        const other = new Echo({ broadcaster: "null", withoutInterceptors: true });
        let refused: unknown;
        try {
            encryptedPrivate(other, "orders.1");
        } catch (error) {
            refused = error;
        }
        expect(refused).toBeInstanceOf(MercureError);
        expect((refused as MercureError).code).toBe("invalid_option");
        expect((refused as MercureError).message).toContain("MercureConnector");
        expect(() => encryptedPrivate({ connector: {} }, "x")).toThrow(MercureError);
    });

    it("sends X-Socket-Id through Echo's axios interceptor for toOthers()", () => {
        const interceptors: Array<(config: { headers: Record<string, string> }) => unknown> = [];
        vi.stubGlobal("axios", Object.assign(() => undefined, { interceptors: { request: { use: (fn: never) => interceptors.push(fn) } } }));
        try {
            const echo = new Echo({ broadcaster: MercureConnector, host: HUB });
            const config = { headers: {} as Record<string, string> };
            interceptors[0]!(config);
            expect(config.headers["X-Socket-Id"]).toBe(echo.socketId());
        } finally {
            vi.unstubAllGlobals();
        }
    });
});

describe("channel names", () => {
    it("are routed by their full prefix whichever method created them", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        const echo = new MercureEcho({ host: HUB, eventSource: EventSource, fetch: auth.fetch });
        expect(echo.channel("presence-room")).toBeInstanceOf(MercurePresenceChannel);
        expect(echo.join("lobby")).toBe(echo.channel("presence-lobby"));
        expect(echo.channel("private-orders.1")).toBeInstanceOf(MercurePrivateChannel);
        expect(echo.channel("private-orders.1")).toBe(echo.private("orders.1"));
        expect(echo.channel("news")).not.toBeInstanceOf(MercurePrivateChannel);
        const encrypted = echo.private("encrypted-x");
        expect(encrypted.name).toBe("private-encrypted-x");
        expect(echo.channel("private-encrypted-x")).toBe(encrypted);
        expect(echo.encryptedPrivate("x")).toBe(encrypted);
        expect(encryptedPrivate(echo, "x")).toBe(encrypted);
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["presence-room", "presence-lobby", "private-orders.1", "news", "private-encrypted-x"]]);
        expect(Object.keys(echo.connector.channels)).toEqual(["presence-room", "presence-lobby", "private-orders.1", "news", "private-encrypted-x"]);
    });
});

describe("MercureEcho", () => {
    it("defaults the broadcaster to MercureConnector, accepts 'mercure', and types the channels", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        const echo = new MercureEcho({ host: HUB, eventSource: EventSource, fetch: auth.fetch });
        expect(echo.connector).toBeInstanceOf(MercureConnector);
        expect(echo).toBeInstanceOf(Echo);
        expect(new MercureEcho({ broadcaster: "mercure", host: HUB }).connector).toBeInstanceOf(MercureConnector);
        expect(echo.channel("a")).toBeInstanceOf(MercureChannel);
        expect(echo.private("b")).toBeInstanceOf(MercurePrivateChannel);
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.lastNames()).toEqual(["a", "private-b"]);
    });

    it("rejects other broadcasters", () => {
        expect(() => new MercureEcho({ broadcaster: "pusher" as never })).toThrow(/only supports the `broadcaster` option "mercure"/);
    });

    it("says clearly that public channels cannot whisper, and lets private ones", () => {
        const echo = new MercureEcho({ host: HUB, eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch });
        const unsupported = (run: () => unknown) => {
            try {
                run();
            } catch (error) {
                return error instanceof MercureError ? error.code : "other";
            }
            return "no error";
        };
        expect(unsupported(() => echo.channel("x").whisper("typing", {}))).toBe("unsupported");
        expect(unsupported(() => echo.private("x").whisper("typing", {}))).toBe("no error");
    });
});
