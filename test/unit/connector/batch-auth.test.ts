import { Connector } from "laravel-echo";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_HUB_TIMEOUTS, renewalDelay } from "../../../src/auth/cookie-refresh";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { FetchLike } from "../../../src/transport/platform";
import type { MercureError } from "../../../src/errors";
import { FakeAuthServer, grant, PREFIX } from "../../fakes/fake-auth-server";
import { createHarness, settleLoads, topic, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    document.head.innerHTML = "";
});

describe("the batch auth request", () => {
    it("is not made, and no stream is opened, when the connector is constructed", async () => {
        const h = createHarness();
        await h.flush();
        expect(h.auth.requests).toHaveLength(0);
        expect(h.EventSource.instances).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("carries every channel joined in the same tick, in join order, in one POST", async () => {
        const h = createHarness({ csrfToken: "csrf-1", bearerToken: "tok", auth: { headers: { "X-Custom": "yes" } } });
        h.connector.channel("news");
        h.connector.privateChannel("room.1");
        h.connector.channel("sports");
        await h.flush();
        expect(h.auth.requests).toHaveLength(1);
        const request = h.auth.requests[0]!;
        // Against the page's address (https://app.test/dashboard), never the document's base URL: see the next test.
        expect(request.url).toBe("https://app.test/broadcasting/auth");
        expect(request.init.method).toBe("POST");
        expect(request.init.credentials).toBe("include");
        expect(request.init.body).toBe('{"channel_names":["news","private-room.1","sports"]}');
        expect(request.headers).toMatchObject({
            "Content-Type": "application/json",
            Accept: "application/json",
            "X-CSRF-TOKEN": "csrf-1",
            Authorization: "Bearer tok",
            "X-Custom": "yes",
        });
        expect(h.EventSource.instances).toHaveLength(1);
    });

    it("resolves a relative endpoint against the page, so that a <base href> injected into the body cannot move it (issue 50)", async () => {
        const base = document.createElement("base");
        base.setAttribute("href", "https://evil.example/");
        document.body.append(base);
        try {
            const h = createHarness({ csrfToken: "csrf-1" });
            h.connector.channel("news");
            await h.flush();
            expect(h.auth.requests.map((request) => request.url)).toEqual(["https://app.test/broadcasting/auth"]);
        } finally {
            base.remove();
        }
    });

    it("reads the CSRF token from the csrf-token meta tag", async () => {
        document.head.innerHTML = '<meta name="csrf-token" content="from-meta">';
        const h = createHarness();
        h.connector.channel("news");
        await h.flush();
        expect(h.auth.requests[0]!.headers["X-CSRF-TOKEN"]).toBe("from-meta");
    });

    it("never mutates Echo's shared defaults or the caller's header object", () => {
        const headers = { "X-Custom": "1" };
        new MercureConnector({ host: "https://a.test/hub", csrfToken: "secret", bearerToken: "b", auth: { headers } });
        new MercureConnector({ host: "https://a.test/hub", csrfToken: "other" });
        expect(Connector._defaultOptions.auth.headers).toEqual({});
        expect(Connector._defaultOptions.userAuthentication.headers).toEqual({});
        expect(headers).toEqual({ "X-Custom": "1" });
    });

    it("subscribes with one match per granted channel, encoded like PHP rawurlencode", async () => {
        const h = createHarness();
        h.connector.channel("room/1 !'()*");
        h.connector.privateChannel("orders.1");
        await h.flush();
        const stream = h.stream();
        expect(stream.withCredentials).toBe(true);
        expect(stream.matches()).toEqual([
            PREFIX + "channel/room%2F1%20%21%27%28%29%2A",
            PREFIX + "channel/private-orders.1",
        ]);
        expect(stream.url.startsWith("https://app.test/.well-known/mercure?match=https%3A%2F%2Flaravel.alt")).toBe(true);
        expect(stream.param("last_event_id")).toBeNull();
    });

    it("evicts a denied channel with an error and keeps the others", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, {}, ["private-secret"]);
        const secret = h.track(h.connector.privateChannel("secret"));
        h.track(h.connector.channel("news"));
        await h.flush();
        expect(h.errors).toHaveLength(1);
        expect(h.errors[0]!.channel).toBe("private-secret");
        expect(h.errors[0]!.error.code).toBe("auth_denied");
        expect(h.errors[0]!.error.message).toContain('"private-secret"');
        expect(Object.keys(h.connector.channels)).toEqual(["news"]);
        expect(h.stream().matches()).toEqual([topic("news")]);
        expect(h.connector.privateChannel("secret")).not.toBe(secret);
    });

    it("falls back to bare channel names as topics when the server sends no topic_prefix (legacy servers)", async () => {
        const h = createHarness();
        h.auth.handler = (names) => ({ status: 200, body: { channel_names: names.map((name) => ({ name })) } });
        h.connector.channel("news");
        h.connector.privateChannel("a b");
        await h.flush();
        expect(h.stream().matches()).toEqual(["news", "private-a b"]);
    });

    it("treats an empty topic_prefix as a prefix, not as a legacy server", async () => {
        const h = createHarness();
        h.auth.handler = (names) => grant(names, { topic_prefix: "" });
        h.connector.channel("a b");
        await h.flush();
        expect(h.stream().matches()).toEqual(["channel/a%20b"]);
    });

    // Not spec §2.5's upstream rule (an unparsable body reads as {}): Laravel's route always answers JSON, so
    // anything else is another route's answer, and a stream opened on it would fail with a misleading cookie error.
    describe("refuses an answer that is not Laravel's JSON, saying what came back and the usual cause", () => {
        const cases = [
            ["a redirect to the login page, as Node.js's fetch answers it when told not to follow", { status: 302, body: "", headers: { location: "https://app.test/login" } }, /HTTP 302: a redirect to https:\/\/app\.test\/login, not followed; is a user logged in, or does middleware redirect\?\)/],
            ["a login page a `fetch` option reached by following the redirect anyway", { status: 200, body: "<!doctype html><title>Log in</title>", headers: { "content-type": "text/html; charset=UTF-8" }, redirectedTo: "https://app.test/login" }, /HTTP 200: a redirect to https:\/\/app\.test\/login, not followed; is a user logged in, or does middleware redirect\?\)/],
            ["an HTML page answered directly", { status: 200, body: "<html>oops", headers: { "content-type": "text/html" } }, /HTTP 200: text\/html, not Laravel's JSON/],
            ["an unreadable body without a content type", { status: 200, body: "<html>oops" }, /HTTP 200: no content type, not Laravel's JSON/],
            ["a JSON body that is not an object", { status: 200, body: "[]", headers: { "content-type": "application/json" } }, /HTTP 200: application\/json, not Laravel's JSON/],
        ] as const;
        it.each(cases)("%s", async (_what, answer, message) => {
            const h = createHarness();
            h.auth.handler = () => answer;
            const errors: MercureError[] = [];
            h.connector.channel("news").error((error: MercureError) => errors.push(error));
            await h.flush();
            expect(h.EventSource.live()).toEqual([]);
            expect(errors.map((error) => [error.code, error.status])).toEqual([["auth_rejected", answer.status]]);
            expect(errors[0]!.message).toMatch(message);
        });

        it("a redirect a browser was told not to follow (status 0, its target hidden): no status to name", async () => {
            const h = createHarness();
            h.auth.handler = () => ({ status: 0, body: "" });
            const errors: MercureError[] = [];
            h.connector.channel("news").error((error: MercureError) => errors.push(error));
            await h.flush();
            expect(errors.map((error) => [error.code, error.status])).toEqual([["auth_rejected", undefined]]);
            expect(errors[0]!.message).toMatch(/request was denied \(a redirect, not followed; is a user logged in, or does middleware redirect\?\) after joining \[news\]/);
            expect(h.auth.requests[0]!.init.redirect).toBe("manual");
        });
    });

    it("names the CSRF token and the session on a 419, and the missing login on a 401", async () => {
        for (const [status, message] of [
            [419, /HTTP 419, the server said "nope": the CSRF token did not match the session, even after reading it again: reload the page, or pass `csrfToken` as a function/],
            [401, /HTTP 401, the server said "nope": no user is logged in\)/],
        ] as const) {
            const h = createHarness();
            h.auth.handler = () => ({ status, body: { message: "nope" }, headers: { "content-type": "application/json" } });
            const errors: MercureError[] = [];
            h.connector.privateChannel("orders.1").error((error: MercureError) => errors.push(error));
            await settleLoads(); // A 419 is retried once, with the credentials chunk reading the token again.
            expect(errors.map((error) => [error.code, error.status])).toEqual([["auth_rejected", status]]);
            expect(errors[0]!.message).toMatch(message);
        }
    });

    it("resolves a relative authEndpoint against the hub outside a browser", async () => {
        vi.stubGlobal("location", undefined);
        try {
            const h = createHarness({ host: "http://127.0.0.1:9000/.well-known/mercure" });
            h.connector.channel("news");
            await h.flush();
            expect(h.auth.requests[0]!.url).toBe("http://127.0.0.1:9000/broadcasting/auth");
        } finally {
            vi.unstubAllGlobals();
        }
    });
});

