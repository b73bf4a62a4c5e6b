import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadDiagnostics } from "../../../src/discovery/load";
import type { MercureError } from "../../../src/errors";
import { grant } from "../../fakes/fake-auth-server";
import { STREAM_ERROR_HOLD_MS } from "../../../src/connector/stream-events";
import { createHarness, HUB, useScopedFakeTimers } from "../../fakes/connector-harness";
import { fakeFetch, metadataDocument, type FakeAnswer } from "../discovery/fake-hub";

// The unit project's page is https://app.test/dashboard, the harness hub https://app.test/.well-known/mercure.
const METADATA = "https://app.test/.well-known/oauth-protected-resource/.well-known/mercure";

// The connector loads the diagnostics chunk with import(); loaded once here, it resolves in microtasks.
beforeAll(async () => {
    // The stream's probe is a chunk of its own too (src/connector/stream-diagnosis.ts), which loads the diagnostics.
    await Promise.all([loadDiagnostics(), import("../../../src/connector/stream-diagnosis")]);
});
beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** Let the probe, the metadata request and the callbacks after them run (microtasks and zero-delay timers). */
async function settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await vi.advanceTimersByTimeAsync(0);
}

/** A harness whose hub answers every probe (GET) with `answer`, and a joined, tracked private channel. */
async function failingHub(answer: (url: string) => FakeAnswer, options: Record<string, unknown> = {}) {
    const h = createHarness(options);
    const hub = fakeFetch((call) => answer(call.url));
    h.auth.probeHandler = (url, init) => hub.fetch(url, init);
    h.track(h.connector.privateChannel("orders.1"));
    await settle();
    return { h, hub, codes: () => h.errors.map((entry) => entry.error.code) };
}

/** A harness whose hub answers a probe only when the test calls `answer`, with a joined, tracked private channel. */
function slowProbe() {
    let answered: (value: FakeAnswer) => void = () => undefined;
    const h = createHarness();
    const hub = fakeFetch(() => new Promise<FakeAnswer>((resolve) => (answered = resolve)));
    h.auth.probeHandler = (url, init) => hub.fetch(url, init);
    h.track(h.connector.privateChannel("orders.1"));
    return { h, hub, answer: (value: FakeAnswer) => answered(value) };
}

