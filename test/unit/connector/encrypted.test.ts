import { performance } from "node:perf_hooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureEcho } from "../../../src/connector/mercure-echo";
import { MercurePrivateChannel } from "../../../src/channel/mercure-private-channel";
import type { MercureError } from "../../../src/errors";
import { createHarness, envelope, HUB, topic, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";
import { grant, FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { jwk, JWKS, sealByHand, VECTOR_JWE } from "../crypto/fixtures";

// The connector's wiring of the crypto module (laravel-mercure §6): keys from each auth response, the
// ledger, the ordered queue, fail-closed routing. The module's own rules are tested in test/unit/crypto/.

/**
 * The lazily loaded JWE module, wrapped: counts key imports and decryptions, and lets a test hold the key
 * imports, or the decryption of one JWE, until it releases them. The real JWE code does the work.
 */
const jweSpy = vi.hoisted(() => ({
    imports: 0,
    decryptions: 0,
    importGate: null as Promise<void> | null,
    decryptGates: new Map<string, Promise<void>>(),
}));

vi.mock("../../../src/crypto/jwe", async (importOriginal) => {
    const real = await importOriginal<typeof import("../../../src/crypto/jwe")>();
    return {
        ...real,
        importChannelKey: async (value: unknown) => {
            jweSpy.imports++;
            await jweSpy.importGate;
            return real.importChannelKey(value);
        },
        decryptEnvelope: async (jwe: string, key: CryptoKey) => {
            jweSpy.decryptions++;
            const result = real.decryptEnvelope(jwe, key);
            await jweSpy.decryptGates.get(jwe);
            return result;
        },
    };
});

const ROOM = "private-encrypted-room.1";
const ORDERS = "private-encrypted-orders.1";
const ROOM_K = JWKS[ROOM].k;
const ORDERS_K = JWKS[ORDERS].k;

/** The one decrypt_failed message: names the channel, never the reason. */
const uniform = (channel: string) =>
    `An event on encrypted channel "${channel}" could not be decrypted and was dropped; check that the server's broadcasting encryption_key is the one that issued this channel's key.`;

beforeEach(() => {
    useScopedFakeTimers();
    jweSpy.imports = 0;
    jweSpy.decryptions = 0;
    jweSpy.importGate = null;
    jweSpy.decryptGates.clear();
});
afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
});

/** Hold the decryption of `jwe` (it still runs) until released; returns its release. */
function holdDecryption(jwe: string): () => void {
    let release!: () => void;
    jweSpy.decryptGates.set(jwe, new Promise<void>((resolve) => (release = resolve)));
    return release;
}

/** Hold every key import until released. */
function holdImports(): () => void {
    let release!: () => void;
    jweSpy.importGate = new Promise<void>((resolve) => (release = resolve));
    return release;
}

/**
 * Wait for `condition`: WebCrypto answers from Node's thread pool, which fake timers do not drive, so this
 * yields to the real event loop (setImmediate is not faked) until it holds; the deadline is generous.
 */
async function until(condition: () => boolean, what: string): Promise<void> {
    const deadline = performance.now() + 10_000;
    while (!condition()) {
        if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((resolve) => setImmediate(resolve));
    }
}

/** An auth answer granting every name, with the given JWK for each encrypted channel (as Laravel sends it). */
function grantWithKeys(names: string[], keys: Record<string, unknown>, denied: string[] = []) {
    const answer = grant(names, {}, denied);
    const body = answer.body as { channel_names: Array<Record<string, unknown>> };
    for (const entry of body.channel_names) {
        const key = keys[entry["name"] as string];
        if (key !== undefined && entry["denied"] !== true) entry["jwk"] = key;
    }
    return answer;
}

/** The routing envelope of an encrypted broadcast: the channel and the JWE, nothing else in clear. */
const sealed = (channel: string, jwe: string) => ({ channels: [channel], data: jwe });