describe("a 4xx answer (older all-or-nothing servers, 401, 419)", () => {
    it("evicts only the newly joined channels and re-authorizes the survivors", async () => {
        const h = createHarness();
        h.track(h.connector.channel("news"));
        await h.flush();
        h.stream().emitOpen();
        h.auth.handler = (names) => (names.includes("private-secret") ? { status: 403 } : grant(names));
        h.track(h.connector.privateChannel("secret"));
        h.track(h.connector.privateChannel("other"));
        await h.flush();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([
            ["news"],
            ["news", "private-secret", "private-other"],
            ["news"],
        ]);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([
            ["private-secret", "auth_rejected"],
            ["private-other", "auth_rejected"],
        ]);
        expect(h.errors[0]!.error.message).toContain("HTTP 403");
        expect(h.errors[0]!.error.message).toContain("[private-secret, private-other]");
        expect(Object.keys(h.connector.channels)).toEqual(["news"]);
        expect(h.stream().matches()).toEqual([topic("news")]);
    });

    it("winds down to disconnected when the very first batch is rejected", async () => {
        const h = createHarness();
        h.auth.handler = () => ({ status: 403 });
        h.track(h.connector.privateChannel("a"));
        await h.flush();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_rejected"]);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("reports on every channel and backs off when the existing set is refused", async () => {
        const h = createHarness();
        h.track(h.connector.privateChannel("a"));
        h.track(h.connector.channel("news"));
        await h.flush();
        h.stream().emitOpen();
        h.auth.handler = () => ({ status: 401 });
        await vi.advanceTimersByTimeAsync(renewalDelay(300, DEFAULT_HUB_TIMEOUTS)); // the cookie renewal
        expect(h.auth.requests).toHaveLength(2);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code, entry.error.status])).toEqual([
            ["private-a", "auth_rejected", 401],
            ["news", "auth_rejected", 401],
        ]);
        expect(Object.keys(h.connector.channels)).toEqual(["private-a", "news"]);
        await vi.advanceTimersByTimeAsync(700);
        expect(h.auth.requests).toHaveLength(2);
        h.auth.handler = (names) => grant(names);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(h.auth.requests).toHaveLength(3);
    });
});

