import { describe, expect, it } from "vitest";
import { compileMatcher } from "../../../src/dev/hub/matchers";
import { subscriptionTopic } from "../../../src/dev/hub/subscriptions";
import { presencePattern, snapshotUrl } from "../../../src/topic/presence-pattern";
import { buildSubscribeUrl } from "../../../src/topic/subscribe-url";
import { channelTopic } from "../../../src/topic/topics";

const P = "https://laravel.alt/echo/";
const HUB = new URL("https://example.com/.well-known/mercure");

describe("presence patterns", () => {
    it("build the client matcher of laravel-mercure §3's example", () => {
        expect(presencePattern(HUB, channelTopic(P, "presence-room.2"))).toBe(
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2/:subscriber",
        );
    });

    it("reproduce Appendix A's subscribe URL byte for byte", () => {
        const topics = [channelTopic(P, "private-chat.1"), channelTopic(P, "presence-room.2")];
        const url = new URL(buildSubscribeUrl(HUB, { topics, patterns: [presencePattern(HUB, topics[1]!)] }));
        expect(url.pathname + url.search).toBe(
            "/.well-known/mercure?match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fprivate-chat.1&match=https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2&match_urlpattern=%2F.well-known%2Fmercure%2Fsubscriptions%2F%3Amatch_type%2Fhttps%253A%252F%252Flaravel.alt%252Fecho%252Fchannel%252Fpresence-room.2%2F%3Asubscriber",
        );
    });

    it("reproduce Appendix A's snapshot URL byte for byte", () => {
        expect(snapshotUrl(HUB, channelTopic(P, "presence-room.2"))).toBe(
            "https://example.com/.well-known/mercure/subscriptions/exact/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2",
        );
    });

    it("encode URL-pattern syntax in the topic so the pattern matches it literally", () => {
        const topic = channelTopic(P, "presence-a*(b):c");
        expect(topic).toBe("https://laravel.alt/echo/channel/presence-a%2A%28b%29%3Ac");
        expect(presencePattern(HUB, topic)).toBe(
            "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-a%252A%2528b%2529%253Ac/:subscriber",
        );
    });

    it("drop one trailing slash of the host path, keep the origin for the snapshot, and work in legacy mode", () => {
        const hub = new URL("https://hub.example.com:8443/hub/?x=1");
        expect(presencePattern(hub, "presence-lobby")).toBe("/hub/subscriptions/:match_type/presence-lobby/:subscriber");
        expect(snapshotUrl(hub, "presence-lobby")).toBe("https://hub.example.com:8443/hub/subscriptions/exact/presence-lobby");
        const root = new URL("https://hub.example.com");
        expect(presencePattern(root, "presence-a b")).toBe("/subscriptions/:match_type/presence-a%20b/:subscriber");
    });

    it("select the hub's subscription-event topics of that channel only, tricky names included", () => {
        for (const name of ["presence-room.2", "presence-a*(b):c", "presence-é/?#%{x}"]) {
            const topic = channelTopic(P, name);
            const matcher = compileMatcher("urlpattern", presencePattern(HUB, topic), HUB.href);
            const subscriber = "urn:uuid:0190a1b2-0000-7000-8000-000000000001";
            expect(matcher?.matches(subscriptionTopic("/.well-known/mercure", "exact", topic, subscriber))).toBe(true);
            expect(matcher?.matches(subscriptionTopic("/.well-known/mercure", "exact", topic + "x", subscriber))).toBe(false);
            expect(matcher?.matches(subscriptionTopic("/.well-known/mercure", "exact", channelTopic(P, "presence-other"), subscriber))).toBe(false);
        }
    });
});
