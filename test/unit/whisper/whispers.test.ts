import { describe, expect, it, vi } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import { HubStream } from "../../../src/transport/hub-stream";
import * as whisperModule from "../../../src/whisper";
import type { WhisperModule } from "../../../src/whisper/load";
import type { WhisperTarget } from "../../../src/whisper/publish";
import { Whispers, type WhispersHost } from "../../../src/whisper/whispers";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { deferred, drain, OWN, PREFIX, reports, scriptedFetch } from "./helpers";

// The connector-side half of the whisper module: what it keeps until the publisher and streams are loaded,
// and the publisher's view of the connector (targets, re-auth). The publisher and streams are tested alone.

const HUB = new URL("https://app.test/.well-known/mercure");
const CHAT = "private-chat.1";
const OTHER = "private-other.2";

/**
 * Whispers on a scripted fetch and fake EventSources; `load` resolves when the test says so (or at once),
 * `locate` answers from `where` (a channel missing from it is not joined).
 */
function setup(options: { loadNow?: boolean } = {}) {
    const http = scriptedFetch();
    const errors = reports();
    const EventSource = createFakeEventSource();
    const loading = deferred<WhisperModule>();
    if (options.loadNow !== false) loading.resolve(whisperModule);
    const load = vi.fn(() => loading.promise);
    const target: WhisperTarget = { hub: HUB, fetch: http.fetch, topicPrefix: PREFIX, clientEvents: true };
    const where = new Map<string, WhisperTarget | "pending">([
        [CHAT, target],
        [OTHER, target],
    ]);
    const refresh = vi.fn(() => true);
    const joined = new Set<object>();
    const host: WhispersHost = {
        locate: (channel) => where.get(channel) ?? null,
        refresh,
        joined: (channel) => joined.has(channel),
        report: errors.report,
        open: (url, channel, topic, handlers) => new HubStream(EventSource, url, [channel], [topic], handlers),
        deliver: () => undefined,
        failed: () => undefined,
    };
    const whispers = new Whispers(host, { socketId: () => OWN, crypto: new EncryptedChannels({ socketId: () => OWN }), maxStreams: () => Infinity, load });
    /** The `data` event names of the POSTs made so far, in order. */
    const sent = () => http.calls.map((call) => (JSON.parse(new URLSearchParams(String(call.init.body)).get("data")!) as { event: string }).event);
    return { whispers, http, errors, EventSource, loading, load, where, refresh, target, sent, joined };
}

const auth = (granted: string[]) => ({ hub: HUB, topicPrefix: PREFIX, clientEvents: true, granted });

describe("Whispers: loaded on first use", () => {
    it("loads nothing for joins, auths and leaves; loads once on the first whisper or whisper listener", async () => {
        const { whispers, load } = setup();
        whispers.sync(auth([CHAT]));
        whispers.drop(OTHER);
        whispers.listen(CHAT, false);
        expect(load).not.toHaveBeenCalled();
        whispers.listen(CHAT, true);
        whispers.whisper(CHAT, "typing", {});
        await drain();
        whispers.whisper(CHAT, "typing", {});
        expect(load).toHaveBeenCalledTimes(1);
    });

    it("sends the whispers made while loading first, in order, then the later ones", async () => {
        const { whispers, loading, sent } = setup({ loadNow: false });
        whispers.whisper(CHAT, "one", {});
        whispers.whisper(OTHER, "two", {});
        loading.resolve(whisperModule);
        await loading.promise;
        whispers.whisper(CHAT, "three", {});
        await drain();
        await drain();
        expect(sent()).toEqual(["client-one", "client-two", "client-three"]);
    });

    it("opens the streams of the channels listening when it loads, with the latest auth, less the channels dropped", async () => {
        const { whispers, loading, EventSource } = setup({ loadNow: false });
        whispers.listen(CHAT, true);
        whispers.listen(OTHER, true);
        whispers.sync(auth([CHAT, OTHER]));
        whispers.drop(OTHER);
        expect(EventSource.instances).toHaveLength(0);
        loading.resolve(whisperModule);
        await drain();
        expect(EventSource.live().map((source) => source.matches())).toEqual([[PREFIX + "whisper/" + CHAT]]);
        expect(whispers.size).toBe(1);
    });

    it("reports a load that failed on each channel with a waiting whisper or a whisper listener, once, and tries again on the next whisper", async () => {
        const { whispers, load, errors, sent } = setup();
        load.mockImplementationOnce(() => Promise.reject(new Error("chunk missing")));
        whispers.whisper(CHAT, "one", {});
        whispers.listen(OTHER, true);
        whispers.whisper(CHAT, "two", {});
        await drain();
        expect(errors.codes()).toEqual([`${CHAT}:load_failed`, `${OTHER}:load_failed`]);
        expect(errors.list[0]!.error.message).toBe(
            `The whisper code for channel "${CHAT}" could not be downloaded (chunk missing): its whispers were not sent nor received, and the next whisper, whisper listener or re-authorization downloads it again; check the network, or reload the page after a deploy.`,
        );
        whispers.listen(OTHER, false);
        whispers.whisper(CHAT, "three", {});
        await drain();
        await drain();
        expect(load).toHaveBeenCalledTimes(2);
        expect(sent()).toEqual(["client-three"]);
    });

    it("drops the whispers waiting for the load when the connector disconnects", async () => {
        const { whispers, loading, sent } = setup({ loadNow: false });
        whispers.whisper(CHAT, "one", {});
        whispers.clear();
        loading.resolve(whisperModule);
        await drain();
        expect(sent()).toEqual([]);
    });
});