describe("a channel whose auth fails on its own (issue 30)", () => {
    /** A server that answers 500 to every batch holding `private-reports` while `broken`. */
    function brokenFor(h: ReturnType<typeof createHarness>, state: { broken: boolean }): void {
        h.auth.handler = (names) => (state.broken && names.includes("private-reports") ? { status: 500 } : grant(names));
    }

    it("is left out after the batch failed twice with 5xx: the others join, the public one included, and it reports auth_failed with the status", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5); // no jitter
        const h = createHarness();
        brokenFor(h, { broken: true });
        for (const channel of [h.connector.channel("news"), h.connector.privateChannel("orders.2"), h.connector.privateChannel("reports")]) h.track(channel);
        await h.flush();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed", "auth_failed", "auth_failed"]);
        expect(h.EventSource.instances).toHaveLength(0);
        h.errors.length = 0;

        // The retry fails too: the batch is halved until the failing channel stands alone, which is asked for alone once
        // more now that a part passed (a server's bad moment isolates nothing), then the others are authorized.
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([
            ["news", "private-orders.2", "private-reports"],
            ["news", "private-orders.2", "private-reports"],
            ["news", "private-orders.2"],
            ["private-reports"],
            ["private-reports"],
            ["news", "private-orders.2"],
        ]);
        expect(h.stream().matches()).toEqual(["news", "private-orders.2"].map(topic));
        expect(h.errors.map((entry) => [entry.channel, entry.error.code, entry.error.status])).toEqual([["private-reports", "auth_failed", 500]]);
        expect(h.errors[0]!.error.message).toMatch(/fails \(HTTP 500\) whenever it holds channel "private-reports"; the other channels joined without it, and it is retried alone with backoff/);
        h.stream().emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("is retried alone with backoff, and rejoins the stream once its auth passes", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        const state = { broken: true };
        brokenFor(h, state);
        for (const channel of [h.connector.channel("news"), h.connector.privateChannel("reports")]) h.track(channel);
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        expect(h.stream().matches()).toEqual([topic("news")]);
        const before = h.auth.requests.length;

        // First retry after 5 s, alone: still failing. The next one, 10 s later, passes: the batch takes it back.
        await vi.advanceTimersByTimeAsync(5_000);
        expect(h.auth.requests.slice(before).map((request) => request.channelNames)).toEqual([["private-reports"]]);
        state.broken = false;
        await vi.advanceTimersByTimeAsync(9_999);
        expect(h.auth.requests).toHaveLength(before + 1);
        await vi.advanceTimersByTimeAsync(1);
        await h.flush();
        expect(h.auth.requests.slice(before).map((request) => request.channelNames)).toEqual([["private-reports"], ["private-reports"], ["news", "private-reports"]]);
        expect(h.EventSource.live().at(-1)!.matches()).toEqual(["news", "private-reports"].map(topic));
    });

    it("goes on being retried alone when every other channel of its batch was denied (issue 49, simulation)", async () => {
        // The simulation's finding: the others' denial left nothing granted, the connector wound down, which stopped the
        // lone retry, and the channel stayed joined, unconnected and `disconnected`, without a retry, for good.
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        const state = { broken: true };
        h.auth.handler = (names) => (state.broken && names.includes("private-reports") ? { status: 500 } : grant(names, {}, ["private-secret"]));
        for (const channel of [h.connector.privateChannel("reports"), h.connector.privateChannel("secret")]) h.track(channel);
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        expect(h.errors.filter((entry) => entry.channel === "private-secret").map((entry) => entry.error.code)).toContain("auth_denied");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        state.broken = false;
        await vi.advanceTimersByTimeAsync(30_000);
        await h.flush();
        expect(h.auth.requests.at(-1)!.channelNames).toEqual(["private-reports"]);
        expect(h.stream().matches()).toEqual([topic("private-reports")]);
        h.stream().emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("closes the stream of the others when they are left and only it remains, retried alone (issue 49, simulation seed 3292)", async () => {
        // The simulation's finding: the stream kept carrying the presence channel the page had left, whose subscription
        // the hub kept: the user stayed a member for everyone else.
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        brokenFor(h, { broken: true });
        for (const channel of [h.connector.privateChannel("reports"), h.connector.presenceChannel("room")]) h.track(channel);
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        const stream = h.stream();
        expect(stream.matches()).toEqual([topic("presence-room")]);
        stream.emitOpen();
        h.connector.leaveChannel("presence-room");
        await h.flush();
        expect(stream.closed).toBe(true);
        expect(h.EventSource.live()).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        await vi.advanceTimersByTimeAsync(5_000);
        expect(h.auth.requests.at(-1)!.channelNames).toEqual(["private-reports"]);
    });

    /** A harness whose `private-reports` was isolated (`state.broken`: the server 500s on every batch holding it). */
    async function isolatedReports(state: { broken: boolean }, others = ["news"]) {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        brokenFor(h, state);
        for (const name of others) h.track(h.connector.channel(name));
        h.track(h.connector.privateChannel("reports"));
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        expect(h.stream().matches()).toEqual(others.map(topic));
        h.stream().emitOpen();
        h.errors.length = 0;
        return h;
    }

    /** Every auth request's channel names, for the checks that none is empty. */
    const sent = (h: ReturnType<typeof createHarness>) => h.auth.requests.map((request) => request.channelNames);

    /** Let `ms` pass in steps of a second, opening each stream the connector opens (the cookie renewal's too). */
    async function pass(h: ReturnType<typeof createHarness>, ms: number): Promise<void> {
        for (let elapsed = 0; elapsed < ms; elapsed += 1_000) {
            await vi.advanceTimersByTimeAsync(1_000);
            for (const source of h.EventSource.live()) if (source.readyState === 0) source.emitOpen();
        }
    }

    it("is no longer retried once it was left: no request with an empty channel_names, nor for it (issue 49)", async () => {
        const h = await isolatedReports({ broken: true });
        const before = h.auth.requests.length;
        h.connector.leave("reports");
        await pass(h, 600_000);
        expect(sent(h).slice(before).filter((names) => names.length === 0 || names.includes("private-reports"))).toEqual([]);
        expect(sent(h).every((names) => names.length > 0)).toBe(true);
        expect(h.errors).toEqual([]);
    });

    it("drops the answer of its lone retry when it was left meanwhile, and is not retried again (issue 49)", async () => {
        const h = await isolatedReports({ broken: true });
        const before = h.auth.requests.length;
        h.auth.hold();
        await vi.advanceTimersByTimeAsync(5_000); // its lone retry leaves
        expect(sent(h).slice(before)).toEqual([["private-reports"]]);
        h.connector.leave("reports");
        h.auth.release();
        await pass(h, 600_000);
        expect(sent(h).slice(before + 1).filter((names) => names.length === 0 || names.includes("private-reports"))).toEqual([]);
        expect(h.errors).toEqual([]);
    });

    it("is left with its error once when its lone retry gets a 4xx, never retried silently for ever (issue 49)", async () => {
        const h = await isolatedReports({ broken: true });
        const before = h.auth.requests.length;
        h.auth.handler = (names) => (names.includes("private-reports") ? { status: 403 } : grant(names));
        await vi.advanceTimersByTimeAsync(5_000);
        await settleLoads();
        expect(sent(h).slice(before)).toEqual([["private-reports"]]);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code, entry.error.status])).toEqual([["private-reports", "auth_rejected", 403]]);
        expect(h.errors[0]!.error.message).toMatch(/denied \(HTTP 403\) after joining \[private-reports\]; channel "private-reports" was left/);
        expect(Object.keys(h.connector.channels)).toEqual(["news"]);
        await pass(h, 600_000);
        expect(sent(h).slice(before + 1).filter((names) => names.includes("private-reports") || names.length === 0)).toEqual([]);
        expect(h.errors).toHaveLength(1);
        expect(h.stream().matches()).toEqual([topic("news")]);
    });

    it("is kept, and told, when its lone retry gets a 419 (the session's, not the channel's), then retried with backoff", async () => {
        const h = await isolatedReports({ broken: true });
        const before = h.auth.requests.length;
        h.auth.handler = (names) => (names.includes("private-reports") ? { status: 419 } : grant(names));
        await pass(h, 5_000);
        await settleLoads();
        expect(sent(h).slice(before)).toEqual([["private-reports"], ["private-reports"]]); // the 419 is retried once at once
        expect(h.errors.map((entry) => [entry.channel, entry.error.code, entry.error.status])).toEqual([["private-reports", "auth_rejected", 419]]);
        expect(Object.keys(h.connector.channels)).toEqual(["news", "private-reports"]);
        h.auth.handler = (names) => grant(names);
        await pass(h, 10_000);
        await settleLoads();
        expect(h.EventSource.live().at(-1)!.matches()).toEqual(["news", "private-reports"].map(topic));
    });

    it("is none when every part passes alone (the server's bad moment): the batch is asked for again at once, once, so that the cookie holds its grants (seed 14097)", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        let whole = 0;
        // The whole batch fails twice, then passes; its parts always pass.
        h.auth.handler = (names) => (names.length === 3 && ++whole <= 2 ? { status: 500 } : grant(names));
        for (const channel of [h.connector.channel("news"), h.connector.privateChannel("orders.2"), h.connector.privateChannel("reports")]) h.track(channel);
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000); // the first failure's backoff
        await settleLoads();
        expect(sent(h)).toEqual([
            ["news", "private-orders.2", "private-reports"],
            ["news", "private-orders.2", "private-reports"],
            ["news", "private-orders.2"],
            ["private-reports"],
            ["news", "private-orders.2", "private-reports"],
        ]);
        expect(h.stream().matches()).toEqual(["news", "private-orders.2", "private-reports"].map(topic));
        // Reported once, for the first failure; the second was the parts' to explain, and they passed.
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed", "auth_failed", "auth_failed"]);
    });

    it("is left with auth_denied when its lone retry's answer denies it, and the others are authorized again: that answer set the hub cookie (seed 12294)", async () => {
        const h = await isolatedReports({ broken: true }, ["news", "private-orders.1"]);
        h.auth.handler = (names) => grant(names, {}, ["private-reports"]);
        const before = sent(h).length;
        await vi.advanceTimersByTimeAsync(5_000);
        await settleLoads();
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([["private-reports", "auth_denied"]]);
        expect(Object.keys(h.connector.channels)).toEqual(["news", "private-orders.1"]);
        // The denial's cookie grants nothing: the batch of the others follows, so that their whispers and a native
        // reconnect of their stream present a cookie with their grants.
        expect(sent(h).slice(before)).toEqual([["private-reports"], ["news", "private-orders.1"]]);
    });

    it("is retried on its own beside another isolated channel: the one whose auth passes rejoins while the other still fails (issue 49)", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        const broken = new Set(["private-reports", "private-audit"]);
        h.auth.handler = (names) => (names.some((name) => broken.has(name)) ? { status: 500 } : grant(names));
        for (const name of ["news", "orders"]) h.track(h.connector.channel(name));
        h.track(h.connector.privateChannel("reports"));
        h.track(h.connector.privateChannel("audit"));
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000);
        await settleLoads();
        expect(h.stream().matches()).toEqual(["news", "orders"].map(topic));
        const before = h.auth.requests.length;
        broken.delete("private-audit");
        await vi.advanceTimersByTimeAsync(5_000);
        await settleLoads();
        expect(sent(h).slice(before)).toEqual([["private-reports"], ["private-audit"], ["news", "orders", "private-audit"]]);
        expect(h.EventSource.live().at(-1)!.matches()).toEqual(["news", "orders", "private-audit"].map(topic));
    });

    it("is not looked for after one 5xx, nor for a batch of one channel", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        h.auth.handler = () => ({ status: 500 });
        h.track(h.connector.privateChannel("reports"));
        await h.flush();
        await vi.advanceTimersByTimeAsync(1_000 + 2_000);
        await settleLoads();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["private-reports"], ["private-reports"], ["private-reports"]]);
    });
});

