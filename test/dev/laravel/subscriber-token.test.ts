import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { compileMatcher } from "../../../src/dev/hub/matchers";
import { FALLBACK_PATTERN_BASE } from "../../../src/dev/hub/options";
import { subscriptionTopic } from "../../../src/dev/hub/subscriptions";
import { verifyJwt } from "../../../src/dev/jwt/jwt";
import { rawUrlEncode } from "../../../src/topic/encode";
import { BroadcastingApp, type BroadcastingAppOptions } from "../../../src/dev/laravel";
import { cookieJwt, decodeJwt, JWT_KEY, postAuth, serveApp, type Started } from "./helpers";

const TYPE = "https://mercure.rocks/authorization-detail";
const NOW = Date.UTC(2026, 0, 1, 0, 0, 0);

let server: Started | undefined;
afterEach(async () => {
    await server?.close();
    server = undefined;
});

async function tokenFor(
    channelNames: string[],
    options: Partial<BroadcastingAppOptions> = {},
    cookie = "dev_user=42",
): Promise<{ token: string; header: Record<string, unknown>; claims: Record<string, unknown>; rawClaims: string }> {
    const app = new BroadcastingApp({
        hubUrl: "http://127.0.0.1:3000/.well-known/mercure",
        jwtKey: JWT_KEY,
        users: [{ id: 42, name: "Ann" }],
        encryptionKey: createHash("sha256").update("k").digest("base64"),
        now: () => NOW,
        ...options,
    });
    app.channel("room.{id}", (user, { id }) => ({ id: user.id, room: id }))
        .channel("inbox.{id}", (user, { id }) => String(user.id) === id)
        .channel("orders.{id}", () => true);
    server = await serveApp(app);
    const response = await postAuth(server.url, channelNames, { Cookie: cookie });
    expect(response.status).toBe(200);
    const token = cookieJwt(response.setCookies[0] as string);
    return { token, ...decodeJwt(token) };
}