describe("a stream that fails for good is diagnosed", () => {
    it("reports the cause instead of the stream_error it held meanwhile (issue 51), probing and reporting once per failure streak", async () => {
        const { h, hub, codes } = await failingHub(() => ({ status: 503, body: "maintenance" }));
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["hub_refused"]);
        expect(h.errors[0]!.error.channel).toBe("private-orders.1");
        expect(h.errors[0]!.error.message).toContain('refused the request with HTTP 503 ("maintenance")');
        expect(hub.calls).toHaveLength(1);
        // A 503 may pass: retries go on, and the same streak is neither probed nor reported again.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(h.auth.requests).toHaveLength(2);
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["hub_refused"]);
        expect(hub.calls).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        // A stream that opens ends the streak. Its own reconnect refused is not probed (its cookie may just have
        // expired, issue 27); the retry, with a new cookie, refused too is.
        await vi.advanceTimersByTimeAsync(3_000);
        await settle();
        h.stream().emitOpen();
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        expect(codes()).toEqual(["hub_refused", "stream_error"]);
        await vi.advanceTimersByTimeAsync(5_000); // the third retry of the streak: 4 s ± 20 %
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(2);
        expect(codes()).toEqual(["hub_refused", "stream_error", "hub_refused"]);
    });

    it("does not probe a reconnect refused after the stream was open (a stale cookie), and re-authorizes with backoff", async () => {
        // The hub refuses the probe too (it would carry the same stale cookie): a probe would name a misconfiguration.
        const { h, hub, codes } = await failingHub(() => ({ status: 401, headers: { "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${METADATA}"` } }));
        h.stream().emitOpen();
        await settle();
        const auths = h.auth.requests.length;
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(0);
        expect(codes()).toEqual(["stream_error"]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(h.auth.requests.length).toBe(auths + 1);
    });

    it("reports only the stream_error when the hub accepts the same request now", async () => {
        const { h, hub, codes } = await failingHub(() => ({ status: 200, headers: { "Content-Type": "text/event-stream" } }));
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        expect(codes()).toEqual(["stream_error"]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });

    it("names an EventSource that does not send the cookie when it reports a 401 the same request through fetch does not get (outside a browser)", async () => {
        const { h, hub, codes } = await failingHub(() => ({ status: 200, headers: { "Content-Type": "text/event-stream" } }));
        h.stream().emitError(true, 401);
        await settle();
        expect(hub.calls).toHaveLength(1);
        expect(codes()).toEqual(["cookie_missing"]);
        expect(h.errors[0]!.error.status).toBe(401);
        expect(h.errors[0]!.error.message).toContain("but accepts the same request through the connector's `fetch`");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });

    it("does not probe for an interrupted stream that had opened: the EventSource reconnects by itself", async () => {
        const { h, hub } = await failingHub(() => ({ status: 503 }));
        h.stream().emitOpen();
        await settle();
        h.stream().emitError(false);
        await settle();
        expect(hub.calls).toHaveLength(0);
    });

    it("names a hub that went down once an open stream's native reconnect failed too, and goes on retrying (issue 30)", async () => {
        const { h, hub, codes } = await failingHub(() => {
            throw new TypeError("fetch failed");
        });
        h.stream().emitOpen();
        await settle();
        h.stream().emitError(false);
        await settle();
        expect(hub.calls).toHaveLength(0);
        h.stream().emitError(false);
        await settle();
        expect(hub.calls).toHaveLength(1);
        // The failed native reconnect is the same failure: its stream_error is not repeated (issue 49).
        expect(codes()).toEqual(["stream_error", "hub_unreachable"]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });

    it("names a hub that cannot be reached when the first stream is interrupted before it opened, and goes on retrying (issue 30)", async () => {
        const { h, hub, codes } = await failingHub(() => {
            throw new TypeError("fetch failed");
        });
        h.stream().emitError(false);
        await settle();
        expect(hub.calls).toHaveLength(1);
        expect(codes()).toEqual(["hub_unreachable"]);
        expect(h.errors[0]!.error.message).toContain(`The hub at ${HUB} could not be reached (fetch failed)`);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });

    it("names the audience the hub expects, and stops retrying with status failed", async () => {
        const { h, codes } = await failingHub((url) =>
            url.startsWith(HUB)
                ? { status: 401, headers: { "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="${METADATA}"` } }
                : { status: 200, body: metadataDocument("https://hub.internal/.well-known/mercure") },
        );
        const statuses: string[] = [];
        h.connector.onConnectionChange((status) => statuses.push(status));
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["invalid_token"]);
        expect(h.errors[0]!.error).toMatchObject({ channel: "private-orders.1", status: 401 });
        expect(h.errors[0]!.error.message).toContain('the hub expects the audience "https://hub.internal/.well-known/mercure" but is reached at "https://app.test/.well-known/mercure"');
        expect(h.connector.connectionStatus()).toBe("failed");
        expect(statuses).toEqual(["reconnecting", "failed"]);
        const requests = h.auth.requests.length;
        await vi.advanceTimersByTimeAsync(120_000);
        expect(h.auth.requests).toHaveLength(requests);
        expect(h.EventSource.live()).toHaveLength(0);
        // A newly joined channel starts over.
        h.connector.channel("news");
        await settle();
        expect(h.auth.requests).toHaveLength(requests + 1);
    });

    it("names the cookie the hub reads when none reached it", async () => {
        const { h, codes } = await failingHub((url) =>
            url.startsWith(HUB) ? { status: 401, headers: { "WWW-Authenticate": "Bearer" } } : { status: 200, body: metadataDocument(HUB, { mercure_cookie: "hub_cookie" }) },
        );
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["cookie_missing"]);
        expect(h.errors[0]!.error.message).toContain('"hub_cookie"');
        expect(h.connector.connectionStatus()).toBe("failed");
    });

    it("names CORS when the hub on another origin does not allow the page's", async () => {
        const hubUrl = "https://hub.test/.well-known/mercure";
        const { h, codes } = await failingHub(() => ({ status: 200, headers: { "Content-Type": "text/event-stream" } }), { host: hubUrl });
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["cors_refused"]);
        expect(h.errors[0]!.error.message).toContain("add https://app.test to the hub's cors_origins");
        expect(h.connector.connectionStatus()).toBe("failed");
    });

    it("names too many matchers", async () => {
        const h = createHarness();
        const hub = fakeFetch(() => ({ status: 400, body: "Bad Request" }));
        h.auth.probeHandler = (url, init) => hub.fetch(url, init);
        h.auth.handler = (names) => grant(names);
        // 60 presence channels: a match and a match_urlpattern each.
        for (let i = 0; i < 60; i++) h.track(h.connector.presenceChannel(`room.${i}`));
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(new URL(hub.calls[0]!.url).searchParams.getAll("match")).toHaveLength(120);
        const diagnosed = h.errors.filter((entry) => entry.error.code === "too_many_matchers");
        expect(diagnosed).toHaveLength(60);
        expect(diagnosed[0]!.error.message).toContain("carries 120 topic matchers");
        expect(h.connector.connectionStatus()).toBe("failed");
    });

    it("names a pre-1.0 hub once, and no reconnect loop follows", async () => {
        const { h, hub, codes } = await failingHub(() => ({ status: 400, body: 'Missing "topic" parameter.' }));
        h.stream().emitError(true);
        await settle();
        expect(codes()).toEqual(["hub_outdated"]);
        expect(h.errors[0]!.error.message).toContain("upgrade the hub to Mercure 1.0");
        expect(h.connector.connectionStatus()).toBe("failed");
        await vi.advanceTimersByTimeAsync(300_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        expect(hub.calls).toHaveLength(1);
    });

    it("reports nothing when disconnect() comes during the probe, not even the stream_error it held", async () => {
        const { h, hub, answer } = slowProbe();
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        h.connector.disconnect();
        answer({ status: 400, body: 'Missing "topic" parameter.' });
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual([]);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });

    it("reports only the stream_error it held when a stream opened during the probe: the failure was transient", async () => {
        const { h, hub, answer } = slowProbe();
        await settle();
        // Interrupted before it opened: probed, and the EventSource's own reconnect opens while the probe runs.
        h.stream().emitError(false);
        await settle();
        expect(hub.calls).toHaveLength(1);
        h.stream().emitOpen();
        answer({ status: 503 });
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["stream_error"]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });
});

