import { createDecipheriv } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decryptEnvelope, importChannelKey, sealEnvelope } from "../../../src/crypto/jwe";
import { ENCRYPTER_A_JWK, flipFirst, HEADER_SEGMENT, JWKS, jwk, sealByHand, VECTOR_JWE, withSegment } from "./fixtures";

const ROOM = JWKS["private-encrypted-room.1"];
const roomKey = () => importChannelKey(ROOM);

/** The reason a decryption was refused: jose's error code, or our own error's message. */
async function refusal(jwe: string, key: Promise<CryptoKey> = roomKey()): Promise<string> {
    const error = await decryptEnvelope(jwe, await key).then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
    );
    expect(error, "the JWE must be refused").not.toBeNull();
    return error!.code ?? error!.message;
}

describe("importChannelKey", () => {
    it("imports every §6.5 channel key as a non-extractable AES-256-GCM key for encrypt and decrypt", async () => {
        for (const value of [...Object.values(JWKS), ENCRYPTER_A_JWK]) {
            const key = await importChannelKey(value);
            expect(key.algorithm).toEqual({ name: "AES-GCM", length: 256 });
            expect(key.extractable).toBe(false);
            expect([...key.usages].sort()).toEqual(["decrypt", "encrypt"]);
        }
    });

    it("accepts a JWK without alg, and ignores key_ops and ext", async () => {
        await expect(importChannelKey({ kty: "oct", k: ROOM.k })).resolves.toBeDefined();
        const key = await importChannelKey({ ...ROOM, key_ops: ["sign"], ext: true });
        expect(key.extractable).toBe(false);
        expect((await decryptEnvelope(VECTOR_JWE, key)).event).toBe("MessageSent");
    });

    it.each([
        ["not an object", "x"],
        ["null", null],
        ["an array", [ROOM]],
        ["another kty", { ...ROOM, kty: "RSA" }],
        ["no k", { kty: "oct", alg: "A256GCM" }],
        ["a 31-byte k", jwk(ROOM.k.slice(0, 42))],
        ["a 33-byte k", jwk(ROOM.k + "AA")],
        ["a k in plain base64", jwk(Buffer.from(ROOM.k, "base64url").toString("base64"))],
        ["another alg", { ...ROOM, alg: "A128GCM" }],
    ])("refuses a JWK that is %s", async (_, value) => {
        await expect(importChannelKey(value)).rejects.toThrow();
    });
});

