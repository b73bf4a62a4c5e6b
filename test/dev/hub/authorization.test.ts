import { describe, expect, it } from "vitest";
import { base64UrlEncode } from "../../../src/dev/jwt/jwt";
import type { DevHub } from "../../../src/dev/hub";
import { bearer, cookie, detail, metadataUrl, publish, startHub, subscribe, subscribeUrl, token } from "./helpers";

const T = "https://example.com/t";

function invalidTokenChallenge(hub: DevHub): string {
    return `Bearer error="invalid_token", resource_metadata="${metadataUrl(hub)}"`;
}

describe("subscriber authentication", () => {
    it("answers 401 with a bare challenge when no token is sent to a non-anonymous hub", async () => {
        const hub = await startHub();
        const response = await fetch(subscribeUrl(hub, [["match", T]]));
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl(hub)}"`);
    });

    it("never reads a token from the query string", async () => {
        const hub = await startHub();
        const jwt = token(hub, [detail(["subscribe"], ["*"])]);
        const response = await fetch(subscribeUrl(hub, [["match", T], ["access_token", jwt], ["authorization", jwt]]));
        expect(response.status).toBe(401);
    });

    it("accepts a valid token from the Authorization header and from the cookie", async () => {
        const hub = await startHub();
        const jwt = token(hub, [detail(["subscribe"], ["*"])]);
        expect((await subscribe(hub, [["match", T]], bearer(jwt))).status).toBe(200);
        expect((await subscribe(hub, [["match", T]], cookie(jwt))).status).toBe(200);
        expect((await subscribe(hub, [["match", T]], { cookie: `other=1; mercure_access_token=${jwt}; x=2` })).status).toBe(200);
    });

    it("honours a custom cookie name and ignores the default one then", async () => {
        const hub = await startHub({ cookieName: "hub_jwt" });
        const jwt = token(hub, []);
        expect((await subscribe(hub, [["match", T]], cookie(jwt, "hub_jwt"))).status).toBe(200);
        expect((await fetch(subscribeUrl(hub, [["match", T]]), { headers: cookie(jwt) })).status).toBe(401);
    });

    it("with cookieAuth off, ignores the cookie (401 as without a token), accepts the header, and advertises no mercure_cookie", async () => {
        const hub = await startHub({ cookieAuth: false });
        const jwt = token(hub, [detail(["subscribe"], ["*"])]);
        expect((await subscribe(hub, [["match", T]], cookie(jwt))).status).toBe(401);
        expect((await subscribe(hub, [["match", T]], bearer(jwt))).status).toBe(200);
        const metadata = (await (await fetch(metadataUrl(hub))).json()) as Record<string, unknown>;
        expect(metadata["mercure_cookie"]).toBeUndefined();
        expect(metadata["bearer_methods_supported"]).toEqual(["header"]);
    });

    it("lets the Authorization header win over the cookie", async () => {
        const hub = await startHub();
        const good = token(hub, []);
        const bad = token(hub, [], {}, { key: "wrong-key" });
        expect((await subscribe(hub, [["match", T]], { ...bearer(good), ...cookie(bad) })).status).toBe(200);
        const refused = await fetch(subscribeUrl(hub, [["match", T]]), { headers: { ...bearer(bad), ...cookie(good) } });
        expect(refused.status).toBe(401);
        expect(refused.headers.get("www-authenticate")).toBe(invalidTokenChallenge(hub));
    });

    it.each([["Basic dXNlcjpwYXNz"], ["Bearer"], ["Bearer a b"], ["Token abc"]])(
        "answers 400 invalid_request for the malformed Authorization %s",
        async (value) => {
            const hub = await startHub({ anonymous: true });
            const response = await fetch(subscribeUrl(hub, [["match", T]]), { headers: { authorization: value } });
            expect(response.status).toBe(400);
            expect(response.headers.get("www-authenticate")).toBe(
                `Bearer error="invalid_request", resource_metadata="${metadataUrl(hub)}"`,
            );
        },
    );

    it("rejects an invalid token even on an anonymous hub, and accepts no token there", async () => {
        const hub = await startHub({ anonymous: true });
        const bad = token(hub, [], {}, { key: "wrong-key" });
        const response = await fetch(subscribeUrl(hub, [["match", T]]), { headers: cookie(bad) });
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe(invalidTokenChallenge(hub));
        expect((await subscribe(hub, [["match", T]])).status).toBe(200);
    });

    it("verifies subscribers with subscriberJwtKey when keys are split", async () => {
        const hub = await startHub({ publisherJwtKey: "publisher-key", subscriberJwtKey: "subscriber-key" });
        expect((await subscribe(hub, [["match", T]], bearer(token(hub, [], {}, { key: "subscriber-key" })))).status).toBe(200);
        const response = await fetch(subscribeUrl(hub, [["match", T]]), {
            headers: bearer(token(hub, [], {}, { key: "publisher-key" })),
        });
        expect(response.status).toBe(401);
    });
});

