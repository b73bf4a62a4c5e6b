import { describe, expect, it, vi } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import * as diagnostics from "../../../src/discovery/diagnose";
import type { DiagnoseInput } from "../../../src/discovery/diagnose";
import { HubStream } from "../../../src/transport/hub-stream";
import * as whisperModule from "../../../src/whisper";
import { WhisperPublisher, WhisperStreams, type WhisperDiagnostics, type WhisperStreamFactory } from "../../../src/whisper";
import { Whispers, type WhispersHost } from "../../../src/whisper/whispers";
import { fakeFetch, type FakeAnswer, type FakeCall } from "../discovery/fake-hub";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { deferred, drain, OWN, PREFIX, reports } from "./helpers";

// Whisper failures diagnosed (issue 10): the whisper streams and the publisher probe the hub once per
// failure streak through the real diagnose() (its chunk loader faked so that every call can be awaited),
// and report the named cause on the failing channel only, unless it was left or the connector
// disconnected in between. The unit project's page is https://app.test/dashboard.

const HUB = new URL("https://app.test/.well-known/mercure");
const CHAT = "private-chat.1";
const OTHER = "private-other.2";
const EXPIRES_AT = Date.UTC(2030, 0, 1);

/** A challenge without error: no token reached the hub (a configuration to fix: retrying cannot help). */
const NO_COOKIE: FakeAnswer = { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="mercure"' } };
/** A hub that is down for now (retrying can help). */
const DOWN: FakeAnswer = { status: 503, body: "overloaded" };
/** The hub accepts the probe now. */
const ACCEPTED: FakeAnswer = { status: 200, headers: { "Content-Type": "text/event-stream" } };

/**
 * Diagnostics for whispers: the hub answers probes (GET) with `probes` in turn (or a promise the test
 * settles), and the channels in `joined` are the connector's joined ones; every diagnose() call is
 * recorded with its input and its promise, so a test can wait for it to finish.
 */
function diagnosticsFor(route: (call: FakeCall) => FakeAnswer | Error | Promise<FakeAnswer | Error>) {
    const hub = fakeFetch(route);
    const joined = new Set([CHAT, OTHER]);
    const runs: Array<{ input: DiagnoseInput; result: Promise<unknown> }> = [];
    const load = vi.fn(async () => ({
        diagnose: (input: DiagnoseInput) => {
            const result = diagnostics.diagnose(input);
            runs.push({ input, result });
            return result;
        },
        diagnosisError: diagnostics.diagnosisError,
    }));
    const host: WhisperDiagnostics = {
        probe: (channel) => (joined.has(channel) ? { hub: HUB, fetch: hub.fetch } : null),
        tokenExpiresAt: () => EXPIRES_AT,
        load,
    };
    /** Wait until every diagnosis started so far has finished and its report (if any) was made. */
    const settled = async () => {
        await drain();
        await Promise.all(runs.map((run) => run.result));
        await drain();
    };
    const probes = () => hub.calls.filter((call) => (call.init.method ?? "GET") === "GET");
    return { hub, joined, runs, load, host, settled, probes };
}

/** Whisper streams on fake EventSources, diagnosed by `route`'s hub. */
function streamsSetup(route: (call: FakeCall) => FakeAnswer | Error | Promise<FakeAnswer | Error>) {
    const d = diagnosticsFor(route);
    const EventSource = createFakeEventSource();
    const errors = reports();
    const failed = vi.fn();
    const open: WhisperStreamFactory = (url, channel, topic, handlers) => new HubStream(EventSource, url, [channel], [topic], handlers);
    const streams = new WhisperStreams(
        { open, deliver: () => undefined, report: errors.report, failed },
        { socketId: () => OWN, crypto: new EncryptedChannels({ socketId: () => OWN }), diagnostics: d.host },
    );
    const sync = () => streams.sync({ hub: HUB, topicPrefix: PREFIX, clientEvents: true, granted: [CHAT, OTHER] });
    const source = (channel: string) => {
        const found = EventSource.live().filter((candidate) => candidate.matches()[0] === PREFIX + "whisper/" + encodeURIComponent(channel));
        expect(found, `one live whisper stream for ${channel}`).toHaveLength(1);
        return found[0]!;
    };
    const live = (channel: string) => EventSource.live().filter((candidate) => candidate.matches()[0] === PREFIX + "whisper/" + encodeURIComponent(channel)).length;
    streams.listening(CHAT, true);
    streams.listening(OTHER, true);
    sync();
    return { ...d, streams, EventSource, errors, failed, sync, source, live };
}

describe("a whisper stream that fails for good is diagnosed", () => {
    it("told and probed once per failure streak, on its channel only: a streak ends when that stream opens", async () => {
        const answers = [DOWN, DOWN];
        const s = streamsSetup(() => answers.shift() ?? ACCEPTED);
        const failedUrl = s.source(CHAT).url;
        s.source(OTHER).emitOpen();
        s.source(CHAT).emitError(true);
        await s.settled();
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`, `${CHAT}:hub_refused`]);
        expect(s.errors.list[1]!.error.message).toContain("HTTP 503");
        expect(s.runs.map(({ input }) => [input.failure, input.subscribeUrl, input.tokenExpiresAt, String(input.hub)])).toEqual([
            [{ kind: "whisper_stream" }, failedUrl, EXPIRES_AT, HUB.href],
        ]);
        // The probe reproduces the stream's one matcher, never its topic.
        expect(s.probes()).toHaveLength(1);
        expect(s.probes()[0]!.url).not.toContain("chat");

        // Retrying can help (503): the re-auth reopens it; failing again before it opened is the same streak, neither
        // told nor probed again (the shared re-auth is asked for all the same).
        s.sync();
        s.source(CHAT).emitError(true);
        await s.settled();
        expect(s.probes()).toHaveLength(1);
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`, `${CHAT}:hub_refused`]);
        expect(s.failed).toHaveBeenCalledTimes(2);

        // It opens: the streak is over, and the next terminal failure is told and probed again.
        s.sync();
        s.source(CHAT).emitOpen();
        s.source(CHAT).emitError(true);
        await s.settled();
        expect(s.probes()).toHaveLength(2);
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`, `${CHAT}:hub_refused`, `${CHAT}:stream_error`, `${CHAT}:hub_refused`]);
        expect(s.errors.list.every(({ channel }) => channel === CHAT)).toBe(true);
    });

    it("a cause retrying cannot fix keeps that whisper stream closed, and only that one, until it listens again", async () => {
        const s = streamsSetup(() => NO_COOKIE);
        s.source(OTHER).emitOpen();
        s.source(CHAT).emitError(true);
        await s.settled();
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`, `${CHAT}:cookie_missing`]);
        expect(s.errors.list[1]!.error.message).toContain("No access token reached the hub");
        expect(s.failed).toHaveBeenCalledTimes(1); // the shared re-auth was asked for once, as without a diagnosis
        s.sync(); // that re-auth's answer
        expect(s.live(CHAT)).toBe(0);
        expect(s.live(OTHER)).toBe(1);
        // Listening again (after the fix) tries again.
        s.streams.listening(CHAT, false);
        s.streams.listening(CHAT, true);
        expect(s.live(CHAT)).toBe(1);
    });

    it("a retry already under way when the diagnosis says stop is closed", async () => {
        const probe = deferred<FakeAnswer>();
        const s = streamsSetup(() => probe.promise);
        s.source(CHAT).emitError(true);
        await drain();
        s.sync(); // the re-auth came back before the probe did
        expect(s.live(CHAT)).toBe(1);
        probe.resolve(NO_COOKIE);
        await s.settled();
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`, `${CHAT}:cookie_missing`]);
        expect(s.live(CHAT)).toBe(0);
    });

    it("reports nothing when the stream opened, the channel stopped listening or was left, or the connector disconnected during the probe", async () => {
        for (const meanwhile of ["opened", "stopped listening", "left", "disconnected"] as const) {
            const probe = deferred<FakeAnswer>();
            const s = streamsSetup(() => probe.promise);
            s.source(CHAT).emitError(true);
            await drain();
            expect(s.probes(), meanwhile).toHaveLength(1);
            if (meanwhile === "opened") {
                s.sync();
                s.source(CHAT).emitOpen();
            }
            if (meanwhile === "stopped listening") s.streams.listening(CHAT, false);
            if (meanwhile === "left") s.joined.delete(CHAT);
            if (meanwhile === "disconnected") s.streams.close();
            probe.resolve(NO_COOKIE);
            await s.settled();
            expect(s.errors.codes(), meanwhile).toEqual([`${CHAT}:stream_error`]);
            if (meanwhile === "opened") expect(s.live(CHAT), meanwhile).toBe(1); // not stopped either
        }
    });

    it("is not diagnosed at all while the diagnostics chunk loads and the channel is left (no probe is sent)", async () => {
        const s = streamsSetup(() => NO_COOKIE);
        const chunk = deferred<Awaited<ReturnType<NonNullable<WhisperDiagnostics["load"]>>>>();
        s.load.mockImplementationOnce(() => chunk.promise);
        s.source(CHAT).emitError(true);
        s.joined.delete(CHAT);
        chunk.resolve({ diagnose: diagnostics.diagnose, diagnosisError: diagnostics.diagnosisError });
        await s.settled();
        expect(s.probes()).toEqual([]);
        expect(s.errors.codes()).toEqual([`${CHAT}:stream_error`]);
    });
});

/**
 * A publisher whose POSTs get `posts` in turn (a status, or an Error to reject with) and whose probes
 * (GET) get `probe`; `reauthorize` succeeds unless told otherwise.
 */
function publisherSetup(posts: Array<number | Error>, probe: (call: FakeCall) => FakeAnswer | Error | Promise<FakeAnswer | Error> = () => ACCEPTED, reauthorize = async () => true) {
    const d = diagnosticsFor((call) => {
        if ((call.init.method ?? "GET") === "GET") return probe(call);
        const next = posts.shift() ?? 200;
        return next instanceof Error ? next : { status: next, headers: next === 401 ? { "WWW-Authenticate": 'Bearer error="invalid_token"' } : {} };
    });
    const errors = reports();
    const publisher = new WhisperPublisher(
        {
            target: (channel) => (d.joined.has(channel) ? { hub: HUB, fetch: d.hub.fetch, topicPrefix: PREFIX, clientEvents: true } : null),
            reauthorize: vi.fn(reauthorize),
            report: errors.report,
        },
        { socketId: () => OWN, crypto: { seal: async () => "" }, diagnostics: d.host },
    );
    const posted = () => d.hub.calls.filter((call) => call.init.method === "POST").length;
    return { ...d, publisher, errors, posted };
}

describe("a whisper POST the hub refused, or that got no answer, is diagnosed", () => {
    it("400: whisper_failed at once, then publish_origin_refused naming the page origin and publish_origins, without a probe", async () => {
        const p = publisherSetup([400]);
        const result = await p.publisher.whisper(CHAT, "typing", {});
        expect(result).toMatchObject({ kind: "failed", error: { code: "whisper_failed", status: 400 } });
        expect(p.errors.codes()).toEqual([`${CHAT}:whisper_failed`]);
        await p.settled();
        expect(p.errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`]);
        const cause = p.errors.list[1]!.error;
        expect(cause).toMatchObject({ channel: CHAT, status: 400 });
        expect(cause.message).toBe(
            "The hub refused a whisper with HTTP 400, as it does when the page origin is not in its publish_origins: add https://app.test to the hub's publish_origins (needed for whispers).",
        );
        expect(p.runs[0]!.input.failure).toEqual({ kind: "whisper_post", status: 400, challenge: null });
        expect(p.probes()).toEqual([]);
    });

    it("once per failure streak and channel: a whisper that goes through ends the streak", async () => {
        const p = publisherSetup([400, 400, 400, 200, 400]);
        await p.publisher.whisper(CHAT, "one", {});
        await p.publisher.whisper(CHAT, "two", {});
        await p.publisher.whisper(OTHER, "three", {});
        await p.settled();
        // (A diagnosis lands beside the queue, so only each channel's counts are fixed, not the interleaving.)
        expect([...p.errors.codes()].sort()).toEqual(
            [`${CHAT}:whisper_failed`, `${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`, `${OTHER}:whisper_failed`, `${OTHER}:publish_origin_refused`].sort(),
        );
        expect(p.errors.codes()[0]).toBe(`${CHAT}:whisper_failed`);
        await p.publisher.whisper(CHAT, "four", {}); // 200
        await p.publisher.whisper(CHAT, "five", {}); // 400: a new streak
        await p.settled();
        expect(p.errors.codes().slice(5)).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`]);
    });

    it("401 again after the re-auth while the hub accepts the cookie for subscribing: different publisher and subscriber keys", async () => {
        const p = publisherSetup([401, 401]);
        await p.publisher.whisper(CHAT, "typing", {});
        await p.settled();
        expect(p.posted()).toBe(2);
        expect(p.probes()).toHaveLength(1);
        expect(p.runs[0]!.input.failure).toEqual({ kind: "whisper_post", status: 401, challenge: 'Bearer error="invalid_token"' });
        expect(p.errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:invalid_token`]);
        expect(p.errors.list[1]!.error.message).toContain("accepts the cookie for subscribing but refused it for a whisper (HTTP 401)");
        expect(p.errors.list[1]!.error.message).toContain("MERCURE_JWT_SECRET as its publisher key too");
    });

    it("a 401 whose re-auth failed is not probed: the auth error the connector reported is the cause", async () => {
        const p = publisherSetup([401], undefined, async () => false);
        await p.publisher.whisper(CHAT, "typing", {});
        await p.settled();
        expect(p.load).not.toHaveBeenCalled();
        expect(p.errors.codes()).toEqual([`${CHAT}:whisper_failed`]);
    });

    it("no answer at all: the probe tells whether the hub is reachable", async () => {
        const p = publisherSetup([new TypeError("fetch failed")], () => new TypeError("fetch failed"));
        await p.publisher.whisper(CHAT, "typing", {});
        await p.settled();
        expect(p.runs[0]!.input.failure).toEqual({ kind: "whisper_post", status: "network" });
        expect(p.errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:hub_unreachable`]);
    });

    it("reports nothing when the channel was left or the connector disconnected during the probe", async () => {
        for (const meanwhile of ["left", "disconnected"] as const) {
            const probe = deferred<FakeAnswer>();
            const p = publisherSetup([401, 401], () => probe.promise);
            await p.publisher.whisper(CHAT, "typing", {});
            await drain();
            expect(p.probes(), meanwhile).toHaveLength(1);
            if (meanwhile === "left") p.joined.delete(CHAT);
            else p.publisher.clear();
            probe.resolve(ACCEPTED);
            await p.settled();
            expect(p.errors.codes(), meanwhile).toEqual([`${CHAT}:whisper_failed`]);
        }
    });
});

describe("Whispers: the connector's side of whisper diagnoses", () => {
    it("probes with the located channel's hub and fetch and the host's cookie expiry; a channel not joined (or pending) is not diagnosed", async () => {
        const d = diagnosticsFor(() => ACCEPTED);
        const errors = reports();
        const posts: number[] = [400, 400];
        const fetch = fakeFetch(() => ({ status: posts.shift() ?? 200 }));
        const where = new Map<string, { hub: URL; fetch: typeof fetch.fetch; topicPrefix: string; clientEvents: boolean } | "pending">([
            [CHAT, { hub: HUB, fetch: fetch.fetch, topicPrefix: PREFIX, clientEvents: true }],
        ]);
        const host: WhispersHost = {
            locate: (channel) => where.get(channel) ?? null,
            refresh: () => true,
            joined: () => true,
            report: errors.report,
            open: (url, channel, topic, handlers) => new HubStream(createFakeEventSource(), url, [channel], [topic], handlers),
            deliver: () => undefined,
            failed: () => undefined,
            tokenExpiresAt: () => EXPIRES_AT,
        };
        const whispers = new Whispers(host, {
            socketId: () => OWN,
            crypto: new EncryptedChannels({ socketId: () => OWN }),
            maxStreams: () => Infinity,
            load: async () => whisperModule,
            loadDiagnostics: d.load,
        });
        whispers.whisper(CHAT, "typing", {});
        await drain();
        await d.settled();
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`]);
        expect(d.runs[0]!.input).toMatchObject({ hub: HUB, fetch: fetch.fetch, tokenExpiresAt: EXPIRES_AT });

        // The channel's auth is pending again (re-authorizing) once the diagnostics chunk has loaded: nothing is reported.
        whispers.clear(); // disconnect(): a new streak
        const chunk = deferred<Awaited<ReturnType<NonNullable<WhisperDiagnostics["load"]>>>>();
        d.load.mockImplementationOnce(() => chunk.promise);
        whispers.whisper(CHAT, "again", {});
        for (let round = 0; round < 100 && d.load.mock.calls.length < 2; round++) await drain();
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`, `${CHAT}:whisper_failed`]);
        where.set(CHAT, "pending");
        chunk.resolve({ diagnose: diagnostics.diagnose, diagnosisError: diagnostics.diagnosisError });
        await d.settled();
        expect(d.runs).toHaveLength(1);
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`, `${CHAT}:publish_origin_refused`, `${CHAT}:whisper_failed`]);
    });
});
