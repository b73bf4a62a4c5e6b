import { describe, expect, it } from "vitest";
import { mintAccessToken } from "../../../src/dev/jwt/access-token";
import { bearer, cookie, detail, ISSUER, KEY, post, startHub, subscribe, token } from "./helpers";

const TOPIC = "https://example.com/books/1";

/** Start a hub that collects its refusal lines. */
async function loggingHub(options: Parameters<typeof startHub>[0] = {}) {
    const lines: string[] = [];
    const hub = await startHub({ ...options, onRefusal: (line) => lines.push(line) });
    return { hub, lines };
}

describe("the hub's refusal log (the CLI's --verbose)", () => {
    it.each([
        ["a token without typ at+jwt", { header: { typ: "JWT" } }, {}, 'its header\'s typ is "JWT", not "at+jwt"'],
        ["an untrusted issuer", {}, { iss: "http://localhost" }, 'its iss "http://localhost" is not a trusted issuer ("https://app.test"; --issuer)'],
        ["a wrong key", { key: "another-key-that-is-long-enough-for-hs256" }, {}, "its signature does not verify with the hub's key (--jwt-key)"],
        ["an expired token", {}, { exp: 1_000_000_000 }, "it expired at 2001-09-09T01:46:40.000Z"],
    ])("says why it refused %s, while the client only gets invalid_token", async (_what, options, claims, reason) => {
        const { hub, lines } = await loggingHub();
        const response = await post(hub, [["topic", TOPIC], ["data", "x"]], bearer(token(hub, [detail(["publish"], ["*"])], claims, options)));
        expect(response.status).toBe(401);
        expect(await response.text()).toBe("The access token is invalid.\n");
        expect(lines).toEqual([`POST /.well-known/mercure refused (publisher): the token from the Authorization header is invalid: ${reason}.`]);
    });

    it("names the aud a token carries and the resource identifier the hub wants (localhost is not 127.0.0.1)", async () => {
        const { hub, lines } = await loggingHub();
        const localhost = hub.url.replace("127.0.0.1", "localhost");
        const response = await subscribe(hub, [["match", TOPIC]], cookie(token(hub, [detail(["subscribe"], ["*"])], { aud: localhost })));
        expect(response.status).toBe(401);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(`GET /.well-known/mercure refused (subscriber): the token from the "mercure_access_token" cookie is invalid: its aud "${localhost}" does not contain this hub's resource identifier "${hub.url}"`);
    });

    it("logs a missing token and a missing publish grant, and nothing for accepted requests", async () => {
        const { hub, lines } = await loggingHub();
        expect((await post(hub, [["topic", TOPIC], ["data", "x"]])).status).toBe(401);
        const other = await post(hub, [["topic", TOPIC], ["data", "x"]], bearer(token(hub, [detail(["publish"], ["https://example.com/other"])])));
        expect(other.status).toBe(403);
        expect((await post(hub, [["topic", TOPIC], ["data", "x"]], bearer(token(hub, [detail(["publish"], ["*"])])))).status).toBe(200);
        expect(lines).toEqual([
            'POST /.well-known/mercure refused (publisher): no token, neither in an Authorization: Bearer header nor in the "mercure_access_token" cookie.',
            `POST /.well-known/mercure refused (publisher): the token has no publish grant for every topic of ["${TOPIC}"].`,
        ]);
    });
});

describe("a minted access token (the CLI's token command)", () => {
    it("publishes and subscribes on the dev hub when minted for the hub URL as it is reached", async () => {
        const { hub, lines } = await loggingHub();
        const mint = (grants: { publish?: string[]; subscribe?: string[] }) =>
            mintAccessToken({ jwtKey: KEY, issuer: ISSUER, resource: hub.url, publish: [], subscribe: [], ttl: 60, now: Date.now(), ...grants });
        const stream = await subscribe(hub, [["match", TOPIC]], bearer(mint({ subscribe: ["*"] })));
        expect(stream.status).toBe(200);
        const published = await post(hub, [["topic", TOPIC], ["data", "1984"], ["private", "on"]], bearer(mint({ publish: [TOPIC] })));
        expect(published.status).toBe(200);
        const id = await published.text();
        const [event] = await stream.next(1, 10_000);
        expect([event?.lastEventId, event?.data]).toEqual([id, "1984"]);
        expect(lines).toEqual([]);
    });
});
