import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { runDoctor } from "../../src/dev/doctor";
import { discoverHub } from "../../src/discovery/discover";
import { diagnose } from "../../src/discovery/diagnose";
import { fetchMetadata, MERCURE_DETAIL_TYPE } from "../../src/discovery/metadata";
import { DEFAULT_ISSUER, DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { snapshotUrl } from "../../src/topic/presence-pattern";
import { channelTopic } from "../../src/topic/topics";
import { WhisperPublisher } from "../../src/whisper/publish";
import type { MercureError } from "../../src/errors";
import { startDevHub } from "../../src/dev/hub";
import { signJwt } from "../../src/dev/jwt/jwt";
import { ALL_HUBS, describeEachHub, referenceHub, type HubTarget } from "../support/hubs";
import { referenceHubLogs, startReferenceHub } from "../support/reference-hub";
import { deploy, joinOrders, lastRefusedStream, pageClient, pageFetch, type Deployment, type DeploymentKind } from "./support/deployments";
import type { NodeClient } from "./support/stack";
import { waitFor } from "./support/wait";

const running: Deployment[] = [];
const clients: NodeClient[] = [];

afterEach(async () => {
    vi.unstubAllGlobals();
    for (const client of clients.splice(0)) client.echo.disconnect();
    await Promise.all(running.splice(0).map((deployment) => deployment.close()));
});

/** The hub the running suite deploys on. */
let target: HubTarget = ALL_HUBS[0]!;

async function start(kind: DeploymentKind): Promise<{ deployment: Deployment; client: NodeClient }> {
    const deployment = await deploy(kind, target);
    running.push(deployment);
    const client = await pageClient(deployment);
    clients.push(client);
    return { deployment, client };
}

/** Let the connector fail its stream, then diagnose that failure as the connector would, from the app's page. */
async function diagnoseStreamFailure(kind: DeploymentKind) {
    const { deployment, client } = await start(kind);
    const joined = await joinOrders(client);
    expect(joined.subscribed).toBe(false);
    return diagnose({
        hub: deployment.hubUrl,
        fetch: pageFetch(client, deployment),
        failure: { kind: "stream" },
        subscribeUrl: lastRefusedStream(deployment),
        pageOrigin: deployment.stack.url,
    });
}

/** Run the suite's tests on `hub`: every deployment below is started on it. */
function onHub(hub: HubTarget): void {
    beforeAll(() => {
        target = hub;
    });
}

describeEachHub("diagnose() against a deployment configured wrongly", ALL_HUBS, (hub) => {
    onHub(hub);
    it("names nothing when the deployment is right and the stream opened", async () => {
        for (const kind of ["healthy", "external_healthy"] as const) {
            const { deployment, client } = await start(kind);
            expect((await joinOrders(client)).subscribed).toBe(true);
            expect(await diagnose({ hub: deployment.hubUrl, fetch: pageFetch(client, deployment), failure: { kind: "stream" }, pageOrigin: deployment.stack.url })).toBeNull();
        }
    });

    it("names the audience when the hub expects another resource identifier than the URL clients use", async () => {
        const result = await diagnoseStreamFailure("audience");
        expect(result).toMatchObject({ code: "invalid_token", status: 401, retry: false });
        expect(result?.message).toContain('the hub expects the audience "http://hub.example/.well-known/mercure" but is reached at "http://127.0.0.1:');
        expect(result?.message).toContain("MERCURE_PUBLIC_URL");
    });

    it("names the cookie the hub reads when Laravel's cookie name differs", async () => {
        const result = await diagnoseStreamFailure("cookie_name");
        expect(result).toMatchObject({ code: "cookie_missing", status: 401, retry: false });
        // The page cannot see its httpOnly cookie's name: the hub's comes from its metadata.
        expect(result?.message).toBe(
            "No access token reached the hub (HTTP 401 without error): check that Laravel's MERCURE_COOKIE_NAME is \"mercure_access_token\", the hub's cookie_name, and that the SameSite=Strict cookie with path /.well-known/mercure is sent to the hub (same site as the page).",
        );
    });

    it("names both names when the app's cookie name is known", async () => {
        const { deployment, client } = await start("cookie_name");
        await joinOrders(client);
        const result = await diagnose({ hub: deployment.hubUrl, fetch: pageFetch(client, deployment), failure: { kind: "stream" }, pageOrigin: deployment.stack.url, cookieName: deployment.cookieName });
        expect(result?.message).toContain('Laravel sets "laravel_mercure" (MERCURE_COOKIE_NAME) but the hub reads "mercure_access_token"');
    });

    it("names CORS when the hub does not list the app's origin", async () => {
        const { deployment, client } = await start("cors");
        // Node's fetch and EventSource do not enforce CORS, so the stream opens here; a browser's would fail.
        await joinOrders(client);
        const result = await diagnose({ hub: deployment.hubUrl, fetch: pageFetch(client, deployment), failure: { kind: "stream" }, pageOrigin: deployment.stack.url });
        expect(result).toMatchObject({ code: "cors_refused", retry: false });
        expect(result?.message).toContain(`add ${deployment.stack.url} to the hub's cors_origins`);
    });

    it("names the publish origin when the hub refuses the app's whispers", async () => {
        for (const kind of ["healthy", "publish_origin"] as const) {
            const { deployment, client } = await start(kind);
            expect((await joinOrders(client)).subscribed).toBe(true);
            // The connector's whisper publisher, posting from the app's origin with the cookie.
            const reported: MercureError[] = [];
            const publisher = new WhisperPublisher(
                {
                    target: () => ({ hub: new URL(deployment.hubUrl), fetch: pageFetch(client, deployment), topicPrefix: "https://laravel.alt/echo/", clientEvents: true }),
                    reauthorize: async () => false,
                    report: (_channel, error) => reported.push(error),
                },
                { socketId: () => "socket", crypto: { seal: async () => "" } },
            );
            const result = await publisher.whisper("private-orders.1", "typing", { name: "Ann" });
            if (kind === "healthy") {
                expect(result).toEqual({ kind: "sent" });
                continue;
            }
            expect(reported.map((error) => [error.code, error.status])).toEqual([["whisper_failed", 400]]);
            const diagnosis = await diagnose({ hub: deployment.hubUrl, fetch: pageFetch(client, deployment), failure: { kind: "whisper_post", status: reported[0]!.status! }, pageOrigin: deployment.stack.url });
            expect(diagnosis).toMatchObject({ code: "publish_origin_refused", status: 400, retry: false });
            expect(diagnosis?.message).toContain(`add ${deployment.stack.url} to the hub's publish_origins`);
        }
    });

    it("names a pre-1.0 hub and says to upgrade it, not to retry", async () => {
        const result = await diagnoseStreamFailure("legacy");
        expect(result).toEqual({
            code: "hub_outdated",
            message: expect.stringContaining('asks for the "topic" parameter, as Mercure 0.x hubs do: upgrade the hub to Mercure 1.0'),
            status: 400,
            retry: false,
        });
    });

    it("probes with as many matchers as the stream, never subscribing to the channel's topic", async () => {
        const { deployment, client } = await start("audience");
        const joined = await joinOrders(client);
        // The connector probes the hub itself after the stream_error: wait until that probe has named the cause, so
        // that it cannot reach the hub after the count below (a disconnect() aborts it, maybe after it was sent).
        await waitFor(() => joined.errors.some((error) => error.code !== "stream_error"), "the connector's own probe to name the cause", 20_000);
        client.echo.disconnect(); // No reconnect attempt in between.
        const failedUrl = lastRefusedStream(deployment);
        const before = deployment.hub.stats.subscribeConnections.length;
        await diagnose({ hub: deployment.hubUrl, fetch: pageFetch(client, deployment), failure: { kind: "stream" }, subscribeUrl: failedUrl, pageOrigin: deployment.stack.url });
        const probes = deployment.hub.stats.subscribeConnections.slice(before);
        expect(probes).toHaveLength(1);
        const failed = new URL(failedUrl).searchParams;
        const probed = new URLSearchParams(probes[0]!.query);
        expect(probed.getAll("match")).toHaveLength([...failed.keys()].filter((name) => name.startsWith("match")).length);
        expect(probes[0]!.query).not.toContain("orders");
    });
});

/**
 * Join `private-orders.1` through the connector and wait for the error that names the cause (which replaces the
 * stream_error the connector held while its probe ran, issue 51); then run `doctor` on the same deployment with the
 * cookie the app set.
 */
async function connectorAndDoctor(kind: DeploymentKind) {
    const { deployment, client } = await start(kind);
    const errors: MercureError[] = [];
    client.echo.private("orders.1").error((error: MercureError) => errors.push(error));
    await waitFor(() => errors.some((error) => error.code !== "stream_error"), "the connector to name the cause", 20_000);
    const cause = errors.find((error) => error.code !== "stream_error")!;
    const value = client.jar.get(deployment.cookieName);
    const report = await runDoctor({ appUrl: deployment.appUrl, cookie: value === undefined ? null : { name: deployment.cookieName, value } });
    const doctor = report.checks
        .filter((check) => check.verdict === "fail")
        .map((check) => `${check.name}: ${check.detail} fix: ${check.fix ?? ""}`)
        .join("\n");
    return { deployment, client, errors, cause, doctor };
}

describeEachHub("the connector's error() names the cause, as doctor does", ALL_HUBS, (hub) => {
    onHub(hub);
    it("wrong audience: invalid_token, then status failed and no more retries", async () => {
        const { client, errors, cause, doctor } = await connectorAndDoctor("audience");
        expect(errors.map((error) => error.code)).toEqual(["invalid_token"]);
        expect(cause).toMatchObject({ code: "invalid_token", channel: "private-orders.1", status: 401 });
        expect(cause.message).toContain('the hub expects the audience "http://hub.example/.well-known/mercure"');
        expect(client.echo.connector.connectionStatus()).toBe("failed");
        const fix = `set Laravel's MERCURE_PUBLIC_URL to "http://hub.example/.well-known/mercure"`;
        expect(cause.message).toContain(fix);
        expect(doctor).toContain(fix);
    });

    it("wrong cookie name: cookie_missing naming the cookie the hub reads", async () => {
        const { cause, doctor } = await connectorAndDoctor("cookie_name");
        expect(cause).toMatchObject({ code: "cookie_missing", status: 401 });
        expect(cause.message).toContain('MERCURE_COOKIE_NAME is "mercure_access_token"');
        expect(doctor).toContain('the hub reads "mercure_access_token"');
    });

    it("wrong key or issuer: invalid_token naming what to check, status failed; doctor, given the cookie, names Laravel's issuer", async () => {
        for (const kind of ["key", "issuer"] as const) {
            const { client, cause, doctor } = await connectorAndDoctor(kind);
            // The page cannot read its httpOnly cookie: the connector names every setting the hub may refuse.
            expect(cause).toMatchObject({ code: "invalid_token", channel: "private-orders.1", status: 401 });
            expect(cause.message).toContain("that the hub trusts Laravel's issuer (MERCURE_JWT_ISSUER, else APP_URL) and that both use the same MERCURE_JWT_SECRET");
            expect(client.echo.connector.connectionStatus()).toBe("failed");
            expect(doctor).toContain(`make the hub trust the issuer "${DEFAULT_ISSUER}" and verify tokens with Laravel's MERCURE_JWT_SECRET`);
        }
    });

    it("pre-1.0 hub: hub_outdated, one error, and no reconnect loop", async () => {
        const { deployment, client, errors, cause, doctor } = await connectorAndDoctor("legacy");
        expect(cause.code).toBe("hub_outdated");
        expect(cause.message).toContain("upgrade the hub to Mercure 1.0");
        expect(doctor).toContain("upgrade the hub to Mercure 1.0");
        expect(client.echo.connector.connectionStatus()).toBe("failed");
        const streams = deployment.hub.stats.subscribeConnections.length;
        // Well past the first backoff (1 s ± 20 %): a reconnect loop would have reopened by now.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        expect(deployment.hub.stats.subscribeConnections.length).toBe(streams);
        expect(errors.map((error) => error.code)).toEqual(["hub_outdated"]);
    });

    it("missing publish origin: a whisper gets whisper_failed, then publish_origin_refused naming the page origin, as doctor does", async () => {
        for (const kind of ["healthy", "publish_origin"] as const) {
            const deployment = await deploy(kind, target);
            running.push(deployment);
            // What a browser page of the app has and sends: its location (the connector's diagnosis names
            // location.origin) and an Origin header on its POSTs (Node's fetch sends none; see pageClient).
            vi.stubGlobal("location", { origin: deployment.stack.url, href: deployment.appUrl });
            const client = await pageClient(deployment, { origin: true });
            clients.push(client);
            const joined = await joinOrders(client);
            expect(joined.subscribed, kind).toBe(true);
            const publishes = deployment.hub.stats.publishes;
            client.echo.private("orders.1").whisper("typing", { name: "Ann" });
            if (kind === "healthy") {
                // The same client and Origin header on a hub that lists the app's origin: the whisper goes through.
                await waitFor(() => deployment.hub.stats.publishes > publishes, "the whisper to be published", 15_000);
                expect(joined.errors).toEqual([]);
                continue;
            }
            await waitFor(() => joined.errors.some((error) => error.code === "publish_origin_refused"), "the connector to name the cause", 20_000);
            expect(joined.errors.map((error) => [error.code, error.channel, error.status])).toEqual([
                ["whisper_failed", "private-orders.1", 400],
                ["publish_origin_refused", "private-orders.1", 400],
            ]);
            const fix = `add ${deployment.stack.url} to the hub's publish_origins`;
            expect(joined.errors[1]!.message).toContain(fix);
            expect(client.echo.connector.connectionStatus()).toBe("connected"); // whispers refused, the stream stays
            const value = client.jar.get(deployment.cookieName);
            const report = await runDoctor({ appUrl: deployment.appUrl, cookie: value === undefined ? null : { name: deployment.cookieName, value } });
            const failed = report.checks.filter((check) => check.verdict === "fail");
            expect(failed.map((check) => check.name)).toEqual(["publish origin (whispers)"]);
            expect(failed[0]!.fix).toContain(fix);
        }
    });
});

describeEachHub("discovery from what the hub serves", ALL_HUBS, (hub) => {
    onHub(hub);

    it("finds the hub in the Link header of its subscriptions API, and reads its protected-resource metadata, on one origin or two", async () => {
        for (const kind of ["healthy", "external_healthy"] as const) {
            const { deployment, client } = await start(kind);
            let here = false;
            client.echo.join("room.1").here(() => (here = true));
            await waitFor(() => here, "here() on the presence channel", 15_000);
            const fetch = pageFetch(client, deployment);
            // The snapshot of the room's members: the hub announces itself there with the cursor of its stream.
            const snapshot = snapshotUrl(new URL(deployment.hubUrl), channelTopic(DEFAULT_TOPIC_PREFIX, "presence-room.1"));
            const found = await discoverHub(snapshot, { fetch, credentials: "include" });
            expect(found.hub.href, kind).toBe(deployment.hubUrl);
            expect(found.lastEventId, kind).toEqual(expect.any(String));

            const metadata = await fetchMetadata(new URL(deployment.hubUrl), { fetch });
            expect(metadata.kind, kind).toBe("found");
            if (metadata.kind !== "found") continue;
            expect(metadata.url).toBe(`${new URL(deployment.hubUrl).origin}/.well-known/oauth-protected-resource/.well-known/mercure`);
            expect(metadata.validation).toMatchObject({ problems: [], resourceMatches: true });
            expect(metadata.validation.metadata).toMatchObject({
                resource: deployment.hubUrl,
                mercureCookie: "mercure_access_token",
                mercureSubscriptions: true,
                authorizationDetailsTypesSupported: [MERCURE_DETAIL_TYPE],
            });
        }
    });
});

/** What diagnosis reads of an answer: its status, its challenge, its CORS headers, its content type. */
type ReadAnswer = readonly [status: number, challenge: string | null, allowOrigin: string | null, allowCredentials: string | null, exposed: string | null, type: string];

describe.skipIf(!referenceHub().available)("the dev hub answers what diagnosis reads as the reference hub does", () => {
    it("to no token, refused tokens, 0.x and malformed requests, refused publishes, the subscriptions API and CORS", async () => {
        const key = "dev-and-reference-hub-key-of-at-least-32-bytes";
        const resource = "https://hub.test/.well-known/mercure";
        const app = "http://app.test";
        const now = Math.floor(Date.now() / 1000);
        const token = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}, signingKey = key) =>
            signJwt({ iss: DEFAULT_ISSUER, aud: resource, iat: now, exp: now + 600, authorization_details: [{ type: MERCURE_DETAIL_TYPE, actions: ["subscribe"], topics: [{ match: "x" }] }], ...claims }, signingKey, "HS256", header);
        const cookie = (value: string) => ({ Cookie: `mercure_access_token=${value}` });
        const form = { "Content-Type": "application/x-www-form-urlencoded" };
        const requests: readonly { title: string; method: string; target: string; headers: Record<string, string>; body?: string }[] = [
            { title: "no token", method: "GET", target: "?match=x", headers: {} },
            { title: "another key", method: "GET", target: "?match=x", headers: cookie(token({}, {}, "another-key-of-at-least-32-bytes-long!!")) },
            { title: "expired", method: "GET", target: "?match=x", headers: cookie(token({ exp: now - 10 })) },
            { title: "another audience", method: "GET", target: "?match=x", headers: cookie(token({ aud: "https://other.test/.well-known/mercure" })) },
            { title: "another issuer", method: "GET", target: "?match=x", headers: cookie(token({ iss: "https://other.test" })) },
            { title: "typ JWT", method: "GET", target: "?match=x", headers: cookie(token({}, { typ: "JWT" })) },
            { title: "accepted", method: "GET", target: "?match=x", headers: cookie(token()) },
            { title: "topic=", method: "GET", target: "?topic=x", headers: cookie(token()) },
            { title: "no matcher", method: "GET", target: "", headers: cookie(token()) },
            { title: "101 matchers", method: "GET", target: "?" + Array.from({ length: 101 }, (_, i) => `match=t${i}`).join("&"), headers: cookie(token()) },
            { title: "malformed Authorization", method: "GET", target: "?match=x", headers: { Authorization: "Bearer abc def" } },
            { title: "publish from a refused origin", method: "POST", target: "", headers: { ...cookie(token()), ...form, Origin: "http://evil.test" }, body: "topic=x&data=y" },
            { title: "publish without a grant", method: "POST", target: "", headers: { Authorization: `Bearer ${token()}`, ...form }, body: "topic=x&data=y" },
            { title: "doctor's dummy publish", method: "POST", target: "", headers: { Cookie: "mercure_access_token=laravel-echo-mercure-doctor", Origin: app, ...form }, body: "" },
            { title: "subscriptions API without a grant", method: "GET", target: "/subscriptions", headers: cookie(token()) },
            { title: "CORS allowed", method: "GET", target: "?match=x", headers: { Origin: app } },
            { title: "CORS refused", method: "GET", target: "?match=x", headers: { Origin: "http://evil.test" } },
        ];
        /** Every answer of the hub at `hubUrl`, by title; origins in challenges written as ORIGIN. */
        const answers = async (hubUrl: string): Promise<Record<string, ReadAnswer>> => {
            const read: Record<string, ReadAnswer> = {};
            for (const request of requests) {
                const abort = new AbortController();
                const response = await fetch(hubUrl + request.target, { method: request.method, headers: request.headers, ...(request.body !== undefined ? { body: request.body } : {}), signal: abort.signal });
                abort.abort();
                const header = (name: string) => response.headers.get(name)?.replace(/http:\/\/127\.0\.0\.1:\d+/g, "ORIGIN") ?? null;
                read[request.title] = [response.status, header("www-authenticate"), header("access-control-allow-origin"), header("access-control-allow-credentials"), header("access-control-expose-headers"), (header("content-type") ?? "").split(";")[0]!];
            }
            return read;
        };
        const settings = { jwtKey: key, resource, cookieName: "mercure_access_token", corsOrigins: [app], publishOrigins: [app], history: false };
        const reference = await startReferenceHub(referenceHub().reference!, { ...settings, issuer: DEFAULT_ISSUER });
        referenceHubLogs.add(reference);
        const dev = await startDevHub({ ...settings, issuers: [DEFAULT_ISSUER] });
        try {
            const real = await answers(reference.url);
            expect(Object.values(real).map(([status]) => status)).toEqual([401, 401, 401, 401, 401, 401, 200, 400, 400, 400, 400, 400, 403, 401, 403, 401, 401]);
            expect(await answers(dev.url)).toEqual(real);
        } finally {
            referenceHubLogs.delete(reference);
            await Promise.all([reference.close(), dev.close()]);
        }
    });
});
