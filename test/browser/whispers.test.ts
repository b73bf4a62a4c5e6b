import { createHash } from "node:crypto";
import type { Page, Route } from "playwright-core";
import { beforeEach, describe, expect, it } from "vitest";
import { base64UrlDecode, signJwt } from "../../src/dev/jwt/jwt";
import { DEFAULT_ISSUER, DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { AUTHORIZATION_DETAIL_TYPE } from "../../src/dev/laravel/subscriber-token";
import { channelTopic, whisperTopic } from "../../src/dev/laravel/topics";
import type { DevServer, DevServerOptions } from "../../src/dev/server";
import { DEV_HUB, type HubTarget } from "../support/hubs";
import { openSse, type SseStream } from "../dev/hub/sse-client";
import { payloadsOf, type ChannelSpec, type PageHarness } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { waitUntil } from "./support/wait";

// Whispers between two users in Chromium, against the dev stack (whose hub lists its own origin in
// publish_origins and whose app has client_events on): private and encrypted channels, forged publishes,
// client_events off, an expired cookie, and the browser's six HTTP/1.1 connections per host.

const JWT_KEY = "a-browser-whisper-test-jwt-key-of-32-bytes+";
const ENCRYPTION_KEY = "base64:" + createHash("sha256").update("mercure-whisper-browser-test").digest("base64");
const ANN = 1;
const BEN = 2;
const USERS = [
    { id: ANN, name: "Ann" },
    { id: BEN, name: "Ben" },
];
const CHANNELS = { "chat.{id}": () => true, "room.{id}": () => true, "side.{n}": () => true };
const CHAT = "private-chat.1";
const ROOM = "private-encrypted-room.1";
/** A plaintext no ciphertext can contain by chance (base64url has no spaces). */
const MARKER = "whispered in clear only inside the browsers";

/** One whisper a page heard, as its `listenForWhisper()` callback got it. */
interface Heard {
    channel: string;
    event: string;
    data: unknown;
}

/** `window` as the harness page and these tests extend it (type-only: the casts vanish before serialization). */
type WhisperWindow = {
    harness: { echo: { private(name: string): WhisperChannel; encryptedPrivate(name: string): WhisperChannel } };
    heard?: Heard[];
};
type WhisperChannel = {
    name: string;
    listenForWhisper(event: string, callback: (data: unknown) => void): WhisperChannel;
    whisper(event: string, data: unknown): WhisperChannel;
};

/** Start a dev stack for these tests (`app` options added to the defaults). */
function start(hub: HubTarget = DEV_HUB, app: DevServerOptions["app"] = {}): Promise<DevServer> {
    return hub.start({
        jwtKey: JWT_KEY,
        app: { users: USERS, encryptionKey: ENCRYPTION_KEY, ...app },
        channels: CHANNELS,
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    });
}

describeInChromium("whispers in Chromium", { server: (hub) => start(hub) }, ({ hub, dev, open, track }) => {
    /** How many subscribe requests the shared hub had seen when the running test started. */
    let since = 0;

    beforeEach(() => {
        since = dev().hub.stats.subscribeConnections.length;
    });

    /** A user on the harness page with Echo created and `channels` joined (their errors recorded). */
    async function user(id: number, channels: ChannelSpec[], on: DevServer = dev()): Promise<PageHarness> {
        const harness = await open(id, HARNESS_PAGE, on.url);
        await harness.create();
        await harness.join(...channels);
        return harness;
    }

    /** Register a whisper listener for `event` on each channel (`kind` as in the harness), recording into `window.heard`. */
    function listenForWhispers(page: PageHarness, event: string, ...channels: Array<{ kind: "private" | "encrypted"; name: string }>): Promise<void> {
        return page.page.evaluate(
            ({ event, channels }) => {
                const w = window as unknown as WhisperWindow;
                const heard = (w.heard ??= []);
                for (const { kind, name } of channels) {
                    const channel = kind === "private" ? w.harness.echo.private(name) : w.harness.echo.encryptedPrivate(name);
                    channel.listenForWhisper(event, (data) => heard.push({ channel: channel.name, event, data }));
                }
            },
            { event, channels },
        );
    }

    /** `whisper(event, data)` on a channel of the page. */
    function whisper(page: PageHarness, kind: "private" | "encrypted", name: string, event: string, data: unknown): Promise<void> {
        return page.page.evaluate(
            ({ kind, name, event, data }) => {
                const echo = (window as unknown as WhisperWindow).harness.echo;
                (kind === "private" ? echo.private(name) : echo.encryptedPrivate(name)).whisper(event, data);
            },
            { kind, name, event, data },
        );
    }

    /** What the page's whisper listeners heard so far. */
    function heard(page: PageHarness): Promise<Heard[]> {
        return page.page.evaluate(() => [...((window as unknown as WhisperWindow).heard ?? [])]);
    }

    /** Wait until the page's whisper listeners heard `count` whispers; resolves with them. */
    function hear(page: PageHarness, count: number, timeout = 10_000): Promise<Heard[]> {
        return waitUntil(`${count} whisper(s)`, async () => {
            const list = await heard(page);
            return list.length >= count ? list : null;
        }, { timeout });
    }

    /**
     * Wait until the shared hub has opened `count` streams subscribed to the whisper topic of `channel` since the
     * test started (the hub registers a stream before it records it, so a publish after this reaches it).
     */
    function whisperStreamsOpen(channel: string, count: number): Promise<unknown> {
        const topic = whisperTopic(DEFAULT_TOPIC_PREFIX, channel);
        return waitUntil(
            `${count} whisper stream(s) of ${channel}`,
            () => {
                const records = dev().hub.stats.subscribeConnections.slice(since);
                return records.filter((record) => record.status === 200 && new URLSearchParams(record.query).getAll("match").includes(topic)).length >= count;
            },
            { timeout: 10_000 },
        );
    }

    /** Every POST the page makes to the hub, with the status it got. */
    function recordHubPosts(page: Page, on: DevServer = dev()): Array<{ status: number; body: string }> {
        const posts: Array<{ status: number; body: string }> = [];
        page.on("response", (response) => {
            const request = response.request();
            if (request.method() === "POST" && request.url().startsWith(on.hubUrl)) posts.push({ status: response.status(), body: request.postData() ?? "" });
        });
        return posts;
    }

    /** A raw subscriber at the hub (not a browser) with a token that may read every topic: it sees what the hub carries. */
    async function observe(topic: string): Promise<SseStream> {
        const now = Math.floor(Date.now() / 1000);
        const token = signJwt(
            { iss: DEFAULT_ISSUER, aud: dev().hubUrl, iat: now, exp: now + 600, authorization_details: [{ type: AUTHORIZATION_DETAIL_TYPE, actions: ["subscribe"], topics: [{ match: "*" }] }] },
            JWT_KEY,
        );
        const stream = await openSse(`${dev().hubUrl}?match=${encodeURIComponent(topic)}`, { headers: { Authorization: `Bearer ${token}` } });
        track(stream);
        expect(stream.status).toBe(200);
        return stream;
    }

    it("reaches the other user and not the sender, on a private and on an encrypted channel; the hub carries only ciphertext there", async () => {
        const channels: ChannelSpec[] = [
            { kind: "private", name: "chat.1" },
            { kind: "encrypted", name: "room.1" },
        ];
        const ann = await user(ANN, channels);
        const ben = await user(BEN, channels);
        for (const page of [ann, ben]) await listenForWhispers(page, "typing", { kind: "private", name: "chat.1" }, { kind: "encrypted", name: "room.1" });
        await Promise.all([ann.waitForSubscribed([CHAT, ROOM]), ben.waitForSubscribed([CHAT, ROOM])]);
        await Promise.all([whisperStreamsOpen(CHAT, 2), whisperStreamsOpen(ROOM, 2)]);
        const observer = await observe(whisperTopic(DEFAULT_TOPIC_PREFIX, ROOM));

        await whisper(ann, "private", "chat.1", "typing", { name: "Ann", text: MARKER });
        await whisper(ann, "encrypted", "room.1", "typing", { name: "Ann", text: MARKER });
        expect(await hear(ben, 2)).toEqual([
            { channel: CHAT, event: "typing", data: { name: "Ann", text: MARKER } },
            { channel: ROOM, event: "typing", data: { name: "Ann", text: MARKER } },
        ]);
        // Ben answers on both: each reaches Ann after her own whisper on the same stream, which she dropped.
        await whisper(ben, "private", "chat.1", "typing", { name: "Ben" });
        await whisper(ben, "encrypted", "room.1", "typing", { name: "Ben" });
        expect(await hear(ann, 2)).toEqual([
            { channel: CHAT, event: "typing", data: { name: "Ben" } },
            { channel: ROOM, event: "typing", data: { name: "Ben" } },
        ]);
        expect(await heard(ben)).toHaveLength(2);

        await observer.waitFor((stream) => stream.events.length >= 2, 10_000);
        for (const event of observer.events) {
            expect(event.data).not.toContain(MARKER);
            expect(event.data).not.toContain("typing");
            const envelope = JSON.parse(event.data) as Record<string, unknown>;
            expect(Object.keys(envelope)).toEqual(["channels", "data"]);
            expect(envelope["channels"]).toEqual([ROOM]);
            expect(String(envelope["data"]).split(".")).toHaveLength(5); // compact JWE
        }
        expect((await ann.snapshot()).errors).toEqual([]);
        expect((await ben.snapshot()).errors).toEqual([]);
    });

    it("does not dispatch what a member publishes on a whisper topic claiming a server event or another channel's name", async () => {
        const ben = await user(BEN, [
            { kind: "private", name: "chat.1", events: ["OrderShipped"] },
            { kind: "private", name: "chat.2" },
        ]);
        await listenForWhispers(ben, "typing", { kind: "private", name: "chat.1" }, { kind: "private", name: "chat.2" });
        const ann = await user(ANN, [{ kind: "private", name: "chat.1" }, { kind: "private", name: "chat.2" }]);
        await Promise.all([ann.waitForSubscribed([CHAT, "private-chat.2"]), ben.waitForSubscribed([CHAT, "private-chat.2"])]);
        await Promise.all([whisperStreamsOpen(CHAT, 1), whisperStreamsOpen("private-chat.2", 1)]);

        // Ann holds the whisper grant of chat.1 (her cookie): she may publish anything on its whisper topic, and nothing on its channel topic.
        const statuses = await ann.page.evaluate(
            async ({ hub, whisperTopicOf, channelTopicOf, messages }) => {
                const post = async (topic: string, data: unknown) => {
                    const body = new URLSearchParams([["topic", topic], ["data", JSON.stringify(data)], ["private", "on"]]);
                    return (await fetch(hub, { method: "POST", body, credentials: "include" })).status;
                };
                const results: number[] = [];
                results.push(await post(channelTopicOf, messages[0]));
                for (const message of messages) results.push(await post(whisperTopicOf, message));
                return results;
            },
            {
                hub: dev().hubUrl,
                whisperTopicOf: whisperTopic(DEFAULT_TOPIC_PREFIX, CHAT),
                channelTopicOf: channelTopic(DEFAULT_TOPIC_PREFIX, CHAT),
                messages: [
                    { channels: [CHAT], event: "App\\Events\\OrderShipped", payload: { forged: "server event" }, socket: "forger" },
                    { channels: ["private-chat.2"], event: "client-typing", payload: { forged: "other channel" }, socket: "forger" },
                    { channels: [CHAT, "private-chat.2"], event: "client-typing", payload: { forged: "two channels" }, socket: "forger" },
                    { channels: [CHAT], event: "client-typing", payload: { sentinel: true }, socket: "forger" },
                ],
            },
        );
        expect(statuses).toEqual([403, 200, 200, 200, 200]);
        // The hub delivers in order on chat.1's whisper stream: the forgeries had their turn before the sentinel.
        expect(await hear(ben, 1)).toEqual([{ channel: CHAT, event: "typing", data: { sentinel: true } }]);
        const seen = await ben.snapshot();
        expect(payloadsOf(seen, CHAT)).toEqual([]);
        expect(seen.errors).toEqual([]);
    });

    it("with client_events off, whisper() reports whisper_disabled and makes no request, and no whisper stream opens", async () => {
        const off = await start(hub, { clientEvents: false });
        track(off);
        const ann = await user(ANN, [{ kind: "private", name: "chat.1" }], off);
        const posts = recordHubPosts(ann.page, off);
        await listenForWhispers(ann, "typing", { kind: "private", name: "chat.1" });
        await ann.waitForSubscribed([CHAT]);
        await whisper(ann, "private", "chat.1", "typing", { name: "Ann" });
        const seen = await ann.waitFor("the whisper_disabled error", (snapshot) => snapshot.errors.length > 0);
        expect(seen.errors).toEqual([
            {
                channel: CHAT,
                code: "whisper_disabled",
                message: `Whispers on channel "${CHAT}" are off: set client_events to true in config/broadcasting.php.`,
            },
        ]);
        expect(posts).toEqual([]);
        expect(off.hub.stats.subscribeConnections.filter((record) => record.query.includes("whisper"))).toEqual([]);
    });

    it("survives an expired cookie: the hub's 401 brings one re-auth, then one retry that goes through", async () => {
        const ann = await user(ANN, [{ kind: "private", name: "chat.1" }]);
        const ben = await user(BEN, [{ kind: "private", name: "chat.1" }]);
        await listenForWhispers(ben, "typing", { kind: "private", name: "chat.1" });
        await Promise.all([ann.waitForSubscribed([CHAT]), ben.waitForSubscribed([CHAT])]);
        await whisperStreamsOpen(CHAT, 1);
        const posts = recordHubPosts(ann.page);

        // The cookie as the hub sees it once its token expired: same grants, `exp` in the past.
        const [cookie] = (await ann.context.cookies(dev().hubUrl)).filter((candidate) => candidate.name === "mercure_access_token");
        if (cookie === undefined) throw new Error("Ann has no hub cookie.");
        const claims = JSON.parse(base64UrlDecode(cookie.value.split(".")[1]!)!.toString("utf8")) as Record<string, unknown>;
        const past = Math.floor(Date.now() / 1000) - 60;
        await ann.context.addCookies([{ ...cookie, value: signJwt({ ...claims, iat: past - 300, exp: past }, JWT_KEY) }]);
        const authRequests = dev().app.stats.authRequests.length;

        await whisper(ann, "private", "chat.1", "typing", { name: "Ann", after: "expiry" });
        expect(await hear(ben, 1)).toEqual([{ channel: CHAT, event: "typing", data: { name: "Ann", after: "expiry" } }]);
        // The hub delivers the retried whisper before its 200 reaches this process's response listener: wait for it.
        await expect.poll(() => posts.map((post) => post.status), { timeout: 15_000 }).toEqual([401, 200]);
        expect(posts[1]!.body).toBe(posts[0]!.body);
        expect(dev().app.stats.authRequests.length - authRequests).toBe(1);
        expect((await ann.snapshot()).errors).toEqual([]);
    });

    describe("six HTTP/1.1 connections per host", () => {
        const many = Array.from({ length: 6 }, (_, index) => ({ kind: "private" as const, name: `chat.${index + 1}` }));

        it("with more whisper channels than connections: four whisper streams, and joins, auth and whisper POSTs still go through", async () => {
            const ann = await user(ANN, many);
            await listenForWhispers(ann, "typing", ...many);
            const ben = await user(BEN, many);
            const posts = recordHubPosts(ann.page);
            await ann.waitForSubscribed(many.map((spec) => `private-${spec.name}`));
            // Four whisper streams beside the main stream; the other two channels are told why they hear nothing.
            const told = await ann.waitFor("two channels told about the limit", (snapshot) => snapshot.errors.length >= 2);
            expect(told.errors.map((error) => `${error.channel}:${error.code}`)).toEqual(["private-chat.5:stream_error", "private-chat.6:stream_error"]);
            expect(told.errors[0]!.message).toContain("HTTP/1.1");
            for (const spec of many.slice(0, 4)) await whisperStreamsOpen(`private-${spec.name}`, 1);

            // A whisper stream works: Ben's whisper reaches Ann.
            await whisper(ben, "private", "chat.1", "typing", { from: "Ben" });
            expect(await hear(ann, 1)).toEqual([{ channel: CHAT, event: "typing", data: { from: "Ben" } }]);
            // A whisper POST does not wait behind the streams: Ann's reaches Ben.
            await listenForWhispers(ben, "typing", { kind: "private", name: "chat.2" });
            await whisperStreamsOpen("private-chat.2", 2);
            await whisper(ann, "private", "chat.2", "typing", { from: "Ann" });
            expect(await hear(ben, 1)).toEqual([{ channel: "private-chat.2", event: "typing", data: { from: "Ann" } }]);
            // The hub delivers the whisper before its 200 reaches this process's response listener: wait for it.
            await expect.poll(() => posts.map((post) => post.status), { timeout: 15_000 }).toEqual([200]);
            // A join needs an auth request and a new main stream: both go through (the old stream closes first).
            await ann.join({ kind: "private", name: "side.1", events: [".ping"] });
            await ann.waitForSubscribed(["private-side.1"]);
            await dev().broadcast({ channels: ["private-side.1"], event: "ping", payload: { n: 1 } });
            const seen = await ann.waitFor("the broadcast on the new channel", (snapshot) => payloadsOf(snapshot, "private-side.1").length === 1);
            expect(seen.status).toBe("connected");
            // Stopping one channel's whisper listeners gives its connection to a channel that waited.
            await ann.page.evaluate(() => (window as unknown as { harness: { echo: { private(name: string): { stopListeningForWhisper(event: string): unknown } } } }).harness.echo.private("chat.3").stopListeningForWhisper("typing"));
            await whisperStreamsOpen("private-chat.5", 1);
            await listenForWhispers(ben, "typing", { kind: "private", name: "chat.5" });
            await whisperStreamsOpen("private-chat.5", 2);
            await whisper(ben, "private", "chat.5", "typing", { from: "Ben", to: 5 });
            expect((await hear(ann, 2))[1]).toEqual({ channel: "private-chat.5", event: "typing", data: { from: "Ben", to: 5 } });
        });

        it("falls back to closing the old stream when its replacement cannot open, and resumes from its cursor", async () => {
            const ann = await user(ANN, [
                { kind: "private", name: "chat.1", events: [".tick"] },
                { kind: "private", name: "chat.2" },
            ]);
            await listenForWhispers(ann, "typing", { kind: "private", name: "chat.1" });
            await ann.waitForSubscribed([CHAT, "private-chat.2"]);
            // The replacement's request is held (as behind a connection other tabs hold): it never opens.
            const sideTopic = channelTopic(DEFAULT_TOPIC_PREFIX, "private-side.9");
            let held: Route | null = null;
            await ann.page.route(
                (url) => url.pathname === "/.well-known/mercure" && url.searchParams.getAll("match").includes(sideTopic),
                (route) => {
                    if (held === null) held = route;
                    else void route.continue();
                },
            );
            const statusesBefore = (await ann.snapshot()).statuses.length;
            await dev().broadcast({ channels: [CHAT], event: "tick", payload: { n: 1 } });
            await ann.waitFor("tick 1", (snapshot) => payloadsOf(snapshot, CHAT).length === 1);
            await ann.join({ kind: "private", name: "side.9", events: [".tick"] });
            await waitUntil("the replacement request", () => held !== null, { timeout: 10_000 });
            await dev().broadcast({ channels: [CHAT], event: "tick", payload: { n: 2 } }); // on the old stream only
            await ann.waitForSubscribed(["private-side.9"], { timeout: 20_000 });
            await dev().broadcast({ channels: [CHAT, "private-side.9"], event: "tick", payload: { n: 3 } });
            const seen = await ann.waitFor("tick 3 on both channels", (snapshot) => payloadsOf(snapshot, "private-side.9").length === 1);
            expect(payloadsOf(seen, CHAT)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
            expect(seen.statuses.slice(statusesBefore)).toEqual(["reconnecting", "connected"]);
            expect(seen.errors).toEqual([]);
            await (held as Route | null)?.abort();
        });
    });
});
