import { afterEach, describe, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import type { DevServer } from "../../src/dev/server";
import { runDoctor } from "../../src/dev/doctor";
import { startDevHub } from "../../src/dev/hub";
import { DEFAULT_ISSUER } from "../../src/dev/laravel/options";
import { MERCURE_DETAIL_TYPE } from "../../src/dev/hub/grants";
import { signJwt } from "../../src/dev/jwt/jwt";
import { referenceHubAvailable, referenceHubLogs, startReferenceHub } from "../support/reference-hub";
import { OUTDATED_HUBS, outdatedHub, type OutdatedHubSetup } from "./support/deployments";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { sleep, waitFor } from "./support/wait";

// A Laravel app pointed at a Mercure 0.x hub (the reference hub v0.24.2, issue 27): Laravel signs 1.0 tokens and the
// connector sends `match=`, which a 0.x hub refuses with 400 (it asks for `topic`) or, when no token it can use
// reaches it, with a bare 401 (no WWW-Authenticate, no metadata). Either way every channel must hear `hub_outdated`
// within seconds, and nothing may loop: no auth request, no stream reopened after the diagnosis.

const V0 = "v0.24.2" as const;

/** The channels a page of the app joins: one of each kind Laravel authorizes. */
const CHANNELS = ["news", "private-orders.1", "presence-room.1"] as const;

/** Long enough for a reconnect or a re-authorization loop to show (the first backoff is 1 s ± 20 %). */
const QUIET_WINDOW_MS = 3_000;

let server: DevServer | null = null;
const clients: NodeClient[] = [];

afterEach(async () => {
    for (const client of clients.splice(0)) client.echo.disconnect();
    await server?.close();
    server = null;
});

/** Start the Laravel stand-in in front of a v0.24.2 hub set up as `deployment` says (same JWT key). */
async function startOutdated(deployment: OutdatedHubSetup): Promise<DevServer> {
    const hub = outdatedHub(deployment);
    server = await startStack({ channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) }, externalHub: hub.externalHub });
    return server;
}

describe.skipIf(!referenceHubAvailable(V0))(`a Laravel app on a Mercure 0.x hub (reference hub ${V0}, Node)`, () => {
    for (const deployment of OUTDATED_HUBS) {
        it(`${deployment.title}: every channel hears hub_outdated within 5 s, status failed, and nothing loops`, async () => {
            const stack = await startOutdated(deployment);
            const client = await nodeClient(stack, 1);
            clients.push(client);
            const errors: MercureError[] = [];
            client.echo.channel("news").error((error: MercureError) => errors.push(error));
            client.echo.private("orders.1").error((error: MercureError) => errors.push(error));
            client.echo.join("room.1").error((error: MercureError) => errors.push(error));
            const outdated = () => errors.filter((error) => error.code === "hub_outdated");
            // Within 5 s of joining: the deadline of the wait is the assertion.
            await waitFor(() => outdated().length === CHANNELS.length, "hub_outdated on every channel", 5_000);

            expect(outdated().map((error) => error.channel).sort()).toEqual([...CHANNELS].sort());
            for (const error of outdated()) {
                expect(error.status).toBe(deployment.answer);
                expect(error.message).toContain(`The hub at ${stack.hubUrl} `);
                expect(error.message).toContain("upgrade the hub to Mercure 1.0");
            }
            expect(client.echo.connector.connectionStatus()).toBe("failed");
            // The stream the hub refused really reached the 0.x hub, with the answer the deployment predicts.
            expect(stack.hub.stats.subscribeConnections[0]?.status).toBe(deployment.answer);

            const auth = stack.app.stats.authRequests.length;
            const streams = stack.hub.stats.subscribeConnections.length;
            await sleep(QUIET_WINDOW_MS);
            // At most one renewal for the 401; after the diagnosis, not one more auth request or stream.
            expect(auth).toBeLessThanOrEqual(2);
            expect(stack.app.stats.authRequests.length).toBe(auth);
            // The refused stream, the diagnosis probe, and at most one reopen after a renewal.
            expect(streams).toBeLessThanOrEqual(3);
            expect(stack.hub.stats.subscribeConnections.length).toBe(streams);
            expect(client.echo.connector.connectionStatus()).toBe("failed");
            // Each channel heard the cause, in place of the stream_error held while the probe ran (issue 51); nothing after.
            for (const channel of CHANNELS) {
                expect(errors.filter((error) => error.channel === channel).map((error) => error.code)).toEqual(["hub_outdated"]);
            }
        });
    }
});

