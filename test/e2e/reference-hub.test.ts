import { afterEach, describe, expect, it } from "vitest";
import { startDevHub } from "../../src/dev/hub";
import type { DevServer } from "../../src/dev/server";
import { DEV_HUB, referenceHub } from "../support/hubs";
import { startStack } from "./support/stack";
import { waitFor } from "./support/wait";

// The reference hub target is what it claims: the Go hub behind the dev server's same-origin proxy, whose
// counters follow the real hub's streams. The other suites rely on both.

const REFERENCE = referenceHub();
const servers: DevServer[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function stack(...args: Parameters<typeof startStack>): Promise<DevServer> {
    const server = await startStack(...args);
    servers.push(server);
    return server;
}

/** Open an event stream through `server` and read it until the hub ends it; resolves with the status. */
async function openStream(server: DevServer, query: string, signal?: AbortSignal): Promise<{ status: number; ended: Promise<void> }> {
    const response = await fetch(`${server.hubUrl}?${query}`, signal === undefined ? {} : { signal });
    const reader = response.body?.getReader();
    const ended = (async () => {
        while (reader !== undefined && !(await reader.read()).done);
    })().catch(() => undefined);
    return { status: response.status, ended };
}

describe.skipIf(!REFERENCE.available)("the reference hub target", () => {
    it("is the Go hub: its protected-resource metadata names the public URL, with the Go hub's security headers the dev hub does not send", async () => {
        const reference = await stack({}, REFERENCE);
        const metadata = await fetch(`${reference.url}/.well-known/oauth-protected-resource/.well-known/mercure`);
        expect(metadata.status).toBe(200);
        expect(await metadata.json()).toMatchObject({ resource: reference.hubUrl, mercure_cookie: "mercure_access_token", mercure_subscriptions: true });
        expect(metadata.headers.get("x-frame-options")).toBe("DENY");

        const dev = await stack({}, DEV_HUB);
        const devMetadata = await fetch(`${dev.url}/.well-known/oauth-protected-resource/.well-known/mercure`);
        expect(devMetadata.status).toBe(200);
        expect(devMetadata.headers.get("x-frame-options")).toBeNull();
    });

    it("counts the real hub's streams: status, open streams with their selectors, and a stream the hub ended by its write timeout", async () => {
        const reference = await stack({ hub: { anonymous: true, writeTimeout: 2_000, dispatchTimeout: 500 } }, REFERENCE);
        const refused = await openStream(reference, "");
        expect(refused.status).toBe(400);
        const stream = await openStream(reference, "match=https%3A%2F%2Flaravel.alt%2Fecho%2Fnews&match=%2Fother");
        expect(stream.status).toBe(200);
        expect(reference.hub.stats.openStreams.map((open) => open.selectors)).toEqual([["https://laravel.alt/echo/news", "/other"]]);
        expect(reference.hub.stats.subscribeConnections.map((record) => record.status)).toEqual([400, 200]);
        // The Go hub ends the stream 80–100 % into its 2 s write timeout: the proxy sees the end, the client sees it too.
        await stream.ended;
        expect(reference.hub.stats.expiredStreams).toBe(1);
        expect(reference.hub.stats.openConnections).toBe(0);
    });

    it("does not count a stream the client closed as ended by the hub", async () => {
        const reference = await stack({ hub: { anonymous: true } }, REFERENCE);
        const abort = new AbortController();
        const stream = await openStream(reference, "match=%2Fnews", abort.signal);
        expect(stream.status).toBe(200);
        abort.abort();
        await waitFor(() => reference.hub.stats.openConnections === 0, "the proxy to forget the closed stream");
        expect(reference.hub.stats.expiredStreams).toBe(0);
    });
});

describe("the dev server in front of a hub that runs elsewhere (externalHub)", () => {
    it("answers 502 naming the hub when the hub cannot be reached, and records the refused subscription", async () => {
        const elsewhere = await startDevHub({ jwtKey: "k".repeat(32), issuers: ["http://laravel.test"] });
        const url = elsewhere.url;
        await elsewhere.close();
        const server = await stack({ externalHub: { url } });
        const response = await fetch(`${server.hubUrl}?match=%2Fnews`);
        expect(response.status).toBe(502);
        expect(await response.text()).toContain(url);
        expect(server.hub.stats.subscribeConnections.map((record) => record.status)).toEqual([502]);
    });
});
