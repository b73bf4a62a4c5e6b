import { createDecipheriv } from "node:crypto";
import { deflateRawSync } from "node:zlib";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decryptEnvelope, importChannelKey, JweRefusal, sealEnvelope, type JweRefusalReason } from "../../../src/crypto/jwe";
import { ENCRYPTER_A_JWK, flipFirst, HEADER_SEGMENT, JWKS, jwk, sealByHand, VECTOR_JWE, VECTOR_PLAINTEXT, withSegment } from "./fixtures";

const ROOM = JWKS["private-encrypted-room.1"];
const roomKey = () => importChannelKey(ROOM);

afterEach(() => {
    vi.restoreAllMocks();
});

/** The refusal of a decryption (a {@link JweRefusal}; anything else fails the test). */
async function refused(jwe: string, key: Promise<CryptoKey> = roomKey()): Promise<JweRefusal> {
    const error = await decryptEnvelope(jwe, await key).then(
        () => null,
        (e: unknown) => e,
    );
    expect(error, "the JWE must be refused").toBeInstanceOf(JweRefusal);
    return error as JweRefusal;
}

/** The reason a decryption was refused. */
async function refusal(jwe: string, key: Promise<CryptoKey> = roomKey()): Promise<JweRefusalReason> {
    return (await refused(jwe, key)).reason;
}

/** The reason a decryption was refused and, for `invalid`, the class of jose's error (its `code`), as `invalid:ERR_…`. */
async function refusalCode(jwe: string, key: Promise<CryptoKey> = roomKey()): Promise<string> {
    const error = await refused(jwe, key);
    return error.reason === "invalid" ? `invalid:${(error.cause as { code?: string }).code}` : error.reason;
}

