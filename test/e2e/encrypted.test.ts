import { createHash } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import { deriveChannelKey, sealJwe } from "../../src/dev/laravel/encrypter";
import { DEFAULT_ISSUER, DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { signPublisherToken } from "../../src/dev/laravel/publisher-token";
import { channelTopic } from "../../src/dev/laravel/topics";
import type { DevServer } from "../../src/dev/server";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { sleep, waitFor } from "./support/wait";
import { ALL_HUBS, describeEachHub, type HubTarget } from "../support/hubs";

// Encrypted channels end to end in Node.js: the dev server encrypts as Laravel does (HKDF channel keys,
// compact JWE), the hub (the dev hub, then the reference hub) carries only ciphertext, the connector decrypts
// with WebCrypto.

/** The master key of the §6.5 vectors: sha256("mercure-e2e-test-key"), as Laravel's base64 `encryption_key`. */
const MASTER = createHash("sha256").update("mercure-e2e-test-key").digest();
const ENCRYPTION_KEY = "base64:" + MASTER.toString("base64");
/** The JWT key, known here so that the tests can publish at the hub as any publisher could. */
const JWT_KEY = "an-e2e-jwt-key-of-at-least-32-bytes!!";
const ORDERS = "private-encrypted-orders.1";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
});

/** A stack on `hub` with encryption on; Ann (user 1) may join `orders.1` in all its variants. */
async function encryptedStack(hub: HubTarget, options: { history?: boolean; expiresIn?: number } = {}): Promise<DevServer> {
    const server = await startStack(
        {
            jwtKey: JWT_KEY,
            channels: { "side.{n}": () => true },
            hub: options.history === false ? { history: false, dispatchTimeout: 1_000, lifetimeFraction: () => 1 } : {},
            app: { encryptionKey: ENCRYPTION_KEY, ...(options.expiresIn !== undefined ? { expiresIn: options.expiresIn } : {}) },
        },
        hub,
    );
    cleanup.push(() => server.close());
    return server;
}

/** Ann, logged in, disconnected after the test. */
async function ann(server: DevServer): Promise<NodeClient> {
    const client = await nodeClient(server, 1);
    cleanup.push(() => client.echo.disconnect());
    return client;
}

/**
 * Publish a raw update straight to the hub with a publisher token, as anything holding the JWT key could
 * (not through the app's broadcaster, which always encrypts for encrypted channels).
 */
async function publishAtHub(server: DevServer, channel: string, data: unknown): Promise<void> {
    const token = signPublisherToken({ issuer: DEFAULT_ISSUER, audience: server.hubUrl, now: Date.now() }, JWT_KEY);
    const form = new URLSearchParams({ topic: channelTopic(DEFAULT_TOPIC_PREFIX, channel), data: JSON.stringify(data), private: "on" });
    const response = await fetch(server.hubUrl, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-www-form-urlencoded" },
        body: form.toString(),
    });
    expect(response.status).toBe(200);
}

/** Record what an encrypted channel delivers (`event:payload`) and its errors (`!code`), in one log. */
function record(client: NodeClient, name: string): { log: string[]; errors: MercureError[] } {
    const log: string[] = [];
    const errors: MercureError[] = [];
    client.echo
        .encryptedPrivate(name)
        .listenToAll((event: string, payload: unknown) => log.push(`${event}:${JSON.stringify(payload)}`))
        .error((error: MercureError) => {
            errors.push(error);
            log.push(`!${error.code}`);
        });
    return { log, errors };
}

