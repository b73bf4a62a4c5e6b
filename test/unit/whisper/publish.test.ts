import { createDecipheriv } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import { MercureError } from "../../../src/errors";
import type { FetchLike } from "../../../src/transport/platform";
import { assertCanWhisper, WhisperPublisher, type WhisperPublisherOptions, type WhisperTarget } from "../../../src/whisper";
import { HEADER_SEGMENT, JWKS } from "../crypto/fixtures";
import { deferred, drain, OWN, PREFIX, reports, scriptedFetch, type Reply } from "./helpers";

const CHAT = "private-chat.1";
const ROOM = "private-encrypted-room.1";
const HUB = "https://app.test/.well-known/mercure";

/** §7.2 byte for byte: topic, data, private=on, in this order, form-encoded by URLSearchParams. */
const CHAT_TYPING_BODY =
    "topic=https%3A%2F%2Flaravel.alt%2Fecho%2Fwhisper%2Fprivate-chat.1" +
    "&data=%7B%22channels%22%3A%5B%22private-chat.1%22%5D%2C%22event%22%3A%22client-typing%22%2C%22payload%22%3A%7B%22name%22%3A%22Ann%22%7D%2C%22socket%22%3A%22own.socket%22%7D" +
    "&private=on";

afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
});

/**
 * A publisher on a scripted fetch; `targets` says where each channel stands (a channel missing from it
 * is not joined), `reauthorize` answers true unless told otherwise.
 */
function setup(
    options: {
        replies?: Reply[];
        clientEvents?: boolean;
        hub?: string;
        joined?: string[];
        reauthorize?: () => PromiseLike<boolean>;
        crypto?: WhisperPublisherOptions["crypto"];
        timeout?: number;
        authWait?: number;
        target?: (channel: string) => WhisperTarget | null | PromiseLike<WhisperTarget | null>;
        report?: (channel: string, error: MercureError) => void;
    } = {},
) {
    const http = scriptedFetch(...(options.replies ?? []));
    const errors = reports();
    const joined = new Set(options.joined ?? [CHAT, ROOM, "presence-lobby"]);
    const targetOf = (channel: string): WhisperTarget | null =>
        joined.has(channel)
            ? { hub: new URL(options.hub ?? HUB), fetch: http.fetch, topicPrefix: PREFIX, clientEvents: options.clientEvents ?? true }
            : null;
    const reauthorize = vi.fn(options.reauthorize ?? (async () => true));
    const crypto = new EncryptedChannels({ socketId: () => OWN });
    crypto.setKeys([[ROOM, JWKS[ROOM]]], () => undefined);
    const publisher = new WhisperPublisher(
        { target: vi.fn(options.target ?? targetOf), reauthorize, report: options.report ?? errors.report },
        { socketId: () => OWN, crypto: options.crypto ?? crypto, timeout: options.timeout, authWait: options.authWait },
    );
    return { publisher, http, errors, joined, reauthorize };
}

/** The form fields of a recorded POST, in order. */
function fields(body: unknown): Array<[string, string]> {
    expect(body).toBeInstanceOf(URLSearchParams);
    return [...(body as URLSearchParams).entries()];
}

