import { describe, expect, it } from "vitest";
import { signJwt } from "../../../src/dev/jwt/jwt";
import { allToken, bearer, cookie, KEY, metadataUrl, post, startHub, subscribe } from "./helpers";

/** A Mercure 0.x token: the `mercure` claim, no typ, iss, aud or exp, as the Go hub v0.24.2 reads it. */
const LEGACY_ALL = signJwt({ mercure: { publish: ["*"], subscribe: ["*"] } }, KEY, "HS256", { typ: "JWT" });

describe("a hub with legacyProtocol (answering like Mercure 0.x)", () => {
    it("asks a 1.0 subscribe request for the topic parameter, ignoring match", async () => {
        const hub = await startHub({ legacyProtocol: true, anonymous: true });
        const stream = await subscribe(hub, [["match", "https://example.com/a"]]);
        expect(stream.status).toBe(400);
        expect(stream.body).toBe('Missing "topic" parameter.\n');
    });

    it("subscribes with topic as an exact matcher", async () => {
        const hub = await startHub({ legacyProtocol: true, anonymous: true });
        const stream = await subscribe(hub, [["topic", "https://example.com/a"]]);
        expect(stream.status).toBe(200);
        expect((await post(hub, [["topic", "https://example.com/a"], ["data", "hi"]], bearer(LEGACY_ALL))).status).toBe(200);
        expect((await stream.next(1, 5_000))[0]!.data).toBe("hi");
    });

    it("answers 401 without a WWW-Authenticate challenge and serves no metadata", async () => {
        const hub = await startHub({ legacyProtocol: true });
        const refused = await subscribe(hub, [["topic", "x"]]);
        expect(refused.status).toBe(401);
        expect(refused.headers.get("www-authenticate")).toBeNull();
        expect((await fetch(metadataUrl(hub))).status).toBe(404);
        // Authenticated, it still reads only topic.
        expect((await subscribe(hub, [["match", "x"]], bearer(allToken(hub)))).status).toBe(400);
    });

    it("reads tokens as Go v0.24.2 does: a 1.0 token is valid whatever its aud and iss, but only the mercure claim grants", async () => {
        const hub = await startHub({ legacyProtocol: true, issuers: ["https://another-issuer.test"] });
        const laravel = allToken(hub); // 1.0 claims, an issuer this hub does not list
        expect((await subscribe(hub, [["topic", "x"]], cookie(laravel))).status).toBe(200);
        expect((await post(hub, [["topic", "x"], ["data", "y"]], bearer(laravel))).status).toBe(401);
        expect((await post(hub, [["topic", "x"], ["data", "y"]], bearer(LEGACY_ALL))).status).toBe(200);
        // Every authorization failure is a bare 401: a refused publish origin, a malformed header.
        const refusedOrigin = await post(hub, [["topic", "x"], ["data", "y"]], { ...cookie(LEGACY_ALL), origin: "http://evil.test" });
        expect([refusedOrigin.status, refusedOrigin.headers.get("www-authenticate"), await refusedOrigin.text()]).toEqual([401, null, "Unauthorized\n"]);
        expect((await subscribe(hub, [["topic", "x"]], { authorization: "Bearer abc def" })).status).toBe(401);
    });

    it("is off by default: match works, topic is refused, challenges and metadata are there", async () => {
        const hub = await startHub({ anonymous: true });
        expect((await subscribe(hub, [["topic", "x"]])).body).toContain('The "topic" parameter is not supported');
        expect((await subscribe(hub, [["match", "x"]])).status).toBe(200);
        expect((await fetch(metadataUrl(hub))).status).toBe(200);
        const refused = await subscribe(hub, [["match", "x"]], bearer("bad.token.value"));
        expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });
});
