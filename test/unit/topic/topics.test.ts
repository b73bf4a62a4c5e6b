import { describe, expect, it } from "vitest";
import { buildSubscribeUrl } from "../../../src/topic/subscribe-url";
import { channelTopic, whisperTopic } from "../../../src/topic/topics";

const P = "https://laravel.alt/echo/";

describe("topics", () => {
    it("build channel and whisper topics from the server's prefix", () => {
        expect(channelTopic(P, "private-room.1")).toBe("https://laravel.alt/echo/channel/private-room.1");
        expect(channelTopic(P, "order/1 *'()!")).toBe("https://laravel.alt/echo/channel/order%2F1%20%2A%27%28%29%21");
        expect(whisperTopic(P, "presence-room.1")).toBe("https://laravel.alt/echo/whisper/presence-room.1");
    });

    it("use bare names in legacy mode", () => {
        expect(channelTopic(null, "private-a b")).toBe("private-a b");
        expect(whisperTopic(null, "private-a b")).toBe("whisper/private-a%20b");
        expect(channelTopic("", "a b")).toBe("channel/a%20b"); // an empty prefix is still a prefix
    });
});

describe("buildSubscribeUrl", () => {
    it("replaces the query with match parameters, patterns and the cursor, URLSearchParams-encoded", () => {
        const url = buildSubscribeUrl(new URL("https://h.test/.well-known/mercure?old=1#x"), {
            topics: [P + "channel/a%2Fb", "plain & = +"],
            patterns: ["/.well-known/mercure/subscriptions/:match_type/x/:subscriber"],
            lastEventId: "urn:uuid:1",
        });
        expect(url).toBe(
            "https://h.test/.well-known/mercure?match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fa%252Fb&match=plain+%26+%3D+%2B" +
                "&match_urlpattern=%2F.well-known%2Fmercure%2Fsubscriptions%2F%3Amatch_type%2Fx%2F%3Asubscriber&last_event_id=urn%3Auuid%3A1",
        );
        const parsed = new URL(url).searchParams;
        expect(parsed.getAll("match")).toEqual([P + "channel/a%2Fb", "plain & = +"]);
    });

    it("omits last_event_id without a cursor", () => {
        expect(buildSubscribeUrl(new URL("https://h.test/hub"), { topics: ["t"], lastEventId: null })).toBe("https://h.test/hub?match=t");
    });
});
