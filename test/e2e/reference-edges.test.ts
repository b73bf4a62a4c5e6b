import { afterEach, expect, it } from "vitest";
import type { MercureError } from "../../src/errors";
import { ALL_HUBS, describeEachHub } from "../support/hubs";
import { expectExactly, numberedStream, recordNumbers } from "./support/numbered";
import { nodeClient, startStack } from "./support/stack";
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
});