describe("the server's reason in auth errors (issue 51)", () => {
    it("quotes the message of Laravel's JSON error body in auth_failed and auth_rejected, as text", async () => {
        const h = createHarness();
        const reason = "The cookie name __Secure-mercure_access_token needs HTTPS.";
        h.auth.handler = () => ({ status: 500, body: { message: reason } });
        h.track(h.connector.privateChannel("a"));
        await h.flush();
        expect(h.errors.map((entry) => entry.error.message)).toEqual([
            `The broadcasting auth request to "/broadcasting/auth" failed (HTTP 500, the server said "${reason}"); retrying with backoff.`,
        ]);
        h.connector.disconnect();
        const denied = createHarness();
        denied.auth.handler = () => ({ status: 403, body: { message: "<b>Forbidden</b>" } });
        denied.track(denied.connector.privateChannel("b"));
        await denied.flush();
        expect(denied.errors[0]!.error.message).toContain('(HTTP 403, the server said "<b>Forbidden</b>")');
        denied.connector.disconnect();
    });
});

describe("a transient auth failure (5xx, network)", () => {
    it("reports auth_failed and retries with backoff until it succeeds", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5); // no jitter: 1 s, then 2 s
        const h = createHarness();
        let failures = 2;
        h.auth.handler = (names) => (failures-- > 0 ? { status: 503 } : grant(names));
        h.track(h.connector.privateChannel("a"));
        await h.flush();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed"]);
        expect(h.errors[0]!.error.message).toContain("HTTP 503");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        await vi.advanceTimersByTimeAsync(999);
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.auth.requests).toHaveLength(2);
        await vi.advanceTimersByTimeAsync(1_999);
        expect(h.auth.requests).toHaveLength(2);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.auth.requests).toHaveLength(3);
        expect(h.EventSource.instances).toHaveLength(1);
        h.stream().emitOpen();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("treats a network error as transient", async () => {
        const h = createHarness();
        h.auth.handler = () => {
            throw new TypeError("Failed to fetch");
        };
        h.track(h.connector.channel("news"));
        await h.flush();
        expect(h.errors[0]!.error.code).toBe("auth_failed");
        expect(h.errors[0]!.error.message).toContain("Failed to fetch");
        expect(Object.keys(h.connector.channels)).toEqual(["news"]);
    });
});

