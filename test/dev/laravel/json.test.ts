import { describe, expect, it } from "vitest";
import { phpJsonEncode } from "../../../src/dev/laravel";
import { phpPayload } from "../../../src/dev/laravel/json";

describe("Laravel JSON encoding", () => {
    it("escapes slashes and non-ASCII characters the way json_encode does", () => {
        expect(phpJsonEncode({ url: "https://a/b", name: "é€😀", event: "App\\Events\\X" })).toBe(
            '{"url":"https:\\/\\/a\\/b","name":"\\u00e9\\u20ac\\ud83d\\ude00","event":"App\\\\Events\\\\X"}',
        );
    });

    it("leaves ASCII, numbers, booleans and structure alone", () => {
        expect(phpJsonEncode({ a: [1, true, null, "<&'>"], b: {} })).toBe('{"a":[1,true,null,"<&\'>"],"b":{}}');
    });

    it("encodes a missing or empty payload as an empty PHP array", () => {
        expect(phpPayload(undefined)).toEqual([]);
        expect(phpPayload(null)).toEqual([]);
        expect(phpPayload({})).toEqual([]);
        expect(phpPayload({ a: 1 })).toEqual({ a: 1 });
        expect(phpPayload([1, 2])).toEqual([1, 2]);
    });
});
