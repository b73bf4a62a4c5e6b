import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, envelope, topic, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("topology changes", () => {
    it("reopen without a left channel, carrying the cursor as last_event_id", async () => {
        const h = createHarness();
        h.connector.channel("news");
        h.connector.channel("sports");
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        first.emitMessage(envelope(["news"], "App\\Events\\Hello"), "urn:uuid:1");
        h.connector.leaveChannel("sports");
        await h.flush();
        expect(h.auth.lastNames()).toEqual(["news"]);
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(second.matches()).toEqual([topic("news")]);
        expect(second.param("last_event_id")).toBe("urn:uuid:1");
    });

    it("coalesce joins and leaves in the same tick into one auth request and one reopen", async () => {
        const h = createHarness();
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        h.connector.channel("b");
        h.connector.channel("c");
        h.connector.leaveChannel("a");
        await h.flush();
        expect(h.auth.requests).toHaveLength(2);
        expect(h.auth.lastNames()).toEqual(["b", "c"]);
        expect(h.EventSource.instances).toHaveLength(2);
    });

    it("run exactly one trailing refresh for changes made while a refresh is in flight", async () => {
        const h = createHarness();
        h.auth.hold();
        h.connector.channel("a");
        await h.flush();
        h.connector.channel("b");
        await h.flush();
        h.connector.channel("c");
        await h.flush();
        expect(h.auth.requests).toHaveLength(1);
        h.auth.release();
        await h.flush();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["a"], ["a", "b", "c"]]);
        expect(h.EventSource.last().matches()).toEqual([topic("a"), topic("b"), topic("c")]);
    });

    it("keep the old stream running while the new auth is pending or fails", async () => {
        const h = createHarness();
        const received: unknown[] = [];
        h.connector.channel("news").listen(".tick", (payload: unknown) => received.push(payload));
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        h.auth.hold();
        h.auth.handler = () => ({ status: 500 });
        h.track(h.connector.channel("sports"));
        await h.flush();
        expect(first.closed).toBe(false);
        first.emitMessage(envelope(["news"], "tick", { n: 1 }), "1");
        h.auth.release();
        await h.flush();
        expect(first.closed).toBe(false);
        expect(h.connector.connectionStatus()).toBe("connected");
        first.emitMessage(envelope(["news"], "tick", { n: 2 }), "2");
        expect(received).toEqual([{ n: 1 }, { n: 2 }]);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed"]);
    });

    it("stop a refresh from opening anything when disconnect() happens during it", async () => {
        const h = createHarness();
        h.auth.hold();
        h.connector.channel("a");
        await h.flush();
        expect(h.auth.requests).toHaveLength(1);
        const signal = h.auth.requests[0]!.init.signal!;
        h.connector.disconnect();
        expect(signal.aborted).toBe(true);
        h.auth.release();
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.EventSource.instances).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("close the stream when the last channel is left", async () => {
        const h = createHarness();
        h.connector.channel("a");
        await h.flush();
        const stream = h.stream();
        stream.emitOpen();
        h.connector.leaveChannel("a");
        await h.flush();
        expect(stream.closed).toBe(true);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        await vi.advanceTimersByTimeAsync(600_000);
        expect(h.auth.requests).toHaveLength(1); // no cookie refresh for nothing
    });

    it("let leave(name) remove the public, private, encrypted and presence variants", async () => {
        const h = createHarness();
        h.connector.channel("room");
        h.connector.privateChannel("room");
        h.connector.channel("other");
        const left = vi.spyOn(h.connector, "leaveChannel");
        h.connector.leave("room");
        expect(left.mock.calls.map(([name]) => name)).toEqual(["room", "private-room", "private-encrypted-room", "presence-room"]);
        expect(Object.keys(h.connector.channels)).toEqual(["other"]);
        await h.flush();
        expect(h.auth.lastNames()).toEqual(["other"]);
    });

    it("reconnect every registered channel on connect() after disconnect()", async () => {
        const h = createHarness();
        h.connector.channel("a");
        await h.flush();
        h.stream().emitOpen();
        h.connector.disconnect();
        expect(h.EventSource.live()).toHaveLength(0);
        h.connector.connect();
        await h.flush();
        expect(h.auth.requests).toHaveLength(2);
        expect(h.stream().matches()).toEqual([topic("a")]);
        expect(h.stream().param("last_event_id")).toBeNull();
    });

    it("accept channel names that are Object.prototype members", async () => {
        const h = createHarness();
        const received: string[] = [];
        for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
            h.connector.channel(name).listen(".ping", () => received.push(name));
        }
        await h.flush();
        expect(Object.keys(h.connector.channels)).toEqual(["__proto__", "constructor", "toString", "hasOwnProperty"]);
        const stream = h.stream();
        stream.emitOpen();
        stream.emitMessage(envelope(["__proto__", "constructor", "valueOf"], "ping"), "1");
        expect(received).toEqual(["__proto__", "constructor"]);
        h.connector.leaveChannel("__proto__");
        expect(Object.keys(h.connector.channels)).toEqual(["constructor", "toString", "hasOwnProperty"]);
    });

    it("ignore a channel left while its auth request was in flight", async () => {
        const h = createHarness();
        h.auth.hold();
        h.connector.channel("a");
        h.connector.channel("b");
        await h.flush();
        h.connector.leaveChannel("b");
        h.auth.release();
        await h.flush();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["a", "b"], ["a"]]);
        expect(h.EventSource.live().map((stream) => stream.matches())).toEqual([[topic("a")]]);
    });

    it("grant an empty batch to a fully denied set and wind down", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, {}, names);
        h.track(h.connector.privateChannel("x"));
        await h.flush();
        expect(h.EventSource.instances).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_denied"]);
    });

    it("reopens from the id of a dropped message (a toOthers() echo of this connection's own broadcast)", async () => {
        const h = createHarness();
        h.connector.channel("news");
        h.connector.channel("sports");
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        first.emitMessage(envelope(["news"], "App\\Events\\Hello"), "urn:1");
        first.emitMessage(envelope(["news"], "App\\Events\\Hello", {}, h.connector.socketId()), "urn:2");
        first.emitMessage("not an envelope", "urn:3");
        h.connector.leaveChannel("sports");
        await h.flush();
        const second = h.EventSource.last();
        expect(second).not.toBe(first);
        expect(second.param("last_event_id")).toBe("urn:3");
    });
});