describe("token validation", () => {
    const now = () => Math.floor(Date.now() / 1000);
    const unsigned = (hub: DevHub): string =>
        `${base64UrlEncode(JSON.stringify({ alg: "none", typ: "at+jwt" }))}.${base64UrlEncode(
            JSON.stringify({ iss: "x", aud: hub.url, exp: now() + 60 }),
        )}.`;
    const invalid: [string, (hub: DevHub) => string][] = [
        ["a wrong signature", (hub) => token(hub, [], {}, { key: "another-key" })],
        ["alg none", unsigned],
        ["typ JWT", (hub) => token(hub, [], {}, { header: { typ: "JWT" } })],
        ["no typ", (hub) => token(hub, [], {}, { header: { typ: undefined } })],
        ["no iss", (hub) => token(hub, [], { iss: undefined })],
        ["a non-string iss", (hub) => token(hub, [], { iss: 42 })],
        ["an aud for another resource", (hub) => token(hub, [], { aud: "http://other.example/.well-known/mercure" })],
        ["no aud", (hub) => token(hub, [], { aud: undefined })],
        ["no exp", (hub) => token(hub, [], { exp: undefined })],
        ["an expired exp", (hub) => token(hub, [], { exp: now() - 1 })],
        ["a future nbf", (hub) => token(hub, [], { nbf: now() + 60 })],
        ["a non-array authorization_details", (hub) => token(hub, { type: "x" } as unknown as unknown[])],
        ["a non-string action", (hub) => token(hub, [detail(["subscribe", 1], ["*"])])],
        ["empty actions", (hub) => token(hub, [detail([], ["*"])])],
        ["empty topics", (hub) => token(hub, [detail(["subscribe"], [])])],
        ["a bare-string topic", (hub) => token(hub, [{ ...detail(["subscribe"], []), topics: ["*"] }])],
        ["an unknown match_type", (hub) => token(hub, [detail(["subscribe"], [{ match: "a", match_type: "regex" }])])],
        ["a differently cased match_type", (hub) => token(hub, [detail(["subscribe"], [{ match: "a", match_type: "URLPattern" }])])],
        ["a non-string match", (hub) => token(hub, [detail(["subscribe"], [{ match: 5 }])])],
        ["an invalid URL pattern", (hub) => token(hub, [detail(["subscribe"], [{ match: "https://x/(", match_type: "urlpattern" }])])],
        ["101 Mercure details", (hub) => token(hub, Array.from({ length: 101 }, () => detail(["subscribe"], ["a"])))],
        ["101 topic entries", (hub) => token(hub, [detail(["subscribe"], Array.from({ length: 101 }, (_, i) => `t${i}`))])],
        ["a 4097-byte pattern", (hub) => token(hub, [detail(["subscribe"], ["a".repeat(4097)])])],
    ];

    it.each(invalid)("answers 401 invalid_token for %s", async (_name, make) => {
        const hub = await startHub();
        const response = await fetch(subscribeUrl(hub, [["match", T]]), { headers: bearer(make(hub)) });
        expect(response.status).toBe(401);
        expect(response.headers.get("www-authenticate")).toBe(invalidTokenChallenge(hub));
    });

    const valid: [string, (hub: DevHub) => string][] = [
        ["typ application/AT+JWT", (hub) => token(hub, [], {}, { header: { typ: "application/AT+JWT" } })],
        ["HS384", (hub) => token(hub, [], {}, { alg: "HS384" })],
        ["HS512", (hub) => token(hub, [], {}, { alg: "HS512" })],
        ["an aud array containing the hub URL", (hub) => token(hub, [], { aud: ["https://other", hub.url] })],
        ["a past nbf", (hub) => token(hub, [], { nbf: now() - 10 })],
        ["no authorization_details", (hub) => token(hub)],
        ["details of other types next to Mercure ones", (hub) => token(hub, [{ type: "payment", whatever: 1 }, detail(["subscribe"], ["a"])])],
        ["unknown actions", (hub) => token(hub, [detail(["subscribe", "delete"], ["a"])])],
        ["100 Mercure details", (hub) => token(hub, Array.from({ length: 100 }, () => detail(["subscribe"], ["a"])))],
        ["a 4096-byte pattern", (hub) => token(hub, [detail(["subscribe"], ["a".repeat(4096)])])],
    ];

    it.each(valid)("accepts a token with %s", async (_name, make) => {
        const hub = await startHub();
        const stream = await subscribe(hub, [["match", T]], bearer(make(hub)));
        expect(stream.status).toBe(200);
    });

    it("requires a trusted iss, for subscribers and publishers alike", async () => {
        const hub = await startHub({ issuers: ["https://trusted", "https://other"] });
        expect((await subscribe(hub, [["match", T]], bearer(token(hub, [], { iss: "https://trusted" })))).status).toBe(200);
        expect((await subscribe(hub, [["match", T]], bearer(token(hub, [], { iss: "https://other" })))).status).toBe(200);
        for (const iss of ["https://evil", "https://trusted/", "HTTPS://TRUSTED"]) {
            const response = await fetch(subscribeUrl(hub, [["match", T]]), { headers: bearer(token(hub, [], { iss })) });
            expect(response.status).toBe(401);
            expect(response.headers.get("www-authenticate")).toBe(invalidTokenChallenge(hub));
        }
        const untrusted = token(hub, [detail(["publish"], ["*"])], { iss: "https://evil" });
        const publish = await fetch(hub.url, {
            method: "POST",
            headers: { ...bearer(untrusted), "content-type": "application/x-www-form-urlencoded" },
            body: "topic=a",
        });
        expect(publish.status).toBe(401);
    });

    it("requires the configured resource in aud", async () => {
        const hub = await startHub({ resource: "https://hub.example/.well-known/mercure" });
        const ok = token(hub, [], { aud: "https://hub.example/.well-known/mercure" });
        expect((await subscribe(hub, [["match", T]], bearer(ok))).status).toBe(200);
        expect((await fetch(subscribeUrl(hub, [["match", T]]), { headers: bearer(token(hub, [])) })).status).toBe(401);
    });

    it("names the metadata on the pinned resource identifier's origin in its challenges, as the Go hub does, and serves it on its own", async () => {
        const hub = await startHub({ resource: "https://hub.example/.well-known/mercure" });
        const refused = await subscribe(hub, [["match", T]]);
        expect(refused.headers.get("www-authenticate")).toBe('Bearer resource_metadata="https://hub.example/.well-known/oauth-protected-resource/.well-known/mercure"');
        expect(((await (await fetch(metadataUrl(hub))).json()) as Record<string, unknown>)["resource"]).toBe("https://hub.example/.well-known/mercure");
    });
});