describe("Whispers: the channels' link", () => {
    it("sends and follows whisper listeners for joined channel objects only (one left since is ignored)", async () => {
        const { whispers, joined, sent, EventSource } = setup();
        whispers.sync(auth([CHAT]));
        let listening = true;
        const current = { name: CHAT, hasWhisperListeners: () => listening };
        const left = { name: CHAT, hasWhisperListeners: () => true };
        joined.add(current);
        whispers.link.whisper(left as never, "stale", {});
        whispers.link.listening(left as never);
        await drain();
        expect(sent()).toEqual([]);
        expect(EventSource.instances).toHaveLength(0);
        whispers.link.whisper(current as never, "typing", {});
        whispers.link.listening(current as never);
        await drain();
        expect(sent()).toEqual(["client-typing"]);
        expect(EventSource.live()).toHaveLength(1);
        listening = false;
        whispers.link.listening(current as never);
        expect(EventSource.live()).toHaveLength(0);
    });
});

describe("Whispers: the publisher's view of the connector", () => {
    it("holds a whisper on a channel whose auth is in flight until the next auth answer", async () => {
        const { whispers, where, target, sent } = setup();
        where.set(CHAT, "pending");
        whispers.whisper(CHAT, "typing", {});
        await drain();
        expect(sent()).toEqual([]);
        whispers.authFailed(); // an answer that did not grant it: it waits for the next
        await drain();
        expect(sent()).toEqual([]);
        where.set(CHAT, target);
        whispers.sync(auth([CHAT]));
        await drain();
        expect(sent()).toEqual(["client-typing"]);
    });

    it("re-authorizes after a 401 through the connector's refresh, and retries once that answer granted", async () => {
        const { whispers, http, refresh, sent, errors } = setup();
        http.script.push(401, 200);
        whispers.whisper(CHAT, "typing", {});
        await drain();
        expect(refresh).toHaveBeenCalledTimes(1);
        expect(sent()).toEqual(["client-typing"]);
        whispers.sync(auth([CHAT]));
        await drain();
        expect(sent()).toEqual(["client-typing", "client-typing"]);
        expect(errors.list).toEqual([]);
    });

    it("shares an auth request already in flight instead of asking for another (its answer brings a fresh cookie)", async () => {
        const { whispers, http, refresh, sent } = setup();
        http.script.push(401, 200);
        whispers.authStarted();
        whispers.whisper(CHAT, "typing", {});
        await drain();
        expect(refresh).not.toHaveBeenCalled();
        whispers.sync(auth([CHAT]));
        await drain();
        expect(sent()).toEqual(["client-typing", "client-typing"]);
        http.script.push(401);
        whispers.whisper(CHAT, "again", {}); // that answer was applied: the next 401 asks for a refresh
        await drain();
        expect(refresh).toHaveBeenCalledTimes(1);
    });

    it("gives up the retry when the re-auth failed, or when the connector is disconnected (no refresh)", async () => {
        const { whispers, http, refresh, sent, errors } = setup();
        http.script.push(401, 401);
        whispers.whisper(CHAT, "typing", {});
        await drain();
        whispers.authFailed();
        await drain();
        refresh.mockReturnValue(false);
        whispers.whisper(OTHER, "typing", {});
        await drain();
        await drain();
        expect(sent()).toEqual(["client-typing", "client-typing"]);
        expect(errors.list.map(({ channel, error }) => `${channel}:${error.code}:${error.status}`)).toEqual([
            `${CHAT}:whisper_failed:401`,
            `${OTHER}:whisper_failed:401`,
        ]);
    });
});
