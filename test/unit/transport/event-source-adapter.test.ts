import { EventSource as EventSourcePackage } from "eventsource";
import { EventSourcePolyfill } from "event-source-polyfill";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HubTokenSource, withHubToken } from "../../../src/auth/hub-token";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import { adaptEventSource, DEFAULT_HEARTBEAT_TIMEOUT, errorStatus, eventSourceKind } from "../../../src/transport/event-source-adapter";
import { type EventSourceConstructor, type EventSourceInitLike, type FetchLike } from "../../../src/transport/platform";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import { HUB, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** An unsigned JWT-shaped token expiring `life` seconds from now. */
function jwt(life: number, n = 1): string {
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${part({ alg: "HS256" })}.${part({ exp: Math.floor(Date.now() / 1_000) + life, n })}.c2ln`;
}

/** A fake that records its init dicts; `as`: shaped like the browser's (a bound, native-looking function) or the polyfill (a data `withCredentials` on its prototype). */
function recording(as: "fetch" | "polyfill" | "native" = "fetch") {
    const Fake = createFakeEventSource();
    const inits: Array<EventSourceInitLike & Record<string, unknown>> = [];
    class Recording extends Fake {
        constructor(url: string, init?: EventSourceInitLike) {
            super(url, init);
            inits.push({ ...init });
        }
    }
    if (as === "polyfill") Object.defineProperty(Recording.prototype, "withCredentials", { value: undefined, writable: true });
    const Impl = (as === "native" ? Recording.bind(null) : Recording) as unknown as FakeEventSourceClass;
    return { Impl, Fake, inits };
}

describe("eventSourceKind", () => {
    it("recognises the browser's EventSource, event-source-polyfill and the eventsource package by feature, not by name", () => {
        expect(eventSourceKind(recording("native").Impl)).toBe("native");
        expect(eventSourceKind(EventSourcePolyfill as unknown as EventSourceConstructor)).toBe("polyfill");
        // A minified build renames the class; a subclass keeps the polyfill's prototype chain.
        const Renamed = class extends (EventSourcePolyfill as unknown as EventSourceConstructor) {};
        Object.defineProperty(Renamed, "name", { value: "e" });
        expect(eventSourceKind(Renamed)).toBe("polyfill");
        expect(eventSourceKind(EventSourcePackage as unknown as EventSourceConstructor)).toBe("fetch");
        expect(eventSourceKind(recording().Impl)).toBe("fetch");
    });

    it("reads the HTTP status from the polyfill's `status` and the eventsource package's `code`", () => {
        expect(errorStatus(Object.assign(new Event("error"), { status: 401 }))).toBe(401);
        expect(errorStatus(Object.assign(new Event("error"), { code: 400 }))).toBe(400);
        expect(errorStatus(Object.assign(new Event("error"), { status: 0 }))).toBeUndefined();
        expect(errorStatus(new Event("error"))).toBeUndefined();
    });
});

describe("adaptEventSource", () => {
    it("gives the polyfill the Mercure cursor name, the heartbeat, and an Authorization header read at each (re)connect", async () => {
        const { Impl, inits } = recording("polyfill");
        const token = new HubTokenSource(() => jwt(600, Date.now()));
        const first = await token.get();
        const Adapted = adaptEventSource(Impl, { fetch: undefined, token, heartbeatTimeout: DEFAULT_HEARTBEAT_TIMEOUT });
        new Adapted(HUB + "?match=x", { withCredentials: true });
        const init = inits[0]!;
        expect(init.withCredentials).toBe(true);
        expect(init["lastEventIdQueryParameterName"]).toBe("last_event_id");
        expect(init["heartbeatTimeout"]).toBe(60_000);
        expect(init.fetch).toBeUndefined();
        const headers = init["headers"] as Record<string, string>;
        expect({ ...headers }).toEqual({ Authorization: `Bearer ${first}` });
        token.refused();
        vi.advanceTimersByTime(1_000);
        const second = await token.get();
        expect(second).not.toBe(first);
        expect(headers["Authorization"]).toBe(`Bearer ${second}`);
    });

    it("forgets the token when a stream is refused with 401, so the next stream asks for a new one", async () => {
        const { Impl, Fake } = recording("polyfill");
        let calls = 0;
        const token = new HubTokenSource(() => jwt(600, ++calls));
        await token.get();
        const Adapted = adaptEventSource(Impl, { fetch: undefined, token, heartbeatTimeout: 3_000 });
        new Adapted(HUB, { withCredentials: true });
        Fake.last().emitError(true, 500);
        await token.get();
        expect(calls).toBe(1);
        Fake.last().emitError(true, 401);
        await token.get();
        expect(calls).toBe(2);
    });

    it("gives an eventsource-like implementation the fetch, and leaves the browser's as it is", () => {
        const fetch: FetchLike = () => Promise.reject(new Error("unused"));
        const { Impl, inits } = recording();
        new (adaptEventSource(Impl, { fetch, token: null, heartbeatTimeout: 3_000 }))(HUB, { withCredentials: true });
        expect(typeof inits[0]!.fetch).toBe("function");
        expect(inits[0]!["headers"]).toBeUndefined();
        const native = recording("native").Impl;
        expect(adaptEventSource(native, { fetch, token: null, heartbeatTimeout: 3_000 })).toBe(native);
    });

    it("tells replayGap when a stream that asked for a cursor is answered Mercure-Last-Event-ID: earliest (issue 52: a hub without history)", async () => {
        const answers: Array<string | null> = [];
        const fetch: FetchLike = () => {
            const value = answers.shift() ?? null;
            return Promise.resolve({ status: 200, headers: { get: (name: string) => (name.toLowerCase() === "mercure-last-event-id" ? value : null) }, text: () => Promise.resolve("") });
        };
        const gaps: string[] = [];
        const { Impl, inits } = recording();
        new (adaptEventSource(Impl, { fetch, token: null, heartbeatTimeout: 3_000, replayGap: (cursor) => gaps.push(cursor) }))(HUB, { withCredentials: true });
        const streamFetch = inits[0]!.fetch as (url: string, init?: { headers?: Record<string, string> }) => Promise<unknown>;
        // The first request's cursor is in the URL, a reconnect's in the Last-Event-ID header (the eventsource package's).
        answers.push("earliest", "urn:uuid:2", "earliest", "earliest");
        await streamFetch(`${HUB}?match=x&last_event_id=urn:uuid:1`);
        await streamFetch(`${HUB}?match=x`, { headers: { "Last-Event-ID": "urn:uuid:2" } });
        await streamFetch(`${HUB}?match=x`, { headers: { "Last-Event-ID": "urn:uuid:3" } });
        // No cursor asked, or `earliest` asked: nothing was expected to be replayed from a position.
        await streamFetch(`${HUB}?match=x&last_event_id=earliest`);
        await streamFetch(`${HUB}?match=x`);
        expect(gaps).toEqual(["urn:uuid:1", "urn:uuid:3"]);
    });

    it("refuses the browser's EventSource with a hub token, naming both fixes", () => {
        const token = new HubTokenSource("a.b.c");
        expect(() => adaptEventSource(recording("native").Impl, { fetch: undefined, token, heartbeatTimeout: 3_000 })).toThrow(
            expect.objectContaining({ code: "invalid_option", message: expect.stringMatching(/event-source-polyfill.*serve the hub under the app's domain/) }),
        );
    });
});

describe("withHubToken", () => {
    it("adds the Bearer header to requests to the hub and below it only, and forgets the token on the hub's 401", async () => {
        const seen: Array<{ url: string; authorization: string | null }> = [];
        let status = 200;
        const base: FetchLike = async (url, init) => {
            seen.push({ url, authorization: new Headers(init.headers).get("Authorization") });
            return { status, text: async () => "" };
        };
        let n = 0;
        const token = new HubTokenSource(() => jwt(600, ++n));
        const fetch = withHubToken(base, new URL(HUB), token);
        await fetch(HUB + "?topic=x", { method: "POST" });
        await fetch(HUB + "/subscriptions/x", {});
        await fetch("https://app.test/broadcasting/auth", { method: "POST" });
        await fetch("https://app.test/.well-known/mercure-other", {});
        expect(seen.map((r) => r.authorization !== null)).toEqual([true, true, false, false]);
        expect(seen[0]!.authorization).toBe(`Bearer ${token.current()}`);
        expect(seen[0]!.url).not.toContain(token.current()!);
        status = 401;
        await fetch(HUB, {});
        await fetch(HUB, {});
        expect(n).toBe(2);
    });
});

describe("the connector with hubToken", () => {
    it("reports the browser's EventSource with hubToken on error() with status failed, and never throws from the constructor", async () => {
        const auth = new FakeAuthServer();
        const { Impl } = recording("native");
        const connector = new MercureConnector({ host: HUB, eventSource: Impl, fetch: auth.fetch, hubToken: "a.b.c" });
        const errors: MercureError[] = [];
        connector.privateChannel("orders.1").error((error: MercureError) => errors.push(error));
        await vi.advanceTimersByTimeAsync(0);
        expect(errors.map((error) => error.code)).toEqual(["invalid_option"]);
        expect(errors[0]!.message).toContain("event-source-polyfill");
        expect(connector.connectionStatus()).toBe("failed");
        expect(Impl.instances).toHaveLength(0);
    });

    it("opens the polyfill stream with the token obtained during the auth, and renews before the token expires", async () => {
        const auth = new FakeAuthServer();
        const { Impl, Fake, inits } = recording("polyfill");
        let calls = 0;
        // Tokens of 30 s; the auth response says 300 s: the renewal follows the token.
        const connector = new MercureConnector({ host: HUB, eventSource: Impl, fetch: auth.fetch, hubToken: async () => jwt(30, ++calls), heartbeatTimeout: 3_000 });
        connector.privateChannel("orders.1");
        await vi.advanceTimersByTimeAsync(0);
        expect(Fake.instances).toHaveLength(1);
        expect((inits[0]!["headers"] as Record<string, string>)["Authorization"]).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
        expect(inits[0]!["heartbeatTimeout"]).toBe(3_000);
        expect(calls).toBe(1);
        const firstHeader = (inits[0]!["headers"] as Record<string, string>)["Authorization"];
        Fake.last().emitOpen();
        // [spec] mercure-hub §1.5: the hub may end the stream from 0.8 × 30 s − 5 s = 19 s on; the renewal comes first.
        await vi.advanceTimersByTimeAsync(18_000);
        expect(calls).toBe(2);
        expect(Fake.instances).toHaveLength(2);
        expect((inits[1]!["headers"] as Record<string, string>)["Authorization"]).not.toBe(firstHeader);
        connector.disconnect();
    });

    it("stops with failed on a stream refused with 400, instead of retrying for ever", async () => {
        const auth = new FakeAuthServer();
        const { Impl, Fake } = recording("polyfill");
        const connector = new MercureConnector({ host: HUB, eventSource: Impl, fetch: auth.fetch, hubToken: () => jwt(600) });
        const errors: MercureError[] = [];
        connector.privateChannel("orders.1").error((error: MercureError) => errors.push(error));
        await vi.advanceTimersByTimeAsync(0);
        Fake.last().emitError(true, 400);
        // The hub is probed first (the diagnostics chunk loads in real time), whatever it finds the 400 stands.
        await vi.waitFor(() => expect(connector.connectionStatus()).toBe("failed"), { timeout: 10_000, interval: 50 });
        await vi.advanceTimersByTimeAsync(120_000);
        expect(Fake.instances).toHaveLength(1);
        expect([errors[0]!.code, errors[0]!.status]).toEqual(["stream_error", 400]);
        expect(errors[0]!.message).toContain("not retrying: fix the cause, then call connect()");
    }, 20_000);
});
