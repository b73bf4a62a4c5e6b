import { describe, expect, it } from "vitest";
import { channelTopic, DEFAULT_TOPIC_PREFIX, presencePattern, whisperTopic } from "../../../src/dev/laravel";

const P = DEFAULT_TOPIC_PREFIX;

describe("topics", () => {
    it("are the Laravel side's own, and agree with the connector's topic functions (their vectors: test/unit/topic)", async () => {
        const client = await import("../../../src/topic/topics");
        expect(channelTopic).not.toBe(client.channelTopic);
        for (const prefix of [P, "", null]) {
            for (const name of ["news", "private-room/1", "presence-a*(b)", "order/1 *'()!", "ünïcödé €", "private-encrypted-x"]) {
                expect(channelTopic(prefix, name)).toBe(client.channelTopic(prefix, name));
                expect(whisperTopic(prefix, name)).toBe(client.whisperTopic(prefix, name));
            }
        }
        expect(channelTopic(P, "order/1 *'()!")).toBe("https://laravel.alt/echo/channel/order%2F1%20%2A%27%28%29%21");
    });

    it("uses bare names and whisper/<enc> for a legacy server without a prefix", () => {
        expect(channelTopic(null, "private-room/1")).toBe("private-room/1");
        expect(whisperTopic(null, "private-room/1")).toBe("whisper/private-room%2F1");
        expect(presencePattern("/.well-known/mercure", null, "presence-lobby")).toBe(
            "/.well-known/mercure/subscriptions/:match_type/presence-lobby{/:subscriber}?",
        );
    });

    it("builds the presence URL pattern from the public URL path and the encoded channel topic", () => {
        expect(presencePattern("/.well-known/mercure", P, "presence-room.1")).toBe(
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1{/:subscriber}?",
        );
        // The whole topic is encoded again, so URLPattern-special characters stay literal.
        expect(presencePattern("/hub", P, "presence-a*(b)")).toBe(
            "/hub/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-a%252A%2528b%2529{/:subscriber}?",
        );
        // The path is taken verbatim, as Laravel's sprintf does: a trailing slash stays.
        expect(presencePattern("/hub/", P, "presence-a")).toMatch(/^\/hub\/\/subscriptions\/:match_type\//);
    });
});