/** A JWE of `{"event":name,"payload":{"n":name}}` (plus `extra` members) under a base64url key, built with node:crypto. */
const jweOf = (k: string, name: string, extra = "") => sealByHand(k, `{"event":"${name}","payload":{"n":"${name}"}${extra}}`);

/**
 * A connector whose auth grants the §6.5 keys; every channel joined records into one log
 * (`<channel>:<event>` for deliveries, `<channel>:!<code>` for errors).
 */
async function connected(names: { encrypted?: string[]; plain?: string[] } = { encrypted: ["room.1"] }) {
    const h = createHarness();
    const keys: Record<string, unknown> = { ...JWKS };
    h.auth.handler = (requested) => grantWithKeys(requested, keys);
    const log: string[] = [];
    const errors: MercureError[] = [];
    const record = <T extends MercurePrivateChannel | ReturnType<Harness["connector"]["channel"]>>(channel: T): T => {
        channel.listenToAll((event: string, payload: unknown) => log.push(`${channel.name}:${event.replace(/^\./, "")}:${JSON.stringify(payload)}`));
        channel.error((error: MercureError) => {
            errors.push(error);
            log.push(`${channel.name}:!${error.code}`);
        });
        return channel;
    };
    for (const name of names.plain ?? []) record(h.connector.channel(name));
    for (const name of names.encrypted ?? []) record(h.connector.encryptedPrivateChannel(name));
    await h.flush();
    const stream = h.stream();
    stream.emitOpen();
    return { h, keys, log, errors, record, stream };
}

describe("an encrypted private channel", () => {
    it("is one private channel whichever way it is joined, in the same auth batch and on the same stream as the others", async () => {
        const EventSource = createFakeEventSource();
        const auth = new FakeAuthServer();
        auth.handler = (names) => grantWithKeys(names, JWKS);
        const echo = new MercureEcho({ host: HUB, eventSource: EventSource, fetch: auth.fetch });
        const news = echo.channel("news");
        const room = echo.encryptedPrivate("room.1");
        expect(room).toBeInstanceOf(MercurePrivateChannel);
        expect(room.name).toBe(ROOM);
        expect(echo.private("encrypted-room.1")).toBe(room);
        expect(echo.channel(ROOM)).toBe(room);
        expect(echo.connector.encryptedPrivateChannel("room.1")).toBe(room);
        await vi.advanceTimersByTimeAsync(0);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["news", ROOM]]);
        expect(EventSource.instances).toHaveLength(1);
        expect(EventSource.last().matches()).toEqual([topic("news"), topic(ROOM)]);
        expect(news).not.toBe(room);
    });

    it("delivers the §6.5 vector decrypted with the JWK from the auth response, to listen() with the namespace applied", async () => {
        const { h, stream } = await connected();
        const got: unknown[] = [];
        h.connector
            .encryptedPrivateChannel("room.1")
            .listen("MessageSent", (payload: unknown) => got.push(["namespaced", payload]))
            .listen(".MessageSent", (payload: unknown) => got.push(["verbatim", payload]));
        stream.emitMessage(sealed(ROOM, VECTOR_JWE), "urn:1"); // event "MessageSent": only the verbatim listener
        stream.emitMessage(sealed(ROOM, sealByHand(ROOM_K, '{"event":"App\\\\Events\\\\MessageSent","payload":{"text":"ns"}}')), "urn:2");
        await until(() => got.length === 2, "two deliveries");
        expect(got).toEqual([
            ["verbatim", { text: "hi" }],
            ["namespaced", { text: "ns" }],
        ]);
    });
});

