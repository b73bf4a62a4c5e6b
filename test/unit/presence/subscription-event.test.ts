import { describe, expect, it } from "vitest";
import { parseSubscriptionEvent } from "../../../src/presence/subscription-event";

const TOPIC = "https://laravel.alt/echo/channel/presence-room.2";
const SUBSCRIBER = "urn:uuid:0190a1b2-0000-7000-8000-000000000007";
const PAYLOAD = { user_id: "7", user_info: { id: 7, name: "Bob" } };

/** A subscription event as the reference hub sends it. */
function document(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        id: `/.well-known/mercure/subscriptions/exact/${encodeURIComponent(TOPIC)}/${encodeURIComponent(SUBSCRIBER)}`,
        type: "subscription",
        subscriber: SUBSCRIBER,
        match: TOPIC,
        match_type: "exact",
        active: true,
        payload: PAYLOAD,
        ...overrides,
    };
}

describe("parseSubscriptionEvent", () => {
    it("reads a join and a leave, pretty-printed over several lines as the Go hub sends them", () => {
        const pretty = JSON.stringify(document(), null, "  ");
        expect(pretty.split("\n").length).toBeGreaterThan(5);
        expect(parseSubscriptionEvent(pretty)).toEqual({ topic: TOPIC, subscriber: SUBSCRIBER, active: true, payload: PAYLOAD });
        expect(parseSubscriptionEvent(JSON.stringify(document({ active: false })))).toEqual({
            topic: TOPIC,
            subscriber: SUBSCRIBER,
            active: false,
            payload: PAYLOAD,
        });
    });

    it("ignores id, type and @context (the JSON-LD variant reads the same)", () => {
        const jsonLd = document({ "@context": "https://mercure.rocks/", type: "Subscription", id: 42 });
        expect(parseSubscriptionEvent(JSON.stringify(jsonLd))).toEqual(parseSubscriptionEvent(JSON.stringify(document())));
    });

    it("accepts a leave without payload and older servers' raw payloads, even true", () => {
        expect(parseSubscriptionEvent(JSON.stringify(document({ active: false, payload: undefined })))?.active).toBe(false);
        expect(parseSubscriptionEvent(JSON.stringify(document({ payload: true })))?.payload).toBe(true);
        expect(parseSubscriptionEvent(JSON.stringify(document({ payload: [] })))?.payload).toEqual([]);
    });

    it("drops phantoms: an active subscription without payload, or with a null one", () => {
        expect(parseSubscriptionEvent(JSON.stringify(document({ payload: undefined })))).toBeNull();
        expect(parseSubscriptionEvent(JSON.stringify(document({ payload: null })))).toBeNull();
    });

    it("drops non-exact subscriptions, which carry the payload too", () => {
        expect(parseSubscriptionEvent(JSON.stringify(document({ match_type: "urlpattern" })))).toBeNull();
        expect(parseSubscriptionEvent(JSON.stringify(document({ match_type: undefined })))).toBeNull();
    });

    it("drops malformed documents", () => {
        for (const broken of [
            document({ match: undefined }),
            document({ match: 1 }),
            document({ subscriber: undefined }),
            document({ subscriber: 7 }),
            document({ active: "true" }),
            document({ active: undefined }),
        ]) {
            expect(parseSubscriptionEvent(JSON.stringify(broken))).toBeNull();
        }
        for (const data of ["", "{", "null", "[]", '"x"', "42", null, undefined, { ...document() }]) {
            expect(parseSubscriptionEvent(data)).toBeNull();
        }
    });
});
