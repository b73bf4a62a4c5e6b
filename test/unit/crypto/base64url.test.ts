import { describe, expect, it } from "vitest";
import { decodeBase64url, encodeBase64url } from "../../../src/crypto/base64url";

/** `length` fixed bytes covering every byte value (deterministic, no random data). */
function bytes(length: number): Uint8Array {
    return Uint8Array.from({ length }, (_, i) => (i * 167 + 13) & 0xff);
}

describe("base64url", () => {
    it("encodes as Node's base64url (no padding) for every length up to 70, and decodes back", () => {
        for (let length = 0; length <= 70; length++) {
            const input = bytes(length);
            const text = encodeBase64url(input);
            expect(text).toBe(Buffer.from(input).toString("base64url"));
            expect(decodeBase64url(text)).toEqual(input);
        }
    });

    it("decodes all 64 characters of the alphabet", () => {
        const text = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        expect(Buffer.from(decodeBase64url(text)!)).toEqual(Buffer.from(text, "base64url"));
    });

    it.each([
        ["padding", "AAE="],
        ["plain base64's +", "A+AA"],
        ["plain base64's /", "A/AA"],
        ["whitespace", "AA AA"],
        ["a non-ASCII character", "AAé"],
        ["a character past U+00FF", "AA\u0141A"],
        ["4n + 1 characters", "AAAAA"],
        ["non-zero unused bits after 1 byte", "AB"],
        ["non-zero unused bits after 2 bytes", "AAB"],
    ])("refuses %s", (_, text) => {
        expect(decodeBase64url(text)).toBeUndefined();
    });
});
