import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import { streamError } from "../../../src/error-messages";
import type { MercureError } from "../../../src/errors";
import type { EventSourceInitLike, FetchLike } from "../../../src/transport/platform";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { HUB, useScopedFakeTimers } from "../../fakes/connector-harness";
import { STREAM_ERROR_HOLD_MS } from "../../../src/connector/stream-events";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

/** A fake EventSource class that also records the init dict each stream was opened with. */
function recordingEventSource() {
    const Fake = createFakeEventSource();
    const inits: Array<EventSourceInitLike | undefined> = [];
    class Recording extends Fake {
        constructor(url: string, init?: EventSourceInitLike) {
            super(url, init);
            inits.push(init);
        }
    }
    return { EventSource: Recording, Fake, inits };
}

describe("the fetch option and the EventSource", () => {
    it("hands the fetch option to the EventSource, which calls it with a URL and gets the option's answer", async () => {
        const auth = new FakeAuthServer();
        const streamRequests: Array<{ url: string; init: RequestInit }> = [];
        const answer = new Response("");
        const fetch: FetchLike = async (url, init) => {
            if (url.startsWith(HUB)) {
                streamRequests.push({ url, init });
                return answer;
            }
            return auth.fetch(url, init);
        };
        const { EventSource, inits } = recordingEventSource();
        const connector = new MercureConnector({ host: HUB, eventSource: EventSource, fetch });
        connector.privateChannel("orders.1");
        await vi.advanceTimersByTimeAsync(0);

        expect(inits).toHaveLength(1);
        expect(inits[0]?.withCredentials).toBe(true);
        const streamFetch = inits[0]?.fetch;
        expect(typeof streamFetch).toBe("function");
        const signal = new AbortController().signal;
        const url = new URL(HUB + "?match=x");
        await expect(streamFetch!(url, { headers: { Accept: "text/event-stream" }, signal })).resolves.toBe(answer);
        // The connector's fetch takes a string: the EventSource's URL is handed over as its href.
        expect(streamRequests).toEqual([{ url: url.href, init: { headers: { Accept: "text/event-stream" }, signal } }]);
        connector.disconnect();
    });

    it("passes no fetch when the option is not given, so the EventSource keeps its own", async () => {
        const auth = new FakeAuthServer();
        const { EventSource, inits } = recordingEventSource();
        const previous = globalThis.fetch;
        globalThis.fetch = ((url: string, init: RequestInit) => auth.fetch(url, init)) as typeof globalThis.fetch;
        try {
            const connector = new MercureConnector({ host: HUB, eventSource: EventSource });
            connector.privateChannel("orders.1");
            await vi.advanceTimersByTimeAsync(0);
            expect(auth.requests).toHaveLength(1);
            expect(inits).toEqual([{ withCredentials: true }]);
            connector.disconnect();
        } finally {
            globalThis.fetch = previous;
        }
    });

    it("lets an EventSource subclass that sets its own fetch keep it", async () => {
        const auth = new FakeAuthServer();
        const { EventSource, inits } = recordingEventSource();
        const own = async (): Promise<Response> => new Response("");
        class OwnFetch extends EventSource {
            constructor(url: string, init?: EventSourceInitLike) {
                super(url, { ...init, fetch: own });
            }
        }
        const connector = new MercureConnector({ host: HUB, eventSource: OwnFetch, fetch: auth.fetch });
        connector.privateChannel("orders.1");
        await vi.advanceTimersByTimeAsync(0);
        expect(inits[0]?.fetch).toBe(own);
        connector.disconnect();
    });
});

describe("a refused stream's error", () => {
    /** An EventSource error event as the eventsource package fires it: `code` is the HTTP status. */
    function httpError(code: number | undefined): Event {
        return Object.assign(new Event("error"), { code, message: `Non-200 status code (${code})` });
    }

    it("carries the HTTP status the EventSource reports (the diagnosis that follows names the cause)", () => {
        const error = streamError("private-orders.1", "closed", httpError(401));
        expect(error.code).toBe("stream_error");
        expect(error.status).toBe(401);
        expect(error.channel).toBe("private-orders.1");
        expect(error.message).toBe('The hub refused the event stream with HTTP 401; re-authorizing with backoff. (channel "private-orders.1")');
    });

    it("says that a 400, which is never retried, waits for connect()", () => {
        expect(streamError("news", "closed", httpError(400)).message).toBe('The hub refused the event stream with HTTP 400; not retrying: fix the cause, then call connect(). (channel "news")');
    });

    it("names other statuses, and has none when the EventSource reports none (browsers)", () => {
        const forbidden = streamError("news", "closed", httpError(403));
        expect([forbidden.status, forbidden.message.includes("HTTP 403"), forbidden.message.includes("cookie")]).toEqual([403, true, false]);
        const hidden = streamError("news", "closed", new Event("error"));
        expect(hidden.status).toBeUndefined();
        expect(hidden.message).toContain("refused or closed the event stream");
        expect(streamError("news", "closed", httpError(undefined)).status).toBeUndefined();
    });

    it("reaches the channel's error() callbacks with the status, through the connector", async () => {
        const auth = new FakeAuthServer();
        // The probe never answers: the stream_error it held is reported at the hold's deadline.
        auth.probeHandler = () => new Promise(() => undefined);
        const { EventSource, Fake } = recordingEventSource();
        const connector = new MercureConnector({ host: HUB, eventSource: EventSource, fetch: auth.fetch });
        const errors: MercureError[] = [];
        connector.privateChannel("orders.1").error((error) => errors.push(error));
        await vi.advanceTimersByTimeAsync(0);
        const source = Fake.last() as unknown as { readyState: number; onerror: ((event: Event) => unknown) | null };
        source.readyState = 2; // the eventsource package closes the stream on any non-200 answer
        source.onerror?.(httpError(401));
        // Held while the probe names the cause (issue 51), at most STREAM_ERROR_HOLD_MS.
        await vi.advanceTimersByTimeAsync(STREAM_ERROR_HOLD_MS - 1);
        expect(errors).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(errors.map((error) => [error.code, error.status])).toEqual([["stream_error", 401]]);
        connector.disconnect();
    });
});