describe("decryptEnvelope", () => {
    it("decrypts the §6.5 deterministic JWE with the room.1 key", async () => {
        expect(await decryptEnvelope(VECTOR_JWE, await roomKey())).toEqual({
            event: "MessageSent",
            payload: { text: "hi" },
            socket: "abcd.1234",
        });
    });

    it("decrypts a JWE sealed by hand with Node's AES-256-GCM under each §6.5 key", async () => {
        for (const value of [...Object.values(JWKS), ENCRYPTER_A_JWK]) {
            const jwe = sealByHand(value.k, '{"event":"E","payload":[1]}');
            expect(await decryptEnvelope(jwe, await importChannelKey(value))).toEqual({ event: "E", payload: [1], socket: null });
        }
    });

    it("reads an absent or empty socket as null and keeps any JSON payload", async () => {
        const key = await roomKey();
        expect(await decryptEnvelope(sealByHand(ROOM.k, '{"event":"E","socket":""}'), key)).toEqual({ event: "E", payload: undefined, socket: null });
        expect(await decryptEnvelope(sealByHand(ROOM.k, '{"event":"E","payload":"s","socket":7}'), key)).toEqual({ event: "E", payload: "s", socket: null });
    });

    describe("fails closed", () => {
        it("on another channel's key", async () => {
            expect(await refusal(VECTOR_JWE, importChannelKey(JWKS["private-encrypted-orders.1"]))).toBe("ERR_JWE_DECRYPTION_FAILED");
        });

        it("on a tampered ciphertext", async () => {
            const segment = VECTOR_JWE.split(".")[3]!;
            expect(await refusal(withSegment(VECTOR_JWE, 3, flipFirst(segment)))).toBe("ERR_JWE_DECRYPTION_FAILED");
        });

        it("on a tampered tag", async () => {
            const segment = VECTOR_JWE.split(".")[4]!;
            expect(await refusal(withSegment(VECTOR_JWE, 4, flipFirst(segment)))).toBe("ERR_JWE_DECRYPTION_FAILED");
        });

        it("on a tampered IV", async () => {
            expect(await refusal(withSegment(VECTOR_JWE, 2, flipFirst(VECTOR_JWE.split(".")[2]!)))).toBe("ERR_JWE_DECRYPTION_FAILED");
        });

        it("on a tampered header that still says dir / A256GCM (the header is the AAD)", async () => {
            const reordered = b64uJson('{"enc":"A256GCM","alg":"dir"}');
            expect(await refusal(withSegment(VECTOR_JWE, 0, reordered))).toBe("ERR_JWE_DECRYPTION_FAILED");
        });

        it("on alg other than dir, even when correctly sealed", async () => {
            expect(await refusal(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"A256KW","enc":"A256GCM"}'))).toBe("ERR_JOSE_ALG_NOT_ALLOWED");
            expect(await refusal(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"none","enc":"A256GCM"}'))).toBe("ERR_JOSE_ALG_NOT_ALLOWED");
        });

        it("on enc other than A256GCM, even when correctly sealed", async () => {
            expect(await refusal(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A128GCM"}'))).toBe("ERR_JOSE_ALG_NOT_ALLOWED");
        });

        it("on a zip header, even when correctly sealed and compressed (jose itself would inflate it)", async () => {
            const jwe = sealByHand(ROOM.k, deflateRawSync('{"event":"E"}'), '{"alg":"dir","enc":"A256GCM","zip":"DEF"}');
            expect(await refusal(jwe)).toBe("ERR_JOSE_NOT_SUPPORTED");
            const other = sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256GCM","zip":"GZ"}');
            expect(await refusal(other)).toBe("ERR_JOSE_NOT_SUPPORTED");
        });

        it("on a non-empty encrypted-key segment", async () => {
            expect(await refusal(withSegment(VECTOR_JWE, 1, "AAAA"))).toBe("ERR_JWE_INVALID");
        });

        it("on 4 or 6 segments", async () => {
            expect(await refusal(VECTOR_JWE.split(".").slice(0, 4).join("."))).toBe("ERR_JWE_INVALID");
            expect(await refusal(`${VECTOR_JWE}.AAAA`)).toBe("ERR_JWE_INVALID");
            expect(await refusal(`${HEADER_SEGMENT}..${VECTOR_JWE.split(".").slice(2).join("")}`)).toBe("ERR_JWE_INVALID");
        });

        it("on a plaintext without a string event, or that is not a JSON object", async () => {
            for (const plaintext of ['{"payload":{}}', '{"event":5}', '["event"]', '"event"', "null", "not json"]) {
                await expect(decryptEnvelope(sealByHand(ROOM.k, plaintext), await roomKey())).rejects.toThrow();
            }
        });

        it("on a plaintext that is not UTF-8", async () => {
            await expect(decryptEnvelope(sealByHand(ROOM.k, Uint8Array.of(0x7b, 0xff, 0x7d)), await roomKey())).rejects.toThrow();
        });
    });
});

describe("sealEnvelope", () => {
    it("seals with the header {alg:dir, enc:A256GCM}, an empty key segment and a fresh IV, readable by Node's AES-GCM", async () => {
        const key = await roomKey();
        const plaintext = { event: "client-typing", payload: { who: "ann" }, socket: "s.1" };
        const first = await sealEnvelope(plaintext, key);
        const second = await sealEnvelope(plaintext, key);
        const [head, encryptedKey, iv, ciphertext, tag] = first.split(".") as [string, string, string, string, string];
        expect(head).toBe(HEADER_SEGMENT);
        expect(encryptedKey).toBe("");
        expect(Buffer.from(iv, "base64url")).toHaveLength(12);
        expect(second.split(".")[2]).not.toBe(iv); // 2^-96 to collide by chance

        const decipher = createDecipheriv("aes-256-gcm", Buffer.from(ROOM.k, "base64url"), Buffer.from(iv, "base64url"));
        decipher.setAAD(Buffer.from(head, "ascii"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        const opened = Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
        expect(JSON.parse(opened)).toEqual(plaintext);
        expect(await decryptEnvelope(second, key)).toEqual(plaintext);
    });
});

/** A JSON text in base64url. */
function b64uJson(text: string): string {
    return Buffer.from(text).toString("base64url");
}