describe("the wiring of the decryption queue", () => {
    it("claims each (event id, channel) in the delivery ledger before decrypting: an event seen on two streams is decrypted and delivered once", async () => {
        const { h, log, record, stream: first } = await connected();
        record(h.connector.channel("news")); // a topology change: make-before-break reopen
        await h.flush();
        const second = h.EventSource.last();
        second.emitOpen();
        first.emitMessage(sealed(ROOM, jweOf(ROOM_K, "one")), "urn:1");
        second.emitMessage(sealed(ROOM, jweOf(ROOM_K, "one")), "urn:1"); // the overlap: the same update again
        first.emitMessage(sealed(ROOM, jweOf(ROOM_K, "one")), "urn:1"); // and once more
        second.emitMessage(sealed(ROOM, jweOf(ROOM_K, "two")), "urn:2");
        await until(() => log.length >= 2, "both events");
        expect(log).toEqual([`${ROOM}:one:{"n":"one"}`, `${ROOM}:two:{"n":"two"}`]);
        expect(jweSpy.decryptions).toBe(2); // the copies never reached the queue
    });

    it("applies toOthers() to the socket inside the plaintext, not to the routing envelope", async () => {
        const { h, log } = await connected();
        const stream = h.stream();
        const mine = h.connector.socketId();
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "mine", `,"socket":"${mine}"`)), "urn:1");
        // A socket beside the JWE is not part of the format and is never read.
        stream.emitMessage({ ...sealed(ROOM, jweOf(ROOM_K, "outer")), socket: mine }, "urn:2");
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "theirs", ',"socket":"someone.else"')), "urn:3");
        await until(() => log.length >= 2, "two deliveries"); // in order: "theirs" settles after the others
        expect(log).toEqual([`${ROOM}:outer:{"n":"outer"}`, `${ROOM}:theirs:{"n":"theirs"}`]);
    });

    it("keeps the order of arrival across a slow decryption, on one channel and across encrypted channels", async () => {
        const { h, log, stream } = await connected({ encrypted: ["room.1", "orders.1"], plain: ["news"] });
        const release = holdDecryption(jweOf(ROOM_K, "first"));
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "first")), "urn:1");
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "second")), "urn:2");
        stream.emitMessage(sealed(ORDERS, jweOf(ORDERS_K, "third")), "urn:3");
        stream.emitMessage(envelope(["news"], "plain", { n: "plain" }), "urn:4");
        await until(() => jweSpy.decryptions === 3, "all three decryptions to start");
        // Plaintext channels are not held up; every encrypted event waits for the first.
        expect(log).toEqual(['news:plain:{"n":"plain"}']);
        release();
        await until(() => log.length === 4, "the encrypted events");
        expect(log.slice(1)).toEqual([`${ROOM}:first:{"n":"first"}`, `${ROOM}:second:{"n":"second"}`, `${ORDERS}:third:{"n":"third"}`]);
        expect(h.connector.connectionStatus()).toBe("connected");
    });

    it("delivers events that arrive while the key is importing after it, in order", async () => {
        const release = holdImports();
        const { log, stream } = await connected();
        for (const name of ["a", "b", "c"]) stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, name)), `urn:${name}`);
        await until(() => jweSpy.imports === 1, "the key import to start");
        expect(log).toEqual([]); // the queue waits for the key
        release();
        await until(() => log.length === 3, "three deliveries");
        expect(log).toEqual([`${ROOM}:a:{"n":"a"}`, `${ROOM}:b:{"n":"b"}`, `${ROOM}:c:{"n":"c"}`]);
        expect(jweSpy.imports).toBe(1);
    });

    it("imports a key once while re-auths bring the same JWK, and replaces it when a re-auth rotates it", async () => {
        const { h, keys, log, record } = await connected();
        h.stream().emitMessage(sealed(ROOM, jweOf(ROOM_K, "before")), "urn:1");
        await until(() => log.length === 1, "the first event");
        // A re-auth with the same JWK (a fresh object, as every response brings): the key is kept.
        record(h.connector.channel("news"));
        await h.flush();
        h.EventSource.last().emitOpen();
        expect(h.auth.requests).toHaveLength(2);
        // The server's encryption_key rotated: the next re-auth brings another JWK for the channel.
        keys[ROOM] = jwk(ORDERS_K);
        record(h.connector.channel("sports"));
        await h.flush();
        const rotated = h.EventSource.last();
        rotated.emitOpen();
        expect(h.auth.requests).toHaveLength(3);
        rotated.emitMessage(sealed(ROOM, jweOf(ORDERS_K, "after")), "urn:2");
        rotated.emitMessage(sealed(ROOM, jweOf(ROOM_K, "stale")), "urn:3");
        rotated.emitMessage(sealed(ROOM, jweOf(ORDERS_K, "sentinel")), "urn:4");
        await until(() => log.length === 4, "the events after the rotation");
        expect(log).toEqual([`${ROOM}:before:{"n":"before"}`, `${ROOM}:after:{"n":"after"}`, `${ROOM}:!decrypt_failed`, `${ROOM}:sentinel:{"n":"sentinel"}`]);
        expect(jweSpy.imports).toBe(2);
    });

    it("drops the key when the channel is left: its queued events reach neither it nor the channel joined again, which imports the key again", async () => {
        const { h, log, record } = await connected({ encrypted: ["room.1", "orders.1"] });
        const stream = h.stream();
        const release = holdDecryption(jweOf(ROOM_K, "held"));
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "held")), "urn:1");
        stream.emitMessage(sealed(ROOM, jweOf(ORDERS_K, "forged")), "urn:2");
        h.connector.leaveChannel(ROOM);
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "after-leave")), "urn:3"); // no longer joined: not even queued
        record(h.connector.encryptedPrivateChannel("room.1")); // joined again at once (a component remounting)
        stream.emitMessage(sealed(ORDERS, jweOf(ORDERS_K, "sentinel")), "urn:4");
        release();
        await until(() => log.length > 0, "the sentinel"); // queued after the left channel's events
        expect(log).toEqual([`${ORDERS}:sentinel:{"n":"sentinel"}`]);

        await h.flush();
        const rejoined = h.EventSource.last();
        expect(rejoined).not.toBe(stream);
        rejoined.emitOpen();
        rejoined.emitMessage(sealed(ROOM, jweOf(ROOM_K, "rejoined")), "urn:5");
        await until(() => log.length === 2, "the event after rejoining");
        expect(log[1]).toBe(`${ROOM}:rejoined:{"n":"rejoined"}`);
        expect(jweSpy.imports).toBe(3);
    });

    it("drops the key of a channel the server denies on a re-auth, silencing its queued events", async () => {
        const { h, log, errors, record } = await connected({ encrypted: ["room.1", "orders.1"] });
        const stream = h.stream();
        const release = holdDecryption(jweOf(ROOM_K, "held"));
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "held")), "urn:1");
        h.auth.handler = (names) => grantWithKeys(names, JWKS, [ROOM]);
        record(h.connector.channel("news"));
        await h.flush();
        expect(log).toEqual([`${ROOM}:!auth_denied`]);
        h.auth.handler = (names) => grantWithKeys(names, JWKS); // granted again: the channel is joined anew
        record(h.connector.encryptedPrivateChannel("room.1"));
        h.EventSource.last().emitMessage(sealed(ORDERS, jweOf(ORDERS_K, "sentinel")), "urn:2");
        release();
        await until(() => log.length >= 2, "the sentinel");
        expect(log).toEqual([`${ROOM}:!auth_denied`, `${ORDERS}:sentinel:{"n":"sentinel"}`]);
        expect(errors.map((error) => error.code)).toEqual(["auth_denied"]);
        await h.flush();
        expect(jweSpy.imports).toBe(3); // the key was dropped with the eviction and imported again
    });

    it("delivers nothing queued before disconnect(), and decrypts again after connect()", async () => {
        const { h, log } = await connected();
        const release = holdDecryption(jweOf(ROOM_K, "held"));
        h.stream().emitMessage(sealed(ROOM, jweOf(ROOM_K, "held")), "urn:1");
        h.stream().emitMessage(sealed(ROOM, jweOf(ROOM_K, "queued")), "urn:2");
        h.connector.disconnect();
        h.connector.connect();
        await h.flush();
        h.stream().emitOpen();
        h.stream().emitMessage(sealed(ROOM, jweOf(ROOM_K, "sentinel")), "urn:3");
        release();
        await until(() => log.length > 0, "the sentinel"); // queued after the events before disconnect()
        expect(log).toEqual([`${ROOM}:sentinel:{"n":"sentinel"}`]);
        expect(jweSpy.imports).toBe(2); // disconnect() forgot the key
    });
});

