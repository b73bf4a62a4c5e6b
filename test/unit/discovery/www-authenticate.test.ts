import { describe, expect, it } from "vitest";
import { bearerChallenge, parseChallenges } from "../../../src/discovery/www-authenticate";

const METADATA = "https://example.com/.well-known/oauth-protected-resource/.well-known/mercure";

describe("bearerChallenge()", () => {
    it("reads a bare challenge (no token was sent) and its resource_metadata", () => {
        expect(bearerChallenge(`Bearer resource_metadata="${METADATA}"`)).toEqual({
            error: null,
            errorDescription: null,
            resourceMetadata: METADATA,
            scope: null,
        });
    });

    it("reads the error, quoted or not, whatever the case of the scheme and the names", () => {
        expect(bearerChallenge(`Bearer error="invalid_token", resource_metadata="${METADATA}"`)?.error).toBe("invalid_token");
        expect(bearerChallenge("bearer ERROR=insufficient_scope, Scope=\"a b\"")).toMatchObject({ error: "insufficient_scope", scope: "a b" });
    });

    it("unescapes quoted values that hold commas and quotes", () => {
        expect(bearerChallenge('Bearer error="invalid_token", error_description="expired, \\"really\\""')?.errorDescription).toBe('expired, "really"');
    });

    it("finds the Bearer challenge among several, in one value or across values", () => {
        expect(bearerChallenge('Basic realm="a, b", Bearer error="invalid_token"')?.error).toBe("invalid_token");
        expect(bearerChallenge(['Basic realm="x"', 'Bearer error="insufficient_scope"'])?.error).toBe("insufficient_scope");
    });

    it("is null without a Bearer challenge", () => {
        expect(bearerChallenge(null)).toBeNull();
        expect(bearerChallenge("")).toBeNull();
        expect(bearerChallenge('Basic realm="x"')).toBeNull();
    });
});

describe("parseChallenges()", () => {
    it("tells token68 challenges from parameter lists and keeps the next challenge apart", () => {
        expect(parseChallenges('Negotiate abc+/==, Bearer realm="r", error=invalid_token, Basic')).toEqual([
            { scheme: "negotiate", token68: "abc+/==", params: {} },
            { scheme: "bearer", token68: null, params: { realm: "r", error: "invalid_token" } },
            { scheme: "basic", token68: null, params: {} },
        ]);
    });

    it("keeps the first occurrence of a repeated parameter", () => {
        expect(parseChallenges("Bearer error=a, error=b")[0]!.params["error"]).toBe("a");
    });
});