describe("private updates", () => {
    it("go only to subscribers whose token grants one of the topics, whatever their matchers", async () => {
        const hub = await startHub({ anonymous: true });
        const granted = await subscribe(hub, [["match", T]], bearer(token(hub, [detail(["subscribe"], [T])])));
        const patternGranted = await subscribe(hub, [["match", "*"]], bearer(token(hub, [
            detail(["subscribe"], [{ match: "https://example.com/:name", match_type: "urlpattern" }]),
        ])));
        const ungranted = await subscribe(hub, [["match", "*"]], bearer(token(hub, [detail(["subscribe"], ["https://example.com/other"])])));
        const publishOnly = await subscribe(hub, [["match", T]], bearer(token(hub, [detail(["publish"], [T])])));
        const anonymous = await subscribe(hub, [["match_urlpattern", "*"]]);

        await publish(hub, [["topic", T], ["data", "secret"], ["private", "on"]]);
        await publish(hub, [["topic", T], ["data", "public"]]);

        expect((await granted.next(2)).map((e) => e.data)).toEqual(["secret", "public"]);
        expect((await patternGranted.next(2)).map((e) => e.data)).toEqual(["secret", "public"]);
        expect((await ungranted.next(1))[0]!.data).toBe("public");
        expect((await publishOnly.next(1))[0]!.data).toBe("public");
        expect((await anonymous.next(1))[0]!.data).toBe("public");
        await ungranted.expectNone(50);
    });

    it("are delivered when the grant covers only an alternate topic", async () => {
        const hub = await startHub();
        const stream = await subscribe(hub, [["match", T]], bearer(token(hub, [detail(["subscribe"], ["urn:alt"])])));
        await publish(hub, [["topic", T], ["topic", "urn:alt"], ["private", ""], ["data", "alt"]]);
        expect((await stream.next(1))[0]!.data).toBe("alt");
    });

    it("are still routed by matchers: a grant alone does not deliver", async () => {
        const hub = await startHub();
        const stream = await subscribe(hub, [["match", "urn:other"]], bearer(token(hub, [detail(["subscribe"], ["*"])])));
        await publish(hub, [["topic", T], ["private", "on"]]);
        await stream.expectNone(100);
    });
});

describe("token expiry on an open stream", () => {
    it("ends the stream cleanly no later than exp", async () => {
        const hub = await startHub();
        // Three seconds of life, so that a loaded machine still subscribes before exp; the end is awaited until 5 s after it.
        const exp = Math.floor(Date.now() / 1000) + 3;
        const stream = await subscribe(hub, [["match", T]], bearer(token(hub, [], { exp })));
        expect(stream.status).toBe(200);
        expect(hub.hub.stats.subscribeConnections[0]!.closesAt).toBeLessThanOrEqual(exp * 1000);
        const deadline = exp * 1000 + 5_000 - Date.now();
        const result = await Promise.race([stream.finished, new Promise((r) => setTimeout(() => r("timeout"), deadline))]);
        expect(result).toBe("end");
        expect(hub.hub.stats.openConnections).toBe(0);
    }, 15_000);

    it("keeps a stream whose token is still valid open", async () => {
        const hub = await startHub();
        const stream = await subscribe(hub, [["match", T]], bearer(token(hub, [])));
        const result = await Promise.race([stream.finished, new Promise((r) => setTimeout(() => r("open"), 200))]);
        expect(result).toBe("open");
    });
});
