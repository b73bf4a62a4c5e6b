import { describe, expect, it } from "vitest";
import { BroadcastingApp, LaravelDevError, type BroadcastingAppOptions } from "../../../src/dev/laravel";
import { JWT_KEY } from "./helpers";

const base: BroadcastingAppOptions = { hubUrl: "http://127.0.0.1:3000/.well-known/mercure", jwtKey: JWT_KEY };

describe("options", () => {
    it.each([
        ["a JWT key shorter than 32 bytes", { jwtKey: "short" }, /jwtKey/],
        ["a zero lifetime", { expiresIn: 0 }, /expiresIn/],
        ["a fractional lifetime", { expiresIn: 1.5 }, /expiresIn/],
        ["an encryption key of the wrong length", { encryptionKey: Buffer.alloc(16).toString("base64") }, /encryptionKey/],
        ["an encryption key that is not base64", { encryptionKey: "base64:not base64!" }, /encryptionKey/],
    ])("refuses %s at construction", (_label, override, message) => {
        expect(() => new BroadcastingApp({ ...base, ...override })).toThrow(LaravelDevError);
        expect(() => new BroadcastingApp({ ...base, ...override })).toThrow(message);
    });

    it("accepts a 32-byte encryption key with or without the base64: prefix", () => {
        const key = Buffer.alloc(32, 7).toString("base64");
        expect(() => new BroadcastingApp({ ...base, encryptionKey: key })).not.toThrow();
        expect(() => new BroadcastingApp({ ...base, encryptionKey: `base64:${key}` })).not.toThrow();
    });
});