describeEachHub("encrypted channels over real HTTP", ALL_HUBS, (hub) => {
    it("deliver the server's encrypted broadcasts decrypted to listen(), next to a public channel on the same stream", async () => {
        const server = await encryptedStack(hub);
        const client = await ann(server);
        const got: unknown[] = [];
        client.echo.encryptedPrivate("orders.1").listen("OrderShipped", (payload: unknown) => got.push(payload));
        client.echo.channel("news").listen(".headline", (payload: unknown) => got.push(payload));
        await waitFor(() => client.echo.connectionStatus() === "connected", "connected");
        expect(server.app.stats.authRequests.map((request) => request.channelNames)).toEqual([[ORDERS, "news"]]);
        expect(server.hub.stats.subscribeConnections).toHaveLength(1);

        await server.broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { id: 1, secret: "ENCRYPTED-E2E-MARKER" } });
        await server.broadcast({ channels: ["news"], event: "headline", payload: { title: "plain" } });
        await waitFor(() => got.length === 2, "both broadcasts");
        // The decryption is asynchronous, so the plaintext channel's event may come first.
        expect(got).toEqual(expect.arrayContaining([{ id: 1, secret: "ENCRYPTED-E2E-MARKER" }, { title: "plain" }]));
    });

    it("never deliver a plaintext envelope injected at the hub into the encrypted channel's topic", async () => {
        const server = await encryptedStack(hub);
        const client = await ann(server);
        const { log } = record(client, "orders.1");
        await waitFor(() => client.echo.connectionStatus() === "connected", "connected");
        await publishAtHub(server, ORDERS, { channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { forged: true } });
        await server.broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { sentinel: true } });
        await waitFor(() => log.length >= 1, "the sentinel"); // the hub delivers in order: the forgery came first
        expect(log).toEqual(['OrderShipped:{"sentinel":true}']);
    });

    it("report decrypt_failed for a JWE under another channel's key, deliver nothing of it, and keep decrypting", async () => {
        const server = await encryptedStack(hub);
        const client = await ann(server);
        const { log, errors } = record(client, "orders.1");
        await waitFor(() => client.echo.connectionStatus() === "connected", "connected");
        const otherKey = deriveChannelKey(MASTER, "private-encrypted-orders.2");
        const jwe = sealJwe(otherKey, JSON.stringify({ event: "App\\Events\\OrderShipped", payload: { forged: true } }));
        await publishAtHub(server, ORDERS, { channels: [ORDERS], data: jwe });
        await server.broadcast({ channels: [ORDERS], event: "App\\Events\\OrderShipped", payload: { sentinel: true } });
        await waitFor(() => log.length >= 2, "the failure and the sentinel"); // decrypted in order of arrival
        expect(log).toEqual(["!decrypt_failed", 'OrderShipped:{"sentinel":true}']);
        expect(errors[0]!.channel).toBe(ORDERS);
        expect(errors[0]!.message).not.toContain("forged");
    });

    it("deliver 300 encrypted events exactly once and in order while channels come and go and the cookie is renewed (hub without history)", async () => {
        // As in continuity.test.ts: 20 s cookies, a hub with a 1 s dispatch timeout (the dev hub ends each stream 1 s
        // before its token's exp; the reference hub 15 s or more after it opens).
        const server = await encryptedStack(hub, { history: false, expiresIn: 20 });
        const client = await ann(server);
        const received: number[] = [];
        const errors: string[] = [];
        client.echo
            .encryptedPrivate("orders.1")
            .listen("Numbered", (payload: { n: number }) => received.push(payload.n))
            .error((error: MercureError) => errors.push(`${error.code}: ${error.message}`));
        await waitFor(() => client.echo.connectionStatus() === "connected", "connected");

        const count = 300;
        let producing = true;
        const producer = (async () => {
            try {
                for (let n = 1; n <= count; n++) {
                    await server.broadcast({ channels: [ORDERS], event: "App\\Events\\Numbered", payload: { n } });
                    await sleep(35);
                }
            } finally {
                producing = false;
            }
        })();
        cleanup.push(() => producer);
        let churn = 0;
        while (producing) {
            await sleep(400);
            // Plain and encrypted side channels: every change is a new auth (new keys) and a make-before-break reopen.
            const side = churn % 4 < 2 ? `side.${churn >> 1}` : `encrypted-side.${churn >> 1}`;
            if (churn % 2 === 0) client.echo.private(side);
            else client.echo.leave(side);
            churn++;
        }
        await producer;
        await waitFor(() => received.length >= count, "every number", 10_000);
        await sleep(200);
        const missing = Array.from({ length: count }, (_, i) => i + 1).filter((n) => !received.includes(n));
        expect({ missing, duplicates: received.length - new Set(received).size }).toEqual({ missing: [], duplicates: 0 });
        expect(received).toEqual(Array.from({ length: count }, (_, i) => i + 1));
        expect(errors).toEqual([]);
        expect(churn).toBeGreaterThanOrEqual(10);
        expect(server.app.stats.authRequests.length).toBeGreaterThanOrEqual(churn);
        expect(server.hub.stats.expiredStreams).toBe(0);
    }, 60_000);
});