describe("subscriber JWT", () => {
    it("reproduces the worked example of §2.7 detail by detail", async () => {
        const { claims } = await tokenFor(["presence-room.1", "presence-room.2", "private-inbox.42"]);
        const details = claims["authorization_details"] as unknown[];
        expect(details).toHaveLength(4);
        expect(JSON.stringify(details[0])).toBe(
            `{"type":"${TYPE}","actions":["subscribe"],"topics":[{"match":"https://laravel.alt/echo/channel/private-inbox.42"}]}`,
        );
        expect(JSON.stringify(details[1])).toBe(
            `{"type":"${TYPE}","actions":["subscribe"],"topics":[` +
                `{"match":"https://laravel.alt/echo/channel/presence-room.1"},` +
                `{"match":"/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1{/:subscriber}?","match_type":"urlpattern"}],` +
                `"payload":{"user_id":"42","user_info":{"id":42,"room":"1"}}}`,
        );
        expect(JSON.stringify(details[2])).toBe(
            `{"type":"${TYPE}","actions":["subscribe"],"topics":[` +
                `{"match":"https://laravel.alt/echo/channel/presence-room.2"},` +
                `{"match":"/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2{/:subscriber}?","match_type":"urlpattern"}],` +
                `"payload":{"user_id":"42","user_info":{"id":42,"room":"2"}}}`,
        );
        expect(JSON.stringify(details[3])).toBe(
            `{"type":"${TYPE}","actions":["subscribe","publish"],"topics":[` +
                `{"match":"https://laravel.alt/echo/whisper/presence-room.1"},` +
                `{"match":"https://laravel.alt/echo/whisper/presence-room.2"},` +
                `{"match":"https://laravel.alt/echo/whisper/private-inbox.42"}]}`,
        );
    });

    it("has the at+jwt header, the claims in order, and a valid HS256 signature", async () => {
        const { token, header, claims, rawClaims } = await tokenFor(["private-inbox.42"]);
        expect(JSON.stringify(header)).toBe('{"alg":"HS256","typ":"at+jwt"}');
        expect(Object.keys(claims)).toEqual(["iss", "aud", "sub", "client_id", "iat", "jti", "exp", "authorization_details"]);
        expect(claims).toMatchObject({
            iss: "http://laravel.test",
            aud: "http://127.0.0.1:3000/.well-known/mercure",
            sub: "42",
            client_id: "http://laravel.test",
            iat: NOW / 1000,
            exp: NOW / 1000 + 300,
        });
        expect(claims["jti"]).toMatch(/^[0-9a-f]{32}$/);
        // The JWT is JSON-encoded with unescaped slashes, like lcobucci/jwt.
        expect(rawClaims).toContain('"iss":"http://laravel.test"');
        expect(verifyJwt(token, JWT_KEY).ok).toBe(true);
        expect(verifyJwt(token, "x".repeat(40)).ok).toBe(false);
    });

    it("uses the issuer as client_id, an explicit public URL as aud, and the public path in presence patterns", async () => {
        const { claims } = await tokenFor(["presence-room.1"], {
            issuer: "https://app.example",
            publicUrl: "http://127.0.0.1:3000/hub/",
        });
        expect(claims["iss"]).toBe("https://app.example");
        expect(claims["client_id"]).toBe("https://app.example");
        expect(claims["aud"]).toBe("http://127.0.0.1:3000/hub/");
        const details = claims["authorization_details"] as Array<{ topics: Array<{ match: string }> }>;
        expect(details[0]?.topics[1]?.match).toMatch(/^\/hub\/\/subscriptions\/:match_type\//);
    });

    it.each([
        ["the hub path", "http://127.0.0.1:3000/.well-known/mercure", "/.well-known/mercure/subscriptions/", true],
        ["no path (the /.well-known/mercure fallback)", "http://127.0.0.1:3000", "/.well-known/mercure/subscriptions/", true],
        ["a relative hub path", "/.well-known/mercure", "/.well-known/mercure/subscriptions/", true],
        ["a trailing slash (kept verbatim)", "http://127.0.0.1:3000/.well-known/mercure/", "/.well-known/mercure//subscriptions/", false],
        ["only a slash", "http://127.0.0.1:3000/", "//subscriptions/", false],
    ])("builds the presence grant from parse_url(public_url, PATH) for %s", async (_label, publicUrl, prefix, coversHub) => {
        const { claims } = await tokenFor(["presence-room.1"], { publicUrl });
        const details = claims["authorization_details"] as Array<{ topics: Array<{ match: string }> }>;
        const grant = details[0]!.topics[1]!.match;
        const encoded = rawUrlEncode("https://laravel.alt/echo/channel/presence-room.1");
        expect(grant).toBe(`${prefix}:match_type/${encoded}{/:subscriber}?`);
        // The reference hub names subscription events and the snapshot under its fixed path: the grant covers
        // them only when the public URL's path is that path, or absent. A client cannot repair a grant that
        // misses them: its host must be the hub URL, and public_url must not end with a slash.
        const matcher = compileMatcher("urlpattern", grant, FALLBACK_PATTERN_BASE)!;
        const event = subscriptionTopic("/.well-known/mercure", "exact", "https://laravel.alt/echo/channel/presence-room.1", "urn:uuid:1");
        expect(matcher.matches(event)).toBe(coversHub);
        expect(matcher.matches(`/.well-known/mercure/subscriptions/exact/${encoded}`)).toBe(coversHub);
    });

    it("grants private and encrypted topics together, and whispers only on granted guarded channels", async () => {
        const { claims } = await tokenFor(["news", "private-encrypted-orders.1", "private-inbox.7", "private-inbox.42"]);
        const details = claims["authorization_details"] as Array<{ actions: string[]; topics: Array<{ match: string }> }>;
        expect(details).toHaveLength(2);
        expect(details[0]?.topics.map((t) => t.match)).toEqual([
            "https://laravel.alt/echo/channel/private-encrypted-orders.1",
            "https://laravel.alt/echo/channel/private-inbox.42",
        ]);
        expect(details[1]?.actions).toEqual(["subscribe", "publish"]);
        expect(details[1]?.topics.map((t) => t.match)).toEqual([
            "https://laravel.alt/echo/whisper/private-encrypted-orders.1",
            "https://laravel.alt/echo/whisper/private-inbox.42",
        ]);
    });

    it("mints no whisper grant when client events are off", async () => {
        const { claims } = await tokenFor(["private-inbox.42"], { clientEvents: false });
        expect((claims["authorization_details"] as unknown[]).length).toBe(1);
    });

    it("omits authorization_details when nothing is granted, and says anonymous for guests", async () => {
        const publicOnly = await tokenFor(["news"]);
        expect(publicOnly.claims).not.toHaveProperty("authorization_details");
        expect(publicOnly.claims["sub"]).toBe("42");
        const guest = await tokenFor(["private-inbox.42"], {}, "");
        expect(guest.claims).not.toHaveProperty("authorization_details");
        expect(guest.claims["sub"]).toBe("anonymous");
    });

    it("puts the raw callback result in the presence payload on a legacy-payload server", async () => {
        const { claims } = await tokenFor(["presence-room.3"], { legacyPresencePayload: true });
        const details = claims["authorization_details"] as Array<{ payload?: unknown }>;
        expect(details[0]?.payload).toEqual({ id: 42, room: "3" });
    });

    it("uses bare channel names as topics on a legacy server without a prefix", async () => {
        const { claims } = await tokenFor(["presence-room.1", "private-inbox.42"], { topicPrefix: null });
        expect(JSON.parse(JSON.stringify(claims["authorization_details"]))).toEqual([
            { type: TYPE, actions: ["subscribe"], topics: [{ match: "private-inbox.42" }] },
            {
                type: TYPE,
                actions: ["subscribe"],
                topics: [
                    { match: "presence-room.1" },
                    { match: "/.well-known/mercure/subscriptions/:match_type/presence-room.1{/:subscriber}?", match_type: "urlpattern" },
                ],
                payload: { user_id: "42", user_info: { id: 42, room: "1" } },
            },
            { type: TYPE, actions: ["subscribe", "publish"], topics: [{ match: "whisper/presence-room.1" }, { match: "whisper/private-inbox.42" }] },
        ]);
    });
});
