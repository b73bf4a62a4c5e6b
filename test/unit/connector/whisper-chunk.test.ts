import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureError } from "../../../src/errors";
import type { FetchLike } from "../../../src/transport/platform";
import { envelope, HUB, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer, PREFIX } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import { mockFlakyChunk, type FlakyChunk } from "../../fakes/flaky-chunk";

/*
 * Issue 49 point 5: the whisper capability (src/connector/whisper-capability.ts) is a chunk loaded on the first
 * `whisper()` or whisper listener. Here it fails to download as often as `chunk.failures` says (offline, a deploy in
 * between), then loads. Each test has a page of its own (fresh modules: the loader keeps what it loaded).
 */
let chunk: FlakyChunk;
let Connector: typeof MercureConnector;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
/** The whisper POSTs the hub received: topic and event. */
let posts: string[];
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    useScopedFakeTimers();
    vi.resetModules();
    chunk = mockFlakyChunk("../../../src/connector/whisper-capability");
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    auth = new FakeAuthServer();
    ES = createFakeEventSource();
    posts = [];
});

afterEach(() => {
    for (const connector of connectors.splice(0)) connector.disconnect();
    vi.useRealTimers();
});

/** The whisper topic of a channel under the default prefix. */
const whisperTopic = (name: string) => PREFIX + "whisper/" + encodeURIComponent(name);

/** A connector on the fakes: the auth endpoint answered by `auth`, whisper POSTs to the hub recorded and accepted. */
function connector(): MercureConnector {
    const fetch: FetchLike = async (url, init) => {
        if (!url.startsWith(HUB) || (init.method ?? "GET") === "GET") return auth.fetch(url, init);
        const body = new URLSearchParams(String(init.body));
        posts.push(`${body.get("topic")} ${(JSON.parse(body.get("data")!) as { event: string }).event}`);
        return { status: 200, text: async () => "urn:uuid:1" };
    };
    const created = new Connector({ host: HUB, shareAcrossTabs: false, eventSource: ES, fetch });
    connectors.push(created);
    return created;
}

/** The live whisper stream of `name`, or undefined. */
const whisperStream = (name: string) => ES.live().find((source) => source.matches()[0] === whisperTopic(name));

describe("the whisper chunk, failing then loading", () => {
    it("reports one load_failed per channel for one failed download, however many listeners and whispers waited for it", async () => {
        const echo = connector();
        const errors: string[] = [];
        const chat = echo.privateChannel("chat.1").error((error: MercureError) => errors.push(`${error.channel} ${error.code}`));
        const room = echo.presenceChannel("room.1").error((error: MercureError) => errors.push(`${error.channel} ${error.code}`));
        chunk.failures = 1;
        chat.listenForWhisper("typing", () => undefined);
        chat.listenForWhisper("moved", () => undefined);
        chat.whisper("typing", { n: 1 });
        room.listenForWhisper("typing", () => undefined);
        await settleLoadsUntil(() => errors.length >= 2);
        expect(chunk.loads).toBe(1);
        expect(errors).toEqual(["private-chat.1 load_failed", "presence-room.1 load_failed"]);
        expect(posts).toEqual([]);
    });

    it("lets every listener registered during a failed download hear whispers once a later download succeeds, whatever started it", async () => {
        const echo = connector();
        const heard: string[] = [];
        const errors: string[] = [];
        const chat = echo.privateChannel("chat.1").error((error: MercureError) => errors.push(error.code));
        await settleLoadsUntil(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        chunk.failures = 1;
        chat.listenForWhisper("typing", (data: unknown) => heard.push(`typing ${JSON.stringify(data)}`));
        chat.listenForWhisper("moved", (data: unknown) => heard.push(`moved ${JSON.stringify(data)}`));
        await settleLoadsUntil(() => errors.length > 0);
        expect(errors).toEqual(["load_failed"]);
        expect(whisperStream("private-chat.1")).toBeUndefined();

        // The next use is a whisper of the page's own: the download succeeds, and the listeners hear from then on.
        chat.whisper("typing", { n: 1 });
        await settleLoadsUntil(() => posts.length > 0 && whisperStream("private-chat.1") !== undefined);
        expect(chunk.loads).toBe(2);
        expect(posts).toEqual([`${whisperTopic("private-chat.1")} client-typing`]);
        const stream = whisperStream("private-chat.1");
        expect(stream).toBeDefined();
        stream!.emitOpen();
        stream!.emitMessage(envelope(["private-chat.1"], "client-typing", { name: "Ann" }, "peer.1"), "w-1");
        stream!.emitMessage(envelope(["private-chat.1"], "client-moved", { x: 2 }, "peer.1"), "w-2");
        expect(heard).toEqual(['typing {"name":"Ann"}', 'moved {"x":2}']);
        expect(errors).toEqual(["load_failed"]);
    });

    it("does not open a stream for a channel whose listeners were removed, nor for one left, after the failed download", async () => {
        const echo = connector();
        const errors: string[] = [];
        const chat = echo.privateChannel("chat.1").error((error: MercureError) => errors.push(error.code));
        const gone = echo.privateChannel("gone.1").error((error: MercureError) => errors.push(error.code));
        const other = echo.privateChannel("other.1");
        await settleLoadsUntil(() => ES.live().length > 0);
        chunk.failures = 1;
        const typing = () => undefined;
        chat.listenForWhisper("typing", typing);
        gone.listenForWhisper("typing", () => undefined);
        await settleLoadsUntil(() => errors.length > 0);
        chat.stopListeningForWhisper("typing", typing);
        echo.leave("gone.1");
        other.listenForWhisper("typing", () => undefined);
        await settleLoadsUntil(() => whisperStream("private-other.1") !== undefined);
        expect(chunk.loads).toBe(2);
        expect(whisperStream("private-chat.1")).toBeUndefined();
        expect(whisperStream("private-gone.1")).toBeUndefined();
    });
});