describe.skipIf(!referenceHubAvailable(V0))(`doctor on a Mercure 0.x hub (reference hub ${V0})`, () => {
    for (const setup of OUTDATED_HUBS) {
        it(`${setup.title}: names the 0.x hub and how to upgrade it, with Laravel's issuer and cookie name`, async () => {
            const pages: Record<string, string> = {};
            const stack = await startStack({ pages, externalHub: outdatedHub(setup).externalHub });
            server = stack;
            pages["/"] = `<!doctype html><title>app</title><link rel="mercure" href="${stack.hubUrl}">`;
            const client = await nodeClient(stack, 1);
            clients.push(client);
            const errors: MercureError[] = [];
            client.echo.private("orders.1").error((error: MercureError) => errors.push(error));
            await waitFor(() => errors.some((error) => error.code === "hub_outdated"), "the connector to name the 0.x hub", 5_000);
            const value = client.jar.get("mercure_access_token");
            expect(value).toBeDefined();

            for (const cookie of [null, { name: "mercure_access_token", value: value! }]) {
                const report = await runDoctor({ appUrl: stack.url + "/", cookie });
                const check = (name: string) => report.checks.find((candidate) => candidate.name === name)!;
                expect(report.ok).toBe(false);
                expect(check("Mercure 1.0")).toMatchObject({ verdict: "fail", detail: expect.stringContaining(`The hub at ${stack.hubUrl} `) });
                expect(check("Mercure 1.0").detail).toContain("as Mercure 0.x hubs do");
                expect(check("Mercure 1.0").fix).toBe(
                    "upgrade the hub to Mercure 1.0 (this connector speaks only the 1.0 protocol); in its 1.0 configuration, trust " +
                        (cookie === null ? "the issuer Laravel signs as (MERCURE_JWT_ISSUER, else APP_URL)" : `"${DEFAULT_ISSUER}" (Laravel's MERCURE_JWT_ISSUER, else APP_URL)`) +
                        " with an issuer block (MERCURE_TRUSTED_ISSUERS in the official Caddyfile; 0.x's publisher_jwt and subscriber_jwt work only in compatibility mode), keep Laravel's MERCURE_JWT_SECRET as the publisher and subscriber key, and set cookie_name to " +
                        (cookie === null ? "Laravel's MERCURE_COOKIE_NAME" : '"mercure_access_token" (Laravel\'s MERCURE_COOKIE_NAME)'),
                );
                expect(check("metadata valid").verdict).toBe("warn");
                // A 0.x hub answers a bare 401 to a refused origin as to a refused token: nothing to tell.
                expect(check("publish origin (whispers)").verdict).toBe("skip");
                if (cookie !== null) expect(check("credentials accepted")).toMatchObject({ verdict: "fail", fix: expect.stringContaining("upgrade the hub to Mercure 1.0") });
            }
        });
    }
});

/** One request both hubs answer, and what the answer is compared on. */
interface ParityRequest {
    /** What it shows. */
    readonly title: string;
    readonly method: "GET" | "POST";
    /** Below the hub URL: a query, or a path such as `/subscriptions`. */
    readonly target: string;
    readonly headers?: Readonly<Record<string, string>>;
    readonly body?: string;
}

/** What a hub answered: the status, whether it challenged, and an error body's first line. */
interface ParityAnswer {
    readonly status: number;
    readonly challenge: boolean;
    readonly body: string;
}

/** The key of both hubs; the app's origin, which they allow to publish with the cookie. */
const PARITY_KEY = "outdated-hub-parity-key-of-at-least-32-bytes";
const APP_ORIGIN = "http://app.test";

/** Send `request` to the hub at `hubUrl`; an accepted stream is read up to its headers and cancelled. */
async function answerOf(hubUrl: string, request: ParityRequest): Promise<ParityAnswer> {
    const url = request.target.startsWith("/") ? hubUrl.replace(/\/\.well-known\/mercure$/, "") + request.target : `${hubUrl}?${request.target}`;
    const abort = new AbortController();
    const response = await fetch(url, {
        method: request.method,
        headers: { ...(request.body !== undefined ? { "Content-Type": "application/x-www-form-urlencoded" } : {}), ...request.headers },
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal: abort.signal,
    });
    const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true;
    const body = streaming ? "" : (await response.text()).trim().split("\n")[0]!;
    abort.abort();
    return { status: response.status, challenge: response.headers.has("www-authenticate"), body: response.status === 400 ? body : "" };
}