/** Open a compact JWE with Node's own AES-256-GCM (independent of the code under test); returns the plaintext. */
function openByHand(jwe: string, k: string): string {
    const [head, , iv, ciphertext, tag] = jwe.split(".") as [string, string, string, string, string];
    const decipher = createDecipheriv("aes-256-gcm", Buffer.from(k, "base64url"), Buffer.from(iv, "base64url"));
    decipher.setAAD(Buffer.from(head, "ascii"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
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

    it("accepts a JWK without alg, use or key_ops, ignores ext, and limits the key to the key_ops it lists", async () => {
        await expect(importChannelKey({ kty: "oct", k: ROOM.k })).resolves.toBeDefined();
        await expect(importChannelKey({ kty: "oct", k: ROOM.k, alg: "A256GCM" })).resolves.toBeDefined();
        await expect(importChannelKey({ kty: "oct", k: ROOM.k, use: "enc" })).resolves.toBeDefined();
        const key = await importChannelKey({ ...ROOM, key_ops: ["decrypt", "encrypt"], ext: true });
        expect(key.extractable).toBe(false);
        expect((await decryptEnvelope(VECTOR_JWE, key)).event).toBe("MessageSent");
        const decryptOnly = await importChannelKey({ ...ROOM, key_ops: ["decrypt"] });
        expect([...decryptOnly.usages]).toEqual(["decrypt"]);
        expect((await decryptEnvelope(VECTOR_JWE, decryptOnly)).event).toBe("MessageSent");
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
        ["another use", { ...ROOM, use: "sig" }],
        ["for signing only (key_ops)", { ...ROOM, key_ops: ["sign"] }],
        ["for encrypting only (key_ops)", { ...ROOM, key_ops: ["encrypt"] }],
        ["with key_ops that are not a list", { ...ROOM, key_ops: "decrypt" }],
        ["with repeated key_ops", { ...ROOM, key_ops: ["decrypt", "decrypt"] }],
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

    it("decrypts with the key imported once: no message imports it again, each is one AES-GCM decryption", async () => {
        const key = await roomKey();
        const importKey = vi.spyOn(crypto.subtle, "importKey");
        const decrypt = vi.spyOn(crypto.subtle, "decrypt");
        for (let n = 0; n < 5; n++) expect((await decryptEnvelope(VECTOR_JWE, key)).event).toBe("MessageSent");
        expect(importKey).not.toHaveBeenCalled();
        expect(decrypt).toHaveBeenCalledTimes(5);
        expect(decrypt.mock.calls.every(([, used]) => used === key)).toBe(true);
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

    it("decrypts a correctly sealed JWE whose header is spelled otherwise (the AAD is the header segment as received)", async () => {
        const jwe = sealByHand(ROOM.k, '{"event":"E"}', '{"enc":"A256GCM", "alg":"dir"}');
        expect(jwe.split(".")[0]).not.toBe(HEADER_SEGMENT);
        expect(await decryptEnvelope(jwe, await roomKey())).toEqual({ event: "E", payload: undefined, socket: null });
    });

    describe("fails closed", () => {
        it("on another channel's key", async () => {
            expect(await refusal(VECTOR_JWE, importChannelKey(JWKS["private-encrypted-orders.1"]))).toBe("authentication");
        });

        it("on a tampered ciphertext", async () => {
            const segment = VECTOR_JWE.split(".")[3]!;
            expect(await refusal(withSegment(VECTOR_JWE, 3, flipFirst(segment)))).toBe("authentication");
        });

        it("on a tampered tag", async () => {
            const segment = VECTOR_JWE.split(".")[4]!;
            expect(await refusal(withSegment(VECTOR_JWE, 4, flipFirst(segment)))).toBe("authentication");
        });

        it("on a tampered IV", async () => {
            expect(await refusal(withSegment(VECTOR_JWE, 2, flipFirst(VECTOR_JWE.split(".")[2]!)))).toBe("authentication");
        });

        it("on a tampered header that still says dir / A256GCM (the header is the AAD)", async () => {
            const reordered = b64uJson('{"enc":"A256GCM","alg":"dir"}');
            expect(await refusal(withSegment(VECTOR_JWE, 0, reordered))).toBe("authentication");
        });

        it("on alg other than dir (or none), even when correctly sealed", async () => {
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"A256KW","enc":"A256GCM"}'))).toBe("invalid:ERR_JOSE_ALG_NOT_ALLOWED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"none","enc":"A256GCM"}'))).toBe("invalid:ERR_JOSE_ALG_NOT_ALLOWED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"enc":"A256GCM"}'))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on enc other than A256GCM (or none), even when correctly sealed", async () => {
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A128GCM"}'))).toBe("invalid:ERR_JOSE_ALG_NOT_ALLOWED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256CBC-HS512"}'))).toBe("invalid:ERR_JOSE_ALG_NOT_ALLOWED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir"}'))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on a zip header, even when correctly sealed and compressed", async () => {
            const jwe = sealByHand(ROOM.k, deflateRawSync('{"event":"E"}'), '{"alg":"dir","enc":"A256GCM","zip":"DEF"}');
            expect(await refusalCode(jwe)).toBe("invalid:ERR_JOSE_NOT_SUPPORTED");
            const other = sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256GCM","zip":"GZ"}');
            expect(await refusalCode(other)).toBe("invalid:ERR_JOSE_NOT_SUPPORTED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256GCM","zip":null}'))).toBe("invalid:ERR_JOSE_NOT_SUPPORTED");
        });

        it("on a crit header, even when correctly sealed (no critical extension is understood)", async () => {
            const jwe = sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256GCM","crit":["exp"],"exp":1}');
            expect(await refusalCode(jwe)).toBe("invalid:ERR_JOSE_NOT_SUPPORTED");
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', '{"alg":"dir","enc":"A256GCM","crit":[]}'))).toBe("invalid:ERR_JWE_INVALID");
        });

        it.each([
            ["not JSON", "alg=dir"],
            ["an array", '["dir","A256GCM"]'],
            ["null", "null"],
            ["a string", '"dir"'],
            ["empty", ""],
        ])("on a protected header that is %s, even when correctly sealed", async (_, header) => {
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', header))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on a protected header that is not UTF-8", async () => {
            const head = b64u(Uint8Array.of(0x7b, 0xff, 0x7d));
            expect(await refusalCode(withSegment(VECTOR_JWE, 0, head))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on a non-empty encrypted-key segment", async () => {
            expect(await refusalCode(withSegment(VECTOR_JWE, 1, "AAAA"))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on 4 or 6 segments", async () => {
            expect(await refusal(VECTOR_JWE.split(".").slice(0, 4).join("."))).toBe("compact");
            expect(await refusal(`${VECTOR_JWE}.AAAA`)).toBe("compact");
            expect(await refusal(`${HEADER_SEGMENT}..${VECTOR_JWE.split(".").slice(2).join("")}`)).toBe("compact");
            expect(await refusal("")).toBe("compact");
        });

        it.each([0, 1, 2, 3, 4])("on invalid base64url in segment %i", async (index) => {
            const segment = VECTOR_JWE.split(".")[index]!;
            // Padding, the plain-base64 characters, whitespace, a non-ASCII character; each anywhere in the segment.
            for (const bad of ["=", "+", "/", " ", "\n", "é"]) {
                expect(await refusal(withSegment(VECTOR_JWE, index, segment + bad)), JSON.stringify(bad)).toBe("compact");
                expect(await refusal(withSegment(VECTOR_JWE, index, bad + segment)), JSON.stringify(bad)).toBe("compact");
            }
        });

        it("on a segment of 4n + 1 characters (no whole byte)", async () => {
            const [, , iv] = VECTOR_JWE.split(".") as [string, string, string, string, string];
            expect(await refusalCode(withSegment(VECTOR_JWE, 2, iv + "A"))).toBe("invalid:ERR_JWE_INVALID"); // 17 characters
        });

        it("but opens a segment whose unused last bits are set: it decodes to the same authenticated bytes", async () => {
            // The tag is 22 characters: its last one carries 2 bits of the 16th byte and 4 unused bits. jose decodes
            // leniently there (as atob does), and AES-GCM still authenticates exactly the bytes that were sealed.
            const tag = VECTOR_JWE.split(".")[4]!;
            expect(tag).toHaveLength(22);
            const noisy = tag.slice(0, -1) + String.fromCharCode(tag.charCodeAt(21) + 1); // "w" → "x": a set unused bit
            expect(Buffer.from(noisy, "base64url")).toEqual(Buffer.from(tag, "base64url"));
            expect((await decryptEnvelope(withSegment(VECTOR_JWE, 4, noisy), await roomKey())).event).toBe("MessageSent");
        });

        it("on an IV that is not 12 bytes, even when correctly sealed with it", async () => {
            for (const length of [8, 16]) {
                const iv = Uint8Array.from({ length }, (_, i) => i);
                expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', undefined, iv)), `${length} bytes`).toBe("invalid:ERR_JWE_INVALID");
            }
            expect(await refusalCode(withSegment(VECTOR_JWE, 2, ""))).toBe("invalid:ERR_JWE_INVALID");
        });

        it("on a tag that is not 16 bytes, even when correctly sealed with it", async () => {
            expect(await refusalCode(sealByHand(ROOM.k, '{"event":"E"}', undefined, undefined, 12))).toBe("invalid:ERR_JWE_INVALID");
            expect(await refusalCode(withSegment(VECTOR_JWE, 4, VECTOR_JWE.split(".")[4]! + "AA"))).toBe("invalid:ERR_JWE_INVALID");
            expect(await refusalCode(withSegment(VECTOR_JWE, 4, ""))).toBe("invalid:ERR_JWE_INVALID");
        });

        it.each(['{"payload":{}}', '{"event":5}', '["event"]', '"event"', "null", "not json", ""])(
            "on a plaintext without a string event, or that is not a JSON object: %s",
            async (plaintext) => {
                expect(await refusal(sealByHand(ROOM.k, plaintext))).toBe("plaintext");
            },
        );

        it("on a plaintext that is not UTF-8", async () => {
            expect(await refusal(sealByHand(ROOM.k, Uint8Array.of(0x7b, 0xff, 0x7d)))).toBe("plaintext");
        });

        it("with one fixed message per reason, none of them echoing the input", async () => {
            const jwe = sealByHand(ROOM.k, '{"payload":"secret-payload"}');
            const error = (await decryptEnvelope(jwe, await roomKey()).catch((e: unknown) => e)) as JweRefusal;
            expect(error.message).toBe("The plaintext carries no broadcast envelope (UTF-8 JSON with a string event).");
            expect(error.name).toBe("JweRefusal");
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

    it("reproduces the §6.5 deterministic JWE exactly when the IV drawn is 000102…0b", async () => {
        const draw = vi.spyOn(crypto, "getRandomValues").mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
            (array as unknown as Uint8Array).forEach((_, i, bytes) => (bytes[i] = i));
            return array;
        });
        const sealed = await sealEnvelope(JSON.parse(VECTOR_PLAINTEXT) as object, await roomKey());
        expect(sealed).toBe(VECTOR_JWE);
        // One draw of a fresh 12-byte array per seal.
        expect(draw).toHaveBeenCalledTimes(1);
        expect((draw.mock.calls[0]![0] as Uint8Array).length).toBe(12);
    });

    it("round-trips under every §6.5 key, and Node's AES-256-GCM opens each sealed JWE", async () => {
        for (const value of [...Object.values(JWKS), ENCRYPTER_A_JWK]) {
            const key = await importChannelKey(value);
            // Plaintexts of every length modulo 3 (each base64url tail), with non-ASCII text.
            for (const text of ["", "é", "ab", "日本語のテキスト", "x".repeat(100)]) {
                const plaintext = { event: "client-typing", payload: { text }, socket: "s.1" };
                const sealed = await sealEnvelope(plaintext, key);
                expect(JSON.parse(openByHand(sealed, value.k))).toEqual(plaintext);
                expect(await decryptEnvelope(sealed, key)).toEqual(plaintext);
            }
        }
    });

    it("seals nothing another channel's key opens", async () => {
        const sealed = await sealEnvelope({ event: "client-x" }, await roomKey());
        expect(await refusal(sealed, importChannelKey(JWKS["private-encrypted-orders.1"]))).toBe("authentication");
    });
});

/** A JSON text in base64url. */
function b64uJson(text: string): string {
    return Buffer.from(text).toString("base64url");
}

/** Bytes in base64url. */
function b64u(bytes: Uint8Array): string {
    return Buffer.from(bytes).toString("base64url");
}