describe("the stream_error held while the probe runs (issue 51)", () => {
    it("is reported when the probe has not answered within STREAM_ERROR_HOLD_MS, and the cause follows when it comes", async () => {
        const { h, hub, answer } = slowProbe();
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(STREAM_ERROR_HOLD_MS - 1);
        expect(h.errors.map((entry) => entry.error.code)).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["stream_error"]);
        answer({ status: 400, body: 'Missing "topic" parameter.' });
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["stream_error", "hub_outdated"]);
        expect(h.connector.connectionStatus()).toBe("failed");
    });

    it("is reported when the probe names no cause, once per channel for the whole streak", async () => {
        const { h, hub, answer } = slowProbe();
        h.track(h.connector.channel("news"));
        await settle();
        const first = h.stream();
        expect(first.url).toContain("news");
        // Interrupted before it opened (probed), then its own reconnect fails for good while the probe runs.
        first.emitError(false);
        await settle();
        first.emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        expect(h.errors).toEqual([]);
        answer({ status: 200, headers: { "Content-Type": "text/event-stream" } });
        await settle();
        expect(h.errors.map((entry) => [entry.error.code, entry.error.channel])).toEqual([
            ["stream_error", "private-orders.1"],
            ["stream_error", "news"],
        ]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        // The retry, refused too, is the same streak: no error; the status says it.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(h.auth.requests).toHaveLength(2);
        h.stream().emitError(true);
        await settle();
        expect(h.errors).toHaveLength(2);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
    });
});

