import { describe, expect, it } from "vitest";
import { rawUrlDecode, rawUrlEncode } from "../../../src/topic/encode";

describe("rawUrlEncode (PHP rawurlencode)", () => {
    it.each([
        ["order/1 *'()!", "order%2F1%20%2A%27%28%29%21"], // server test vector
        ["room/1 !'()*", "room%2F1%20%21%27%28%29%2A"], // client test vector
        ["é~-_.", "%C3%A9~-_."],
        ["private-App.Models.User.42", "private-App.Models.User.42"],
        ["a+b=c&d;e%f#g?h:i@j", "a%2Bb%3Dc%26d%3Be%25f%23g%3Fh%3Ai%40j"],
        ["日本", "%E6%97%A5%E6%9C%AC"],
        ["😀", "%F0%9F%98%80"],
        ["", ""],
    ])("encodes %j as %j", (input, expected) => {
        expect(rawUrlEncode(input)).toBe(expected);
    });

    it("leaves exactly A-Z a-z 0-9 - _ . ~ unencoded", () => {
        for (let code = 0; code < 128; code++) {
            const char = String.fromCharCode(code);
            const unreserved = /[A-Za-z0-9\-_.~]/.test(char);
            expect(rawUrlEncode(char)).toBe(unreserved ? char : "%" + code.toString(16).toUpperCase().padStart(2, "0"));
        }
    });

    it("encodes a lone surrogate as U+FFFD instead of throwing", () => {
        expect(rawUrlEncode("a\uD800b")).toBe("a%EF%BF%BDb");
        expect(rawUrlEncode("\uDC00")).toBe("%EF%BF%BD");
    });

    it("keeps the surrogate pairs of a string that also has lone surrogates", () => {
        // A lone high surrogate before a pair, a lone low one after it, and two lone ones in reverse order.
        expect(rawUrlEncode("\uD800\uD83D\uDE00\uDE00\uDC00\uD800")).toBe("%EF%BF%BD%F0%9F%98%80%EF%BF%BD%EF%BF%BD%EF%BF%BD");
    });
});

describe("rawUrlDecode", () => {
    it("inverts rawUrlEncode, and returns null on invalid input", () => {
        for (const value of ["order/1 *'()!", "é~-_.", "日本😀"]) expect(rawUrlDecode(rawUrlEncode(value))).toBe(value);
        expect(rawUrlDecode("%E0%A4%A")).toBeNull();
    });
});