describe("an auth request whose fetch ignores its signal", () => {
    it("times out into auth_failed and a retry, and later joins do not wait behind it", async () => {
        const auth = new FakeAuthServer();
        let calls = 0;
        const hanging: FetchLike = (url, init) => (++calls === 1 ? new Promise(() => undefined) : auth.fetch(url, init));
        const h = createHarness({ fetch: hanging, authTimeout: 1_000 });
        const errors: string[] = [];
        h.connector.channel("a").error((error: { code: string; message: string }) => errors.push(`${error.code}: ${error.message}`));
        await h.flush();
        h.connector.channel("b");
        await h.flush();
        expect(calls).toBe(1);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatch(/^auth_failed: .*timed out after 1000 ms/);
        expect(auth.lastNames()).toEqual(["a", "b"]);
        expect(h.EventSource.live().map((stream) => stream.matches())).toEqual([[topic("a"), topic("b")]]);
    });
});

describe("the 100-channel limit", () => {
    it("evicts channels past the 100th with an explicit error before sending", async () => {
        const h = createHarness();
        for (let i = 0; i < 102; i++) h.track(h.connector.channel(`c${i}`));
        await h.flush();
        expect(h.auth.lastNames()).toHaveLength(100);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([
            ["c100", "channel_limit"],
            ["c101", "channel_limit"],
        ]);
        expect(h.errors[0]!.error.message).toContain("At most 100 channels");
        expect(h.stream().matches()).toHaveLength(100);
    });
});

