import { describe, expect, it } from "vitest";
import { readTokenClaims } from "../../../src/discovery/token-claims";
import { unsignedToken } from "./fake-hub";

describe("readTokenClaims()", () => {
    it("reads iss, aud, exp, nbf and typ without verifying", () => {
        const token = unsignedToken({ iss: "https://app.test", aud: "https://app.test/.well-known/mercure", exp: 1_900_000_000, nbf: 1_800_000_000, name: "Zoë" });
        expect(readTokenClaims(token)).toEqual({
            issuer: "https://app.test",
            audiences: ["https://app.test/.well-known/mercure"],
            expiresAt: 1_900_000_000_000,
            notBefore: 1_800_000_000_000,
            type: "at+jwt",
        });
    });

    it("reads an audience list and tolerates missing claims", () => {
        expect(readTokenClaims(unsignedToken({ aud: ["a", 1, "b"] }, { alg: "HS256" }))).toEqual({ issuer: null, audiences: ["a", "b"], expiresAt: null, notBefore: null, type: null });
    });

    it("is null for anything that is not a compact JWS with JSON objects", () => {
        expect(readTokenClaims("not-a-token")).toBeNull();
        expect(readTokenClaims("a.b")).toBeNull();
        expect(readTokenClaims("e30.W10.c2ln")).toBeNull(); // claims are an array
        expect(readTokenClaims("e30.!!!.c2ln")).toBeNull();
    });
});
