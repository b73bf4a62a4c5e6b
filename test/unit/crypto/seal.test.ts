import { createDecipheriv } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EncryptedChannels, loadCrypto } from "../../../src/crypto";
import { MercureError } from "../../../src/errors";
import { HEADER_SEGMENT, JWKS } from "./fixtures";

const ROOM = "private-encrypted-room.1";
const noFailures = () => {
    throw new Error("no channel error expected");
};

afterEach(() => {
    vi.unstubAllGlobals();
});

/** Open a compact JWE by hand with Node's AES-256-GCM (independent of the code under test). */
function openByHand(jwe: string, k: string): { iv: string; plaintext: string } {
    const [head, key, iv, ciphertext, tag] = jwe.split(".") as [string, string, string, string, string];
    expect(head).toBe(HEADER_SEGMENT);
    expect(key).toBe("");
    const decipher = createDecipheriv("aes-256-gcm", Buffer.from(k, "base64url"), Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(head, "ascii"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    return { iv, plaintext };
}

describe("EncryptedChannels.seal", () => {
    it("seals under the channel's key from the auth response, with a fresh 12-byte IV every time", async () => {
        const channels = new EncryptedChannels();
        channels.setKeys([[ROOM, JWKS[ROOM]]], noFailures);
        const plaintext = { event: "client-typing", payload: { typing: true }, socket: "me.1" };
        const first = openByHand(await channels.seal(ROOM, plaintext), JWKS[ROOM].k);
        const second = openByHand(await channels.seal(ROOM, plaintext), JWKS[ROOM].k);
        expect(first.plaintext).toBe('{"event":"client-typing","payload":{"typing":true},"socket":"me.1"}');
        expect(second.plaintext).toBe(first.plaintext);
        expect(Buffer.from(first.iv, "base64url")).toHaveLength(12);
        expect(second.iv).not.toBe(first.iv);
    });

    it("rejects for a channel without a key, and for one dropped since (left)", async () => {
        const channels = new EncryptedChannels();
        await expect(channels.seal(ROOM, { event: "client-x" })).rejects.toThrow("No JWK is known for this channel.");
        channels.setKeys([[ROOM, JWKS[ROOM]]], noFailures);
        channels.drop(ROOM);
        await expect(channels.seal(ROOM, { event: "client-x" })).rejects.toThrow("No JWK is known for this channel.");
    });

    it("rejects with the import's reason when the channel's JWK is malformed", async () => {
        const channels = new EncryptedChannels();
        channels.setKeys([[ROOM, { ...JWKS[ROOM], kty: "RSA" }]], noFailures);
        await expect(channels.seal(ROOM, { event: "client-x" })).rejects.toThrow("The JWK is not a symmetric (oct) key.");
    });

    it("rejects with crypto_unavailable where WebCrypto is missing, without loading the JWE chunk", async () => {
        const load = vi.fn(loadCrypto);
        const channels = new EncryptedChannels({ load });
        vi.stubGlobal("crypto", { getRandomValues: () => undefined });
        const error = await channels.seal(ROOM, { event: "client-x" }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MercureError);
        expect((error as MercureError).code).toBe("crypto_unavailable");
        expect((error as MercureError).channel).toBe(ROOM);
        expect(load).not.toHaveBeenCalled();
    });
});
