import { describe, expect, it } from "vitest";
import { compilePattern } from "../../src/testing/memory-hub";

describe("the in-memory hub's URL patterns", () => {
    it("matches the connector's presence matcher literally, one segment per :name", () => {
        const pattern = compilePattern("/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1/:subscriber")!;
        expect(pattern.test("/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1/urn%3Auuid%3A1")).toBe(true);
        // The dot is literal: presence-roomX1 is another channel.
        expect(pattern.test("/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-roomX1/urn%3Auuid%3A1")).toBe(false);
        expect(pattern.test("/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1/a/b")).toBe(false);
    });

    it("refuses what the connector never writes (wildcards, groups, regular expressions): such a matcher matches nothing", () => {
        for (const pattern of ["/a/*", "/a/(.*)", "/a{/:b}?", "/a/:b+"]) expect(compilePattern(pattern), pattern).toBeNull();
    });
});
