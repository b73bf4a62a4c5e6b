import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base64UrlDecode, base64UrlEncode } from "../../../src/dev/jwt/jwt";
import {
    channelJwk,
    deriveChannelKey,
    JWE_PROTECTED_HEADER,
    LaravelDevError,
    openJwe,
    sealJwe,
} from "../../../src/dev/laravel";

const sha256 = (text: string): Uint8Array => new Uint8Array(createHash("sha256").update(text).digest());
const E2E_KEY = sha256("mercure-e2e-test-key");
const ENCRYPTER_KEY = sha256("mercure-encrypter-test-key");

// [spec] laravel-mercure §6.5 test vectors.
const KEY_TABLE: Array<[Uint8Array, string, string]> = [
    [E2E_KEY, "private-encrypted-orders.1", "_krVFJmDXMqUC2MJsPo6mWlCfgj2aj3NZ5FI5NCVfDE"],
    [E2E_KEY, "private-encrypted-room.1", "zbrTANhmpD0YGFr7V0TtXWAe0i3rThfOowUuGBsoyNM"],
    [E2E_KEY, "private-encrypted-a", "AJiGp4LbTrTTzjNlvFSFfr-dnyyItVDVS6OI5uKDWsA"],
    [E2E_KEY, "private-encrypted-b", "uIJcHAjV9m6MTfWDW6h07axZjta91FiQlTwke1DcTSY"],
    [ENCRYPTER_KEY, "private-encrypted-a", "KxhqwWdo1kQBOjRy7llMeWjHcxywa-LdE2wgKcUw3ts"],
];
const VECTOR_IV = Uint8Array.from(Buffer.from("000102030405060708090a0b", "hex"));
const VECTOR_PLAINTEXT = '{"event":"MessageSent","payload":{"text":"hi"},"socket":"abcd.1234"}';
const VECTOR_JWE =
    "eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAECAwQFBgcICQoL.sfZ2hzdSMmxMvWqxvtNcffVoKHj34TqAvFH6BeWESxLKCXnTHCu0oCX69wAfftd3VDEXt4cKn-RTs7zTo5aM8qMK3P0.mP0tlpD4dQGCaigpT0hlSw";

describe("channel key derivation", () => {
    it("uses the master keys the spec names", () => {
        expect(Buffer.from(E2E_KEY).toString("hex")).toBe("a1ca5e63a916874e7e864f7856af98bc0d05ccac2076a2e68c67f5f4de5e71e8");
        expect(Buffer.from(E2E_KEY).toString("base64")).toBe("ocpeY6kWh05+hk94Vq+YvA0FzKwgdqLmjGf19N5eceg=");
        expect(Buffer.from(ENCRYPTER_KEY).toString("hex")).toBe(
            "8e0cf5566483329f1221045126aec56012f778826ff4bb97d0a1c81681ac8355",
        );
    });

    it.each(KEY_TABLE)("derives the §6.5 key for row %#", (master, channel, k) => {
        const key = deriveChannelKey(master, channel);
        expect(key).toHaveLength(32);
        expect(base64UrlEncode(key)).toBe(k);
    });

    it("gives every channel its own key from the full prefixed name", () => {
        expect(base64UrlEncode(deriveChannelKey(E2E_KEY, "orders.1"))).not.toBe(KEY_TABLE[0]?.[2]);
    });

    it("wraps a key in a JWK with exactly kty, k, alg and use", () => {
        const jwk = channelJwk(deriveChannelKey(E2E_KEY, "private-encrypted-orders.1"));
        expect(JSON.stringify(jwk)).toBe(
            '{"kty":"oct","k":"_krVFJmDXMqUC2MJsPo6mWlCfgj2aj3NZ5FI5NCVfDE","alg":"A256GCM","use":"enc"}',
        );
        expect(jwk.k).toHaveLength(43);
    });
});

describe("compact JWE dir/A256GCM", () => {
    const roomKey = deriveChannelKey(E2E_KEY, "private-encrypted-room.1");

    it("has the protected header both sides produce", () => {
        expect(JWE_PROTECTED_HEADER).toBe("eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0");
    });

    it("opens the deterministic §6.5 vector", () => {
        expect(openJwe(roomKey, VECTOR_JWE)).toBe(VECTOR_PLAINTEXT);
    });

    it("reproduces the §6.5 vector byte for byte with its fixed IV", () => {
        expect(sealJwe(roomKey, VECTOR_PLAINTEXT, VECTOR_IV)).toBe(VECTOR_JWE);
    });

    it("seals with a fresh random 12-byte IV by default and round-trips UTF-8", () => {
        const a = sealJwe(roomKey, '{"event":"é"}');
        const b = sealJwe(roomKey, '{"event":"é"}');
        expect(a).not.toBe(b);
        const segments = a.split(".");
        expect(segments).toHaveLength(5);
        expect(segments[1]).toBe("");
        expect(base64UrlDecode(segments[2] as string)).toHaveLength(12);
        expect(base64UrlDecode(segments[4] as string)).toHaveLength(16);
        expect(openJwe(roomKey, a)).toBe('{"event":"é"}');
    });

    it("refuses the wrong key, a tampered ciphertext, a tampered header and malformed input", () => {
        const otherKey = deriveChannelKey(E2E_KEY, "private-encrypted-orders.1");
        const expectInvalid = (key: Uint8Array, jwe: string, message: RegExp) => {
            let caught: unknown;
            try {
                openJwe(key, jwe);
            } catch (error) {
                caught = error;
            }
            expect(caught).toBeInstanceOf(LaravelDevError);
            expect((caught as LaravelDevError).code).toBe("invalid_jwe");
            expect((caught as LaravelDevError).message).toMatch(message);
        };
        expectInvalid(otherKey, VECTOR_JWE, /failed authentication/);
        const parts = VECTOR_JWE.split(".");
        const tampered = [...parts];
        tampered[3] = `A${(parts[3] as string).slice(1)}`;
        expectInvalid(roomKey, tampered.join("."), /failed authentication/);
        // A different but valid header changes the AAD, so authentication fails.
        const reheadered = [base64UrlEncode('{"enc":"A256GCM","alg":"dir"}'), ...parts.slice(1)];
        expectInvalid(roomKey, reheadered.join("."), /failed authentication/);
        expectInvalid(roomKey, [base64UrlEncode('{"alg":"A256KW","enc":"A256GCM"}'), ...parts.slice(1)].join("."), /unsupported/);
        expectInvalid(roomKey, parts.slice(0, 4).join("."), /not a direct-encryption compact JWE/);
        expectInvalid(roomKey, [parts[0], "x", ...parts.slice(2)].join("."), /not a direct-encryption compact JWE/);
        expectInvalid(roomKey, [parts[0], "", "AAEC", parts[3], parts[4]].join("."), /malformed/);
    });
});