describe("a leave whose batch fails (issue 49's simulation, seed 13 with navigations drawn)", () => {
    it("narrows the stream on the cookie it has: the channel left is no longer subscribed (no presence member left behind)", async () => {
        vi.spyOn(Math, "random").mockReturnValue(0.5);
        const h = createHarness();
        const state = { broken: false };
        h.auth.handler = (names) => (state.broken && names.includes("private-reports") ? { status: 500 } : grant(names));
        for (const channel of [h.connector.privateChannel("reports"), h.connector.privateChannel("room")]) h.track(channel);
        await h.flush();
        const first = h.stream();
        first.emitOpen();
        expect(first.matches()).toEqual([topic("private-reports"), topic("private-room")]);
        // The only channel left fails alone from now on: the leave's batch fails, and no part of it passes.
        state.broken = true;
        h.connector.leaveChannel("private-room");
        await h.flush();
        expect(h.auth.requests.at(-1)!.channelNames).toEqual(["private-reports"]);
        expect(h.errors.map((entry) => entry.error.code)).toContain("auth_failed");
        const narrowed = h.EventSource.live().find((stream) => stream !== first)!;
        expect(narrowed.matches()).toEqual([topic("private-reports")]);
        narrowed.emitOpen();
        await vi.advanceTimersByTimeAsync(5_000); // The old stream drains, then closes.
        expect(h.EventSource.live()).toContain(narrowed);
        expect(h.EventSource.live()).not.toContain(first);
    });
});