describe.skipIf(!referenceHubAvailable(V0))(`the dev hub's legacyProtocol answers as the reference hub ${V0} does`, () => {
    it("to Laravel's 1.0 tokens, 0.x tokens, no token, bad tokens, topic and match, publishes and the subscriptions API", async () => {
        const now = Math.floor(Date.now() / 1000);
        // What Laravel's mercure driver signs (the audience and issuer are not the hub's: a 0.x hub reads neither).
        const laravel = signJwt(
            { iss: "https://laravel.test", aud: "https://elsewhere.test/.well-known/mercure", iat: now, exp: now + 600, authorization_details: [{ type: MERCURE_DETAIL_TYPE, actions: ["subscribe", "publish"], topics: [{ match: "*" }] }] },
            PARITY_KEY,
        );
        // A 0.x token: the `mercure` claim, no typ, no exp.
        const legacy = signJwt({ mercure: { subscribe: ["*"], publish: ["*"] } }, PARITY_KEY, "HS256", { typ: "JWT" });
        const wrongKey = signJwt({ exp: now + 600, mercure: { subscribe: ["*"] } }, "another-key-of-at-least-32-bytes-long!!");
        const expired = signJwt({ exp: now - 60, mercure: { subscribe: ["*"] } }, PARITY_KEY);
        const cookie = (token: string) => ({ Cookie: `mercure_access_token=${token}` });
        const requests: ParityRequest[] = [
            { title: "match=, no token", method: "GET", target: "match=x" },
            { title: "match=, Laravel's cookie", method: "GET", target: "match=x", headers: cookie(laravel) },
            { title: "topic=, Laravel's cookie", method: "GET", target: "topic=x", headers: cookie(laravel) },
            { title: "topic=, a 0.x cookie", method: "GET", target: "topic=x", headers: cookie(legacy) },
            { title: "topic=, a cookie signed with another key", method: "GET", target: "topic=x", headers: cookie(wrongKey) },
            { title: "topic=, an expired cookie", method: "GET", target: "topic=x", headers: cookie(expired) },
            { title: "topic=, a malformed Authorization header", method: "GET", target: "topic=x", headers: { Authorization: "Bearer abc" } },
            { title: "publish with Laravel's token (no 0.x publish claim)", method: "POST", target: "", headers: { Authorization: `Bearer ${laravel}` }, body: "topic=x&data=y" },
            { title: "publish with a 0.x token", method: "POST", target: "", headers: { Authorization: `Bearer ${legacy}` }, body: "topic=x&data=y" },
            { title: "publish with a 0.x cookie from a refused origin", method: "POST", target: "", headers: { ...cookie(legacy), Origin: "http://evil.test" }, body: "topic=x&data=y" },
            { title: "publish with a 0.x cookie from the app's origin", method: "POST", target: "", headers: { ...cookie(legacy), Origin: APP_ORIGIN }, body: "topic=x&data=y" },
            { title: "the subscriptions API with Laravel's cookie", method: "GET", target: "/.well-known/mercure/subscriptions", headers: cookie(laravel) },
            { title: "the protected-resource metadata", method: "GET", target: "/.well-known/oauth-protected-resource/.well-known/mercure" },
        ];
        const reference = await startReferenceHub(V0, { jwtKey: PARITY_KEY, issuer: "", resource: "", cookieName: "mercure_access_token", publishOrigins: [APP_ORIGIN], history: false });
        referenceHubLogs.add(reference);
        // The dev hub needs an issuer; it is not the one Laravel signs with (a 0.x hub reads no issuer).
        const dev = await startDevHub({ jwtKey: PARITY_KEY, issuers: ["https://another-issuer.test"], cookieName: "mercure_access_token", publishOrigins: [APP_ORIGIN], legacyProtocol: true, history: false });
        try {
            const answers = async (hubUrl: string) => Object.fromEntries(await Promise.all(requests.map(async (request) => [request.title, await answerOf(hubUrl, request)] as const)));
            const real = await answers(reference.url);
            // The reference hub's answers, written out: they are what the dev hub imitates.
            expect(Object.values(real).map((answer) => answer.status)).toEqual([401, 400, 200, 200, 401, 401, 401, 401, 200, 401, 200, 401, 404]);
            expect(real["match=, Laravel's cookie"]!.body).toBe('Missing "topic" parameter.');
            expect(Object.values(real).some((answer) => answer.challenge)).toBe(false);
            expect(await answers(dev.url)).toEqual(real);
        } finally {
            referenceHubLogs.delete(reference);
            await Promise.all([reference.close(), dev.close()]);
        }
    });
});