/** Open a compact JWE by hand with Node's AES-256-GCM (independent of the code under test). */
function openByHand(jwe: string, k: string): { iv: string; plaintext: string } {
    const [head, key, iv, ciphertext, tag] = jwe.split(".") as [string, string, string, string, string];
    expect(head).toBe(HEADER_SEGMENT);
    expect(key).toBe("");
    const decipher = createDecipheriv("aes-256-gcm", Buffer.from(k, "base64url"), Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(head, "ascii"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return { iv, plaintext: Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8") };
}

describe("WhisperPublisher: the request (laravel-mercure §7.2)", () => {
    it("POSTs the form body byte for byte to the hub URL without query or fragment, with the cookie and no header", async () => {
        const { publisher, http, errors } = setup({ hub: "https://app.test/.well-known/mercure?jwt=x#frag" });
        await expect(publisher.whisper(CHAT, "typing", { name: "Ann" })).resolves.toEqual({ kind: "sent" });
        expect(http.calls).toHaveLength(1);
        const [{ url, init }] = http.calls as [{ url: string; init: RequestInit }];
        expect(url).toBe(HUB);
        expect(init.method).toBe("POST");
        expect(init.credentials).toBe("include");
        // No custom header: the browser sets the form content type itself, a CORS "simple" request.
        expect(Object.keys(init).sort()).toEqual(["body", "credentials", "method", "signal"]);
        expect(init.body).toBeInstanceOf(URLSearchParams);
        expect(String(init.body)).toBe(CHAT_TYPING_BODY);
        expect(new Request(url, init).headers.get("content-type")).toBe("application/x-www-form-urlencoded;charset=UTF-8");
        expect(http.bodyReads()).toBe(1); // so that Node's fetch frees the connection
        expect(errors.list).toEqual([]);
    });

    it("puts the whisper topic and envelope of presence channels the same way", async () => {
        const { publisher, http } = setup();
        await publisher.whisper("presence-lobby", "moved", [1, "two"]);
        expect(fields(http.calls[0]!.init.body)).toEqual([
            ["topic", PREFIX + "whisper/presence-lobby"],
            ["data", `{"channels":["presence-lobby"],"event":"client-moved","payload":[1,"two"],"socket":"${OWN}"}`],
            ["private", "on"],
        ]);
    });

    it("seals on encrypted channels: the hub sees only channels and a JWE, sealed under the channel key with a fresh IV", async () => {
        const { publisher, http } = setup();
        await publisher.whisper(ROOM, "typing", { name: "Ann" });
        await publisher.whisper(ROOM, "typing", { name: "Ann" });
        const ivs: string[] = [];
        for (const call of http.calls) {
            const [topic, data, flag] = fields(call.init.body);
            expect(topic).toEqual(["topic", PREFIX + "whisper/private-encrypted-room.1"]);
            expect(flag).toEqual(["private", "on"]);
            const envelope = JSON.parse(data![1]) as { channels: unknown; data: string };
            expect(Object.keys(envelope)).toEqual(["channels", "data"]);
            expect(envelope.channels).toEqual([ROOM]);
            expect(data![1]).not.toContain("Ann");
            const opened = openByHand(envelope.data, JWKS[ROOM].k);
            expect(opened.plaintext).toBe(`{"event":"client-typing","payload":{"name":"Ann"},"socket":"${OWN}"}`);
            ivs.push(opened.iv);
        }
        expect(ivs[0]).not.toBe(ivs[1]); // 2^-96 to collide by chance
    });
});

describe("WhisperPublisher: order", () => {
    it("sends in the order whispers were made, even when the earlier one's seal is slow", async () => {
        const gate = deferred<string>();
        const seal = vi.fn(() => gate.promise);
        const { publisher, http } = setup({ crypto: { seal } });
        const first = publisher.whisper(ROOM, "sealed", 1);
        const second = publisher.whisper(CHAT, "plain", 2);
        while (seal.mock.calls.length === 0) await drain();
        await drain();
        expect(http.calls).toHaveLength(0); // the plain whisper waits behind the seal
        gate.resolve("h..i.c.t");
        await expect(Promise.all([first, second])).resolves.toEqual([{ kind: "sent" }, { kind: "sent" }]);
        expect(http.calls.map((call) => fields(call.init.body)[0]![1])).toEqual([
            PREFIX + "whisper/private-encrypted-room.1",
            PREFIX + "whisper/private-chat.1",
        ]);
    });

    it("starts the next POST only when the previous one was answered", async () => {
        const answer = deferred<number>();
        const { publisher, http } = setup({ replies: [answer.promise] });
        const first = publisher.whisper(CHAT, "one", 1);
        const second = publisher.whisper(CHAT, "two", 2);
        while (http.calls.length === 0) await drain();
        await drain();
        expect(http.calls).toHaveLength(1);
        answer.resolve(200);
        await Promise.all([first, second]);
        expect(http.calls.map((call) => JSON.parse(fields(call.init.body)[1]![1]).event)).toEqual(["client-one", "client-two"]);
    });
});

describe("WhisperPublisher: when nothing is sent", () => {
    it("reports whisper_disabled naming client_events and config/broadcasting.php, and makes no request", async () => {
        const { publisher, http, errors } = setup({ clientEvents: false });
        const result = await publisher.whisper(CHAT, "typing", {});
        expect(http.calls).toHaveLength(0);
        expect(result.kind).toBe("failed");
        expect(errors.codes()).toEqual([`${CHAT}:whisper_disabled`]);
        const error = errors.list[0]!.error;
        expect(error).toBeInstanceOf(MercureError);
        expect(error.channel).toBe(CHAT);
        expect(error.message).toContain("client_events");
        expect(error.message).toContain("config/broadcasting.php");
        expect(error.message).toContain(`"${CHAT}"`);
    });

    it("throws a clear unsupported error on a public channel, at once and without any request", () => {
        const { publisher, http } = setup({ joined: ["news"] });
        const thrown = (() => {
            try {
                publisher.whisper("news", "typing", {});
            } catch (error) {
                return error;
            }
            return null;
        })();
        expect(thrown).toBeInstanceOf(MercureError);
        expect((thrown as MercureError).code).toBe("unsupported");
        expect((thrown as MercureError).channel).toBe("news");
        expect((thrown as MercureError).message).toBe(
            'Public channel "news" cannot whisper: use a private, presence or encrypted private channel.',
        );
        expect(() => assertCanWhisper("news")).toThrow(MercureError);
        for (const guarded of [CHAT, ROOM, "presence-lobby"]) expect(() => assertCanWhisper(guarded)).not.toThrow();
        expect(http.calls).toHaveLength(0);
    });

    it("does nothing on a channel that is not joined", async () => {
        const { publisher, http, errors } = setup({ joined: [] });
        await expect(publisher.whisper(CHAT, "typing", {})).resolves.toEqual({ kind: "skipped" });
        expect(http.calls).toHaveLength(0);
        expect(errors.list).toEqual([]);
    });

    it("waits for a channel whose first auth is in flight, then sends", async () => {
        const pending = deferred<WhisperTarget | null>();
        const http = scriptedFetch();
        const { publisher } = setup({ target: () => pending.promise });
        const result = publisher.whisper(CHAT, "typing", {});
        await drain();
        pending.resolve({ hub: new URL(HUB), fetch: http.fetch, topicPrefix: PREFIX, clientEvents: true });
        await expect(result).resolves.toEqual({ kind: "sent" });
        expect(http.calls).toHaveLength(1);
    });

    it("reports a seal that fails (no key) as whisper_failed, and no WebCrypto as crypto_unavailable, without a request", async () => {
        const { publisher, http, errors } = setup();
        const keyless = new EncryptedChannels();
        const second = setup({ crypto: keyless });
        await publisher.whisper(ROOM, "typing", {}); // keyed: sent
        await second.publisher.whisper(ROOM, "typing", {});
        expect(second.errors.codes()).toEqual([`${ROOM}:whisper_failed`]);
        expect(second.errors.list[0]!.error.message).toContain("could not be encrypted");
        expect((second.errors.list[0]!.error.cause as Error).message).toBe("No JWK is known for this channel.");
        vi.stubGlobal("crypto", { getRandomValues: () => undefined });
        await publisher.whisper(ROOM, "typing", {});
        expect(errors.codes()).toEqual([`${ROOM}:crypto_unavailable`]);
        expect(http.calls).toHaveLength(1);
        expect(second.http.calls).toHaveLength(0);
    });
});

describe("WhisperPublisher: a 401 (expired cookie)", () => {
    it("re-authorizes once and retries once", async () => {
        const { publisher, http, errors, reauthorize } = setup({ replies: [401, 200] });
        await expect(publisher.whisper(CHAT, "typing", { name: "Ann" })).resolves.toEqual({ kind: "sent" });
        expect(reauthorize).toHaveBeenCalledTimes(1);
        expect(http.calls.map((call) => String(call.init.body))).toEqual([CHAT_TYPING_BODY, CHAT_TYPING_BODY]);
        expect(errors.list).toEqual([]);
    });

    it("reports the status when the retry gets 401 again, without a third attempt", async () => {
        const { publisher, http, errors, reauthorize } = setup({ replies: [401, 401, 200] });
        const result = await publisher.whisper(CHAT, "typing", {});
        expect(result.kind).toBe("failed");
        expect(reauthorize).toHaveBeenCalledTimes(1);
        expect(http.calls).toHaveLength(2);
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`]);
        expect(errors.list[0]!.error.status).toBe(401);
        expect(errors.list[0]!.error.message).toContain("HTTP 401");
    });

    it("does not retry when the re-auth failed, and reports the 401", async () => {
        const { publisher, http, errors } = setup({ replies: [401], reauthorize: async () => false });
        await publisher.whisper(CHAT, "typing", {});
        expect(http.calls).toHaveLength(1);
        expect(errors.list.map(({ error }) => error.status)).toEqual([401]);
    });

    it("says that the re-auth failed, not that the hub's keys differ, when the 401 was not retried", async () => {
        const { publisher, errors } = setup({ replies: [401], reauthorize: async () => false });
        await publisher.whisper(CHAT, "typing", {});
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`]);
        const { message, status } = errors.list[0]!.error;
        expect(status).toBe(401);
        expect(message).toContain(`"${CHAT}"`);
        expect(message).toContain("re-authorizing");
        expect(message).not.toContain("Laravel's key");
        // Only a 401 with a fresh cookie blames the hub's keys (laravel-mercure §10 "Same key").
        const again = setup({ replies: [401, 401] });
        await again.publisher.whisper(CHAT, "typing", {});
        expect(again.errors.list[0]!.error.message).toContain("Laravel's key");
    });

    it("does not retry, nor report, when the channel was evicted by the re-auth", async () => {
        const setupResult = setup({ replies: [401] });
        const { publisher, http, errors, joined } = setupResult;
        setupResult.reauthorize.mockImplementation(async () => {
            joined.delete(CHAT); // the new auth response denied it: the connector evicted it
            return true;
        });
        await expect(publisher.whisper(CHAT, "typing", {})).resolves.toEqual({ kind: "skipped" });
        expect(http.calls).toHaveLength(1);
        expect(errors.list).toEqual([]);
    });

    it("reports whisper_disabled without a retry when the re-auth turned client_events off", async () => {
        let clientEvents = true;
        const http = scriptedFetch(401);
        const { publisher, errors } = setup({
            target: () => ({ hub: new URL(HUB), fetch: http.fetch, topicPrefix: PREFIX, clientEvents }),
            reauthorize: async () => {
                clientEvents = false;
                return true;
            },
        });
        await publisher.whisper(CHAT, "typing", {});
        expect(http.calls).toHaveLength(1);
        expect(errors.codes()).toEqual([`${CHAT}:whisper_disabled`]);
    });
});

describe("WhisperPublisher: other failures go to the channel with what to fix", () => {
    it("400: the page origin is probably missing from the hub's publish_origins", async () => {
        const { publisher, errors } = setup({ replies: [400] });
        await publisher.whisper(CHAT, "typing", {});
        const error = errors.list[0]!.error;
        expect([error.code, error.status, error.channel]).toEqual(["whisper_failed", 400, CHAT]);
        expect(error.message).toBe(
            `The whisper on channel "${CHAT}" got HTTP 400: the page origin (https://app.test) is probably missing from the hub's publish_origins.`,
        );
    });

    it("a redirect the hub token's fetch did not follow (a 3xx, or a browser's status 0): says so and names `host`", async () => {
        for (const status of [0, 307]) {
            const { publisher, errors } = setup({ replies: [status] });
            await publisher.whisper(CHAT, "typing", {});
            expect(errors.list[0]!.error.message).toBe(`The whisper on channel "${CHAT}" was answered with a redirect, not followed: set \`host\` to the hub's own URL.`);
        }
    });

    it("403: insufficient scope, naming client_events and the channel's authorization", async () => {
        const { publisher, errors, reauthorize } = setup({ replies: [403] });
        await publisher.whisper(CHAT, "typing", {});
        const error = errors.list[0]!.error;
        expect([error.code, error.status]).toEqual(["whisper_failed", 403]);
        expect(error.message).toContain("insufficient scope");
        expect(error.message).toContain("client_events");
        expect(error.message).toContain("channel's authorization");
        expect(reauthorize).not.toHaveBeenCalled();
    });

    it("5xx: the status", async () => {
        const { publisher, errors } = setup({ replies: [502] });
        await publisher.whisper(CHAT, "typing", {});
        expect(errors.list[0]!.error.status).toBe(502);
        expect(errors.list[0]!.error.message).toContain("HTTP 502");
    });

    it("a network error (CORS, hub down): names CORS and the hub's reachability, keeps the cause", async () => {
        const cause = new TypeError("Failed to fetch");
        const { publisher, errors } = setup({ replies: [cause] });
        await publisher.whisper(CHAT, "typing", {});
        const error = errors.list[0]!.error;
        expect([error.code, error.status, error.cause]).toEqual(["whisper_failed", undefined, cause]);
        expect(error.message).toContain("CORS");
        expect(error.message).toContain("hub is up");
    });

    it("keeps sending when a host callback throws", async () => {
        const report = () => {
            throw new Error("connector bug");
        };
        const { publisher, http } = setup({ replies: [400, 200], report });
        await expect(publisher.whisper(CHAT, "one", 1)).rejects.toThrow("connector bug");
        await expect(publisher.whisper(CHAT, "two", 2)).resolves.toEqual({ kind: "sent" });
        expect(http.calls).toHaveLength(2);
    });
});

describe("WhisperPublisher: deadlines and disconnect", () => {
    it("gives up on a POST whose fetch ignores its signal and never answers, then sends the next one", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const never: FetchLike = () => new Promise(() => undefined);
        const http = scriptedFetch();
        let calls = 0;
        const { publisher, errors } = setup({
            timeout: 5_000,
            target: () => ({ hub: new URL(HUB), fetch: calls++ === 0 ? never : http.fetch, topicPrefix: PREFIX, clientEvents: true }),
        });
        const first = publisher.whisper(CHAT, "lost", 1);
        const second = publisher.whisper(CHAT, "next", 2);
        await vi.advanceTimersByTimeAsync(4_999);
        expect(errors.list).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        await expect(first).resolves.toMatchObject({ kind: "failed" });
        expect(errors.codes()).toEqual([`${CHAT}:whisper_failed`]);
        expect(errors.list[0]!.error.message).toContain("no answer from the hub");
        await expect(second).resolves.toEqual({ kind: "sent" });
    });

    it("aborts the signal of a POST that timed out, so a fetch that honours it stops", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        let signal: AbortSignal | undefined;
        const honours: FetchLike = (_, init) => {
            signal = init.signal ?? undefined;
            return new Promise(() => undefined);
        };
        const { publisher } = setup({ timeout: 1_000, target: () => ({ hub: new URL(HUB), fetch: honours, topicPrefix: PREFIX, clientEvents: true }) });
        const result = publisher.whisper(CHAT, "typing", {});
        await vi.advanceTimersByTimeAsync(1_000);
        await result;
        expect(signal?.aborted).toBe(true);
    });

    it("gives up waiting for a connector that never says where the channel stands: skipped, the queue moves on", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const http = scriptedFetch();
        let calls = 0;
        const { publisher } = setup({
            authWait: 30_000,
            target: () => (calls++ === 0 ? new Promise(() => undefined) : { hub: new URL(HUB), fetch: http.fetch, topicPrefix: PREFIX, clientEvents: true }),
        });
        const first = publisher.whisper(CHAT, "stuck", 1);
        const second = publisher.whisper(CHAT, "next", 2);
        await vi.advanceTimersByTimeAsync(30_000);
        await expect(first).resolves.toEqual({ kind: "skipped" });
        await expect(second).resolves.toEqual({ kind: "sent" });
        expect(http.calls).toHaveLength(1);
    });

    it("gives up on a re-auth that never settles and reports the 401", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const { publisher, http, errors } = setup({ replies: [401], authWait: 30_000, reauthorize: () => new Promise(() => undefined) });
        const result = publisher.whisper(CHAT, "typing", {});
        await vi.advanceTimersByTimeAsync(30_000);
        await expect(result).resolves.toMatchObject({ kind: "failed" });
        expect(errors.list.map(({ error }) => error.status)).toEqual([401]);
        expect(http.calls).toHaveLength(1);
    });

    it("clear() aborts the POST in flight and drops the queued whispers, silently; later whispers go out", async () => {
        const answer = deferred<number>();
        const { publisher, http, errors } = setup({ replies: [answer.promise] });
        const inFlight = publisher.whisper(CHAT, "one", 1);
        const queued = publisher.whisper(CHAT, "two", 2);
        while (http.calls.length === 0) await drain();
        publisher.clear();
        await expect(inFlight).resolves.toEqual({ kind: "aborted" });
        await expect(queued).resolves.toEqual({ kind: "aborted" });
        expect(http.calls[0]!.init.signal?.aborted).toBe(true);
        expect(http.calls).toHaveLength(1);
        await expect(publisher.whisper(CHAT, "three", 3)).resolves.toEqual({ kind: "sent" });
        expect(http.calls).toHaveLength(2);
        expect(errors.list).toEqual([]);
        answer.resolve(200);
    });
});