describe("a retry due while the probe runs", () => {
    /** A harness whose probe answers only when the test calls `answer`, with its joined private channel's stream refused. */
    async function refusedWhileProbing() {
        const { h, hub, answer } = slowProbe();
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(hub.calls).toHaveLength(1);
        // The first backoff (1 s ± 20 %) ends; the probe (its chunk slow to download on a busy page) has not answered.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        return { h, hub, answer };
    }

    it("never runs when the probe names a cause that stops the connector: no auth request, no stream follows", async () => {
        const { h, hub, answer } = await refusedWhileProbing();
        answer({ status: 400, body: 'Missing "topic" parameter.' });
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["hub_outdated"]);
        expect(h.connector.connectionStatus()).toBe("failed");
        await vi.advanceTimersByTimeAsync(300_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        expect(hub.calls).toHaveLength(1);
    });

    it("runs when the probe names a cause worth retrying", async () => {
        const { h, answer } = await refusedWhileProbing();
        answer({ status: 503, body: "maintenance" });
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["hub_refused"]);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.EventSource.instances).toHaveLength(2);
        h.stream().emitOpen();
        await settle();
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("runs at the hold's deadline when the probe has not answered by then", async () => {
        const { h } = await refusedWhileProbing();
        await vi.advanceTimersByTimeAsync(STREAM_ERROR_HOLD_MS - 1_500 - 1);
        await settle();
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1);
        await settle();
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["stream_error"]);
        expect(h.auth.requests).toHaveLength(2);
        expect(h.EventSource.instances).toHaveLength(2);
    });

    it("is dropped by disconnect() during the probe", async () => {
        const { h, answer } = await refusedWhileProbing();
        h.connector.disconnect();
        answer({ status: 503 });
        await settle();
        await vi.advanceTimersByTimeAsync(60_000);
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.instances).toHaveLength(1);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });
});

describe("a stream refused with 401 while many guarded channels are joined", () => {
    /** The errors of a channel among `count` joined private channels whose hub refuses the stream and every probe with 401. */
    async function refused(count: number): Promise<string[]> {
        const h = createHarness();
        const hub = fakeFetch(() => ({ status: 401 }));
        h.auth.probeHandler = (url, init) => hub.fetch(url, init);
        const messages: string[] = [];
        h.connector.privateChannel("p0").error((error) => messages.push(`${error.code}: ${error.message}`));
        for (let i = 1; i < count; i++) h.connector.privateChannel(`p${i}`);
        await settle();
        h.stream().emitError(true);
        await settle();
        return messages;
    }

    it("adds the hub's 100-grant token cap to the named cause past 50 private channels", async () => {
        const messages = await refused(51);
        expect(messages).toHaveLength(1);
        expect(messages[0]).toMatch(/^cookie_missing: /);
        expect(messages[0]).toContain("With 102 topic grants in the cookie");
        expect(await refused(50)).not.toContain("topic grants");
    });

    it("adds that the browser may have dropped a cookie past about 19 private channels", async () => {
        const messages = await refused(20);
        expect(messages[0]).toContain("outgrows the 4,096 bytes a browser keeps");
        expect(messages[0]).not.toContain("topic grants");
        expect((await refused(19)).join(" ")).not.toContain("4,096 bytes");
    });

    it("adds nothing to a cause that is not a 401", async () => {
        const h = createHarness();
        const hub = fakeFetch(() => ({ status: 503 }));
        h.auth.probeHandler = (url, init) => hub.fetch(url, init);
        const messages: string[] = [];
        h.connector.privateChannel("p0").error((error) => messages.push(`${error.code}: ${error.message}`));
        for (let i = 1; i < 60; i++) h.connector.privateChannel(`p${i}`);
        await settle();
        h.stream().emitError(true);
        await settle();
        expect(messages[0]).toMatch(/^hub_refused: /);
        expect(messages.join(" ")).not.toContain("topic grants");
        expect(messages.join(" ")).not.toContain("4,096 bytes");
    });
});

describe("a diagnosis error", () => {
    it("is a MercureError with the channel and status", async () => {
        const { h } = await failingHub(() => ({ status: 403 }));
        h.stream().emitError(true);
        await settle();
        const error: MercureError = h.errors[0]!.error;
        expect(error).toMatchObject({ name: "MercureError", code: "insufficient_scope", channel: "private-orders.1", status: 403 });
    });
});