describe("failing closed", () => {
    it("sends a JWE that does not decrypt to that channel's error() as decrypt_failed, while the other channels keep working", async () => {
        const { log, errors, stream } = await connected({ encrypted: ["room.1", "orders.1"], plain: ["news"] });
        stream.emitMessage(sealed(ROOM, jweOf(ORDERS_K, "other-key")), "urn:1");
        stream.emitMessage(sealed(ORDERS, jweOf(ORDERS_K, "fine")), "urn:2");
        stream.emitMessage(envelope(["news"], "plain", { n: "plain" }), "urn:3");
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "next")), "urn:4");
        await until(() => log.length === 4, "every outcome");
        expect(log).toEqual([
            'news:plain:{"n":"plain"}',
            `${ROOM}:!decrypt_failed`,
            `${ORDERS}:fine:{"n":"fine"}`,
            `${ROOM}:next:{"n":"next"}`,
        ]);
        expect(errors).toHaveLength(1);
        expect(errors[0]!.channel).toBe(ROOM);
        expect(errors[0]!.message).toBe(uniform(ROOM));
    });

    it("reports decrypt_failed for events on a channel whose auth answer carried no JWK", async () => {
        const { h, keys, log, record } = await connected({ plain: ["news"] });
        delete keys[ROOM];
        record(h.connector.encryptedPrivateChannel("room.1"));
        await h.flush();
        h.EventSource.last().emitOpen();
        h.EventSource.last().emitMessage(sealed(ROOM, VECTOR_JWE), "urn:1");
        await until(() => log.length === 1, "the failure");
        expect(log).toEqual([`${ROOM}:!decrypt_failed`]);
    });

    it("never dispatches a plaintext envelope to an encrypted channel, alone or next to other channels", async () => {
        const { log, errors, stream } = await connected({ encrypted: ["room.1"], plain: ["news"] });
        stream.emitMessage(envelope([ROOM], "App\\Events\\Forged", { n: "forged" }), "urn:1");
        stream.emitMessage(envelope([ROOM, "news"], "App\\Events\\Both", { n: "both" }), "urn:2");
        stream.emitMessage(sealed(ROOM, jweOf(ROOM_K, "sentinel")), "urn:3");
        await until(() => log.length >= 2, "the sentinel");
        expect(log).toEqual(['news:Both:{"n":"both"}', `${ROOM}:sentinel:{"n":"sentinel"}`]);
        expect(errors).toEqual([]);
    });

    describe("where WebCrypto is missing (a plain-http page other than localhost)", () => {
        it("reports crypto_unavailable on the channel when the auth grants its key, without loading the JWE chunk; public channels keep working", async () => {
            vi.stubGlobal("crypto", { getRandomValues: globalThis.crypto.getRandomValues.bind(globalThis.crypto) });
            const { log, errors, stream } = await connected({ encrypted: ["room.1"], plain: ["news"] });
            // Reported at join time (the auth answer), not when the first event arrives.
            expect(log).toEqual([`${ROOM}:!crypto_unavailable`]);
            expect(errors[0]!.channel).toBe(ROOM);
            expect(errors[0]!.message).toContain("HTTPS");
            expect(errors[0]!.message).toContain("localhost");
            stream.emitMessage(envelope(["news"], "plain", { n: "plain" }), "urn:1");
            expect(log).toEqual([`${ROOM}:!crypto_unavailable`, 'news:plain:{"n":"plain"}']);
            expect(jweSpy.imports).toBe(0);
            expect(jweSpy.decryptions).toBe(0);
        });
    });
});
