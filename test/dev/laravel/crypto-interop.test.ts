import { createCipheriv, createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EncryptedChannels } from "../../../src/crypto";
import { decryptEnvelope, importChannelKey, sealEnvelope } from "../../../src/crypto/jwe";
import { BroadcastingApp, channelJwk, deriveChannelKey, openJwe, sealJwe } from "../../../src/dev/laravel";
import type { MercureError } from "../../../src/errors";
import { JWT_KEY, postAuth, serveApp, startFakeHub, type FakeHub, type Started } from "./helpers";

// The client's crypto module against the dev server's encrypter (src/dev/laravel/encrypter.ts) and
// against Node's own AES-256-GCM: three independent implementations of laravel-mercure §6.3.

const MASTER = createHash("sha256").update("mercure-e2e-test-key").digest();
const ROOM = "private-encrypted-room.1";
const ORDERS = "private-encrypted-orders.1";
const VECTOR_JWE =
    "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAECAwQFBgcICQoL.sfZ2hzdSMmxMvWqxvtNcffVoKHj34TqAvFH6BeWESxLKCXnTHCu0oCX69wAfftd3VDEXt4cKn-RTs7zTo5aM8qMK3P0.mP0tlpD4dQGCaigpT0hlSw";
const VECTOR_PLAINTEXT = '{"event":"MessageSent","payload":{"text":"hi"},"socket":"abcd.1234"}';

/** Decrypt through the connector-facing queue, as the connector will: returns what it delivered or failed with. */
async function throughQueue(channel: string, jwk: unknown, jwe: string): Promise<string> {
    const channels = new EncryptedChannels();
    const results: string[] = [];
    channels.setKeys([[channel, jwk]], () => undefined);
    channels.enqueue(
        channel,
        jwe,
        (event, payload, socket) => results.push(`${event} ${JSON.stringify(payload)} ${socket}`),
        (error: MercureError) => results.push(error.code),
    );
    await channels.settled();
    return results.join("|");
}

describe("the dev server's encrypter and the client's crypto module", () => {
    it("agree on the §6.5 vector: the dev encrypter seals it byte for byte, the client decrypts it", async () => {
        const key = deriveChannelKey(MASTER, ROOM);
        expect(sealJwe(key, VECTOR_PLAINTEXT, Uint8Array.from(Buffer.from("000102030405060708090a0b", "hex")))).toBe(VECTOR_JWE);
        expect(await throughQueue(ROOM, channelJwk(key), VECTOR_JWE)).toBe('MessageSent {"text":"hi"} abcd.1234');
    });

    it("a JWE the dev encrypter seals with a random IV decrypts with the client module and the dev JWK", async () => {
        const key = deriveChannelKey(MASTER, ROOM);
        const jwe = sealJwe(key, '{"event":"App\\\\Events\\\\Sent","payload":{"n":1}}');
        expect(await throughQueue(ROOM, channelJwk(key), jwe)).toBe('App\\Events\\Sent {"n":1} null');
        // ...and not with another channel's key.
        expect(await throughQueue(ROOM, channelJwk(deriveChannelKey(MASTER, ORDERS)), jwe)).toBe("decrypt_failed");
    });

    it("a whisper sealed by the client opens with the dev encrypter", async () => {
        const key = deriveChannelKey(MASTER, ROOM);
        const whisper = { event: "client-typing", payload: { name: "Ann" }, socket: "abcd.1234" };
        const jwe = await sealEnvelope(whisper, await importChannelKey(channelJwk(key)));
        expect(openJwe(key, jwe)).toBe(JSON.stringify(whisper));
        expect(() => openJwe(deriveChannelKey(MASTER, ORDERS), jwe)).toThrow();
    });
});

describe("Node's own AES-256-GCM and the client's crypto module", () => {
    it("a compact JWE built by hand with node:crypto decrypts", async () => {
        const key = deriveChannelKey(MASTER, ORDERS);
        const header = Buffer.from('{"alg":"dir","enc":"A256GCM"}').toString("base64url");
        const iv = Buffer.from("0b0a09080706050403020100", "hex");
        const cipher = createCipheriv("aes-256-gcm", key, iv);
        cipher.setAAD(Buffer.from(header, "ascii"));
        const ciphertext = Buffer.concat([cipher.update('{"event":"OrderShipped","payload":{"id":1},"socket":"x.1"}', "utf8"), cipher.final()]);
        const jwe = [header, "", iv.toString("base64url"), ciphertext.toString("base64url"), cipher.getAuthTag().toString("base64url")].join(".");
        expect(await decryptEnvelope(jwe, await importChannelKey(channelJwk(key)))).toEqual({ event: "OrderShipped", payload: { id: 1 }, socket: "x.1" });
        expect(await throughQueue(ORDERS, channelJwk(key), jwe)).toBe('OrderShipped {"id":1} x.1');
    });
});

describe("a broadcast through the dev app", () => {
    let hub: FakeHub;
    let server: Started | undefined;
    beforeEach(async () => {
        hub = await startFakeHub();
    });
    afterEach(async () => {
        await server?.close();
        server = undefined;
        await hub.close();
    });

    it("decrypts with the JWK the dev auth endpoint hands out, exactly as the connector will receive both", async () => {
        const app = new BroadcastingApp({
            hubUrl: () => `${hub.url}/.well-known/mercure`,
            jwtKey: JWT_KEY,
            encryptionKey: MASTER.toString("base64"),
            users: [{ id: 42, name: "Ann" }],
        }).channel("room.{id}", () => true);
        server = await serveApp(app);
        const auth = await postAuth(server.url, [ROOM], { Cookie: "dev_user=42" });
        const grant = (JSON.parse(auth.body) as { channel_names: Array<{ name: string; jwk: unknown }> }).channel_names[0]!;
        expect(grant.name).toBe(ROOM);

        await app.broadcast({ channels: [ROOM], event: "MessageSent", payload: { text: "hello" }, socket: "abcd.1234" });
        const jwe = (JSON.parse(hub.requests[0]!.form.get("data") as string) as { data: string }).data;
        expect(await throughQueue(ROOM, grant.jwk, jwe)).toBe('MessageSent {"text":"hello"} abcd.1234');
    });
});
