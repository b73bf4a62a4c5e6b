import { EventSource as NodeEventSource } from "eventsource";
import { afterEach, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import type { DevServer } from "../../src/dev/server";
import type { EventSourceInitLike, FetchLike } from "../../src/transport/platform";
import { ALL_HUBS, describeEachHub } from "../support/hubs";
import { expectExactly, numberedStream, recordNumbers } from "./support/numbered";
import { CookieJar } from "./support/node-client";
import { nodeClient, startStack, type NodeClient } from "./support/stack";
import { sleep, waitFor } from "./support/wait";

// The reference hub's edge cases (issue 27), each one test run on the dev hub and on the reference Go hub: what the
// real hub does at the limits (a stale cookie, a replay longer than its buffer, no history) and how the connector
// keeps every update through it.

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * The app's clock lags the hub's by this much, so its cookies outlive their tokens: the browser (here the jar) keeps
 * sending a cookie the hub already refuses. Every Laravel cookie does this in the last second of its life (the token's
 * `iat` is floored to the second, the cookie's Max-Age counts from its arrival); the lag stretches that second so the
 * test does not depend on hitting it.
 */
const APP_CLOCK_LAG_MS = 17_000;

/** A Node client whose network can go down: while offline, its every request (auth, stream, reconnect) fails. */
async function offlineableClient(server: DevServer, userId: number): Promise<NodeClient & { offline(down: boolean): void }> {
    const jar = new CookieJar();
    let offline = false;
    const network = (input: string | URL, init?: RequestInit): Promise<Response> =>
        offline ? Promise.reject(new TypeError("fetch failed: the network is down")) : jar.fetch(input, init);
    class OfflineableEventSource extends NodeEventSource {
        constructor(url: string | URL, init?: EventSourceInitLike) {
            super(url, { withCredentials: init?.withCredentials ?? false, fetch: (input, requestInit) => network(input, requestInit as RequestInit) });
        }
    }
    const client = await nodeClient(server, userId, { eventSource: OfflineableEventSource, fetch: network as FetchLike });
    // nodeClient logged in through its own jar: log this one in too.
    const login = await jar.fetch(`${server.url}/dev/login?user=${userId}`, { method: "POST" });
    expect(login.status).toBe(200);
    return { ...client, jar, offline: (down) => (offline = down) };
}

describeEachHub("the reference hub's edge cases (Node)", ALL_HUBS, (hub) => {
    it("recovers from a stale hub cookie that the hub refuses with 401 on an anonymous hub: a public channel loses nothing", async () => {
        // 20 s cookies whose tokens the hub sees expire after 3 s: it ends each stream by then, and the EventSource's
        // own reconnect presents the stale cookie, refused with 401 although the hub accepts anonymous subscribers.
        const server = await startStack({ hub: { anonymous: true }, app: { expiresIn: 20, now: () => Date.now() - APP_CLOCK_LAG_MS } }, hub);
        cleanup.push(() => server.close());
        const ann = await nodeClient(server);
        cleanup.push(() => ann.echo.disconnect());
        const errors: MercureError[] = [];
        const received = recordNumbers(ann, "public", "news");
        ann.echo.channel("news").error((error: MercureError) => errors.push(error));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");

        // 14 s of updates: two rounds of stream end, refused reconnect and recovery.
        const count = 70;
        const stream = numberedStream(server, "news", count, 200);
        cleanup.push(() => stream.stop());
        await stream.done;
        await waitFor(() => received.length >= count || ann.echo.connectionStatus() === "failed", "every number", 15_000);
        await sleep(200);

        expectExactly(received, count);
        expect(ann.statuses).not.toContain("failed");
        // The refusals were reported as what they are (stream errors), never diagnosed as a misconfiguration.
        expect(errors.filter((error) => error.code !== "stream_error").map((error) => `${error.code}: ${error.message}`)).toEqual([]);
        // The scenario happened: the hub refused a reconnect with the stale cookie, and a new auth replaced it.
        const refused = server.hub.stats.subscribeConnections.filter((connection) => connection.status === 401);
        expect(refused.length).toBeGreaterThanOrEqual(1);
        expect(server.app.stats.authRequests.length).toBeGreaterThanOrEqual(1 + refused.length);
    }, 45_000);

    it("loses, duplicates and reorders nothing of 1 500 updates published while the client was offline (hub with history)", async () => {
        // The hub replays at most 1 000 updates on one connection (its per-connection buffer), then ends the stream;
        // the reconnect with the last id received continues the replay.
        const server = await startStack({}, hub);
        cleanup.push(() => server.close());
        const ann = await offlineableClient(server, 1);
        cleanup.push(() => ann.echo.disconnect());
        const errors: MercureError[] = [];
        const received = recordNumbers(ann, "private", "orders.1");
        ann.echo.private("orders.1").error((error: MercureError) => errors.push(error));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        const before = numberedStream(server, "private-orders.1", 10, 0);
        await before.done;
        await waitFor(() => received.length === 10, "the first 10");

        // The client's network goes down (its stream with it); the app goes on publishing.
        ann.offline(true);
        server.hub.dropConnections();
        await waitFor(() => ann.echo.connectionStatus() === "reconnecting", "reconnecting");
        const connections = server.hub.stats.subscribeConnections.length;
        const count = 1_510;
        for (let n = 11; n <= count; n++) await server.broadcast({ channels: ["private-orders.1"], event: "App\\Events\\Numbered", payload: { n } });
        expect(received).toHaveLength(10);
        ann.offline(false);

        await waitFor(() => received.length >= count, "every number", 20_000);
        await sleep(300);
        expectExactly(received, count);
        // While the client was offline its reconnect failed too, which the connector may name as hub_unreachable (the
        // client could not reach the hub; issue 30): anything else is a wrong report.
        const expected = new Set(["stream_error", "hub_unreachable"]);
        expect(errors.filter((error) => !expected.has(error.code)).map((error) => `${error.code}: ${error.message}`)).toEqual([]);
        // The replay took two connections: 1 000 updates, the stream's end, then the other 500 after the last id.
        const replays = server.hub.stats.subscribeConnections.slice(connections).filter((connection) => connection.status === 200);
        expect(replays.length).toBeGreaterThanOrEqual(2);
        expect(ann.echo.connectionStatus()).toBe("connected");
    }, 90_000);

    it("without history, where the hub answers every cursor with earliest, reopens once per cause and never loops", async () => {
        const server = await startStack({ hub: { history: false } }, hub);
        cleanup.push(() => server.close());
        const ann = await nodeClient(server, 1);
        cleanup.push(() => ann.echo.disconnect());
        const errors: MercureError[] = [];
        const received = recordNumbers(ann, "private", "orders.1");
        ann.echo.private("orders.1").error((error: MercureError) => errors.push(error));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        await numberedStream(server, "private-orders.1", 3, 0).done;
        await waitFor(() => received.length === 3, "the first 3");

        // The hub keeps no history: a reopen's cursor is answered with earliest (nothing replayed, possibly lost).
        const probe = new URL(server.hubUrl);
        probe.searchParams.append("match", "https://laravel.alt/echo/channel/private-orders.1");
        probe.searchParams.append("last_event_id", "urn:uuid:00000000-0000-7000-8000-000000000000");
        const aborter = new AbortController();
        const answer = await ann.jar.fetch(probe, { signal: aborter.signal });
        expect([answer.status, answer.headers.get("mercure-last-event-id")]).toEqual([200, "earliest"]);
        aborter.abort();

        const auths = () => server.app.stats.authRequests.length;
        const connections = () => server.hub.stats.subscribeConnections.length;
        const before = { auths: auths(), connections: connections() };
        // A join reopens with the cursor (one auth, one stream); a drop makes the EventSource reconnect with it (one stream).
        let joined = false;
        ann.echo.channel("news").subscribed(() => (joined = true));
        await waitFor(() => joined, "the join's reopen");
        await waitFor(() => ann.echo.connectionStatus() === "connected" && server.hub.stats.openConnections === 1, "the replaced stream to close");
        server.hub.dropConnections();
        await waitFor(() => connections() === before.connections + 2, "the reconnect after the drop", 10_000);
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected again");
        const settled = { auths: auths(), connections: connections() };
        // A window twice the EventSource's reconnect delay: nothing more is requested.
        await sleep(6_000);
        expect({ auths: auths(), connections: connections() }).toEqual(settled);
        expect(settled).toEqual({ auths: before.auths + 1, connections: before.connections + 2 });
        expect(server.hub.stats.subscribeConnections.slice(before.connections).map((connection) => connection.status)).toEqual([200, 200]);

        await numberedStream(server, "private-orders.1", 3, 0).done;
        await waitFor(() => received.length === 6, "the numbers after the reopens");
        // One honest report: the dropped stream's, nothing about the reopens the hub answered with earliest.
        expect(errors.map((error) => error.code)).toEqual(["stream_error"]);
        expect(received.slice(3)).toEqual([1, 2, 3]);
    }, 45_000);
});
