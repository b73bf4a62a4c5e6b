import { describe, expect, it } from "vitest";
import { allToken, bearer, metadataUrl, publish, startHub, subscribe } from "./helpers";

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
        await publish(hub, [["topic", "https://example.com/a"], ["data", "hi"]]);
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

    it("is off by default: match works, topic is refused, challenges and metadata are there", async () => {
        const hub = await startHub({ anonymous: true });
        expect((await subscribe(hub, [["topic", "x"]])).body).toContain('The "topic" parameter is not supported');
        expect((await subscribe(hub, [["match", "x"]])).status).toBe(200);
        expect((await fetch(metadataUrl(hub))).status).toBe(200);
        const refused = await subscribe(hub, [["match", "x"]], bearer("bad.token.value"));
        expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });
});
