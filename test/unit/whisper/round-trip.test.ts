import { describe, expect, it } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import { HubStream } from "../../../src/transport/hub-stream";
import type { FetchLike } from "../../../src/transport/platform";
import { WhisperPublisher, WhisperStreams, type WhisperTarget } from "../../../src/whisper";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { JWKS } from "../crypto/fixtures";
import { PREFIX } from "./helpers";

const HUB = new URL("https://app.test/.well-known/mercure");
const CHAT = "private-chat.1";
const ROOM = "private-encrypted-room.1";

/**
 * A hub in miniature: a whisper POST is fanned out to every open EventSource whose `match` is its topic
 * (as a Mercure hub does with exact matchers). Records every published `data` to check what it saw.
 */
function miniHub() {
    const EventSource = createFakeEventSource();
    const published: string[] = [];
    let id = 0;
    const fetch: FetchLike = async (_, init) => {
        const form = init.body as URLSearchParams;
        const topic = form.get("topic")!;
        const data = form.get("data")!;
        published.push(data);
        id++;
        for (const source of EventSource.live()) if (source.matches().includes(topic)) source.emitMessage(data, `urn:uuid:${id}`);
        return { status: 200, text: async () => `urn:uuid:${id}` };
    };
    return { EventSource, fetch, published };
}

/** One browser: a publisher and whisper streams sharing one socket id and one EncryptedChannels. */
function browser(hub: ReturnType<typeof miniHub>, socket: string) {
    const got: string[] = [];
    const errors: string[] = [];
    const crypto = new EncryptedChannels({ socketId: () => socket });
    crypto.setKeys([[ROOM, JWKS[ROOM]]], () => undefined);
    const target: WhisperTarget = { hub: HUB, fetch: hub.fetch, topicPrefix: PREFIX, clientEvents: true };
    const publisher = new WhisperPublisher(
        { target: () => target, reauthorize: async () => true, report: (channel, error) => void errors.push(`${channel}:${error.code}`) },
        { socketId: () => socket, crypto },
    );
    const streams = new WhisperStreams(
        {
            open: (url, channel, topic, handlers) => new HubStream(hub.EventSource, url, [channel], [topic], handlers),
            deliver: (channel, event, payload) => void got.push(`${channel}:${event}:${JSON.stringify(payload)}`),
            report: (channel, error) => void errors.push(`${channel}:${error.code}`),
            failed: () => undefined,
        },
        { socketId: () => socket, crypto },
    );
    streams.sync({ hub: HUB, topicPrefix: PREFIX, clientEvents: true, granted: [CHAT, ROOM] });
    streams.listening(CHAT, true);
    streams.listening(ROOM, true);
    return { publisher, streams, crypto, got, errors };
}

describe("whispers from one browser to another, through the same topics", () => {
    it("reach the other member and not the sender, on a private and on an encrypted channel; the hub sees only ciphertext there", async () => {
        const hub = miniHub();
        const ann = browser(hub, "ann.1");
        const bob = browser(hub, "bob.2");
        await ann.publisher.whisper(CHAT, "typing", { who: "Ann" });
        await ann.publisher.whisper(ROOM, "typing", { who: "Ann-secret" });
        await Promise.all([ann.crypto.settled(), bob.crypto.settled()]);
        expect(bob.got).toEqual([`${CHAT}:client-typing:{"who":"Ann"}`, `${ROOM}:client-typing:{"who":"Ann-secret"}`]);
        expect(ann.got).toEqual([]);
        expect(hub.published[1]).not.toContain("Ann-secret");
        expect(hub.published[1]).not.toContain("client-typing");
        expect([...ann.errors, ...bob.errors]).toEqual([]);
    });
});
