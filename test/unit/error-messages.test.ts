import { describe, expect, it } from "vitest";
import { authDenied } from "../../src/error-messages";

describe("the auth_denied message", () => {
    it("names both causes Laravel denies a channel for: nobody logged in, or the channel callback refusing", () => {
        const error = authDenied("private-orders.1");
        expect([error.code, error.channel, error.status]).toEqual(["auth_denied", "private-orders.1", undefined]);
        expect(error.message).toContain('channel "private-orders.1"');
        expect(error.message).toContain("a user is logged in");
        expect(error.message).toContain("routes/channels.php");
    });
});
