import { afterEach, expect, it } from "vitest";
import { ALL_HUBS, describeEachHub } from "../support/hubs";
import { expectExactly, numberedStream, recordNumbers } from "./support/numbered";
import { nodeClient, startStack } from "./support/stack";
import { sleep, waitFor } from "./support/wait";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
});

describeEachHub("continuity over real HTTP", ALL_HUBS, (hub) => {
    it("loses and duplicates nothing across dropped connections and a hub restart (hub with history)", async () => {
        // On the reference hub, the restart is the dev server's (the reverse proxy browsers reach the hub through):
        // the app goes on publishing to the hub, which keeps running, as behind a restarted load balancer.
        const server = await startStack({}, hub);
        cleanup.push(() => server.close());
        const ann = await nodeClient(server, 1);
        cleanup.push(() => ann.echo.disconnect());
        const received = recordNumbers(ann, "private", "orders.1");
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        const count = 400;
        const connections = () => server.hub.stats.subscribeConnections.length;
        const stream = numberedStream(server, "private-orders.1", count, 15);
        cleanup.push(() => stream.stop());
        await waitFor(() => received.length >= 20, "the first numbers");
        server.hub.dropConnections();
        await waitFor(() => connections() >= 2, "a reconnect after the drop", 10_000);
        const beforeStop = received.length;
        await server.stop();
        await sleep(400);
        await server.restart();
        await waitFor(() => connections() >= 3, "a reconnect after the restart", 10_000);
        await stream.done;
        await waitFor(() => received.length >= count, "every number", 15_000);
        await sleep(200);
        expectExactly(received, count);
        expect(beforeStop).toBeLessThan(count - 50); // the restart happened mid-stream
        // Every reconnect carried the cursor, so the hub replayed exactly what was missed.
        for (const connection of server.hub.stats.subscribeConnections.slice(1)) {
            expect(connection.lastEventId ?? new URLSearchParams(connection.query).get("last_event_id")).toMatch(/^urn:uuid:/);
        }
    }, 30_000);

    it("loses and duplicates nothing while channels come and go and the cookie is renewed (hub without history)", async () => {
        // 20 s cookies on a hub with a 1 s dispatch timeout. The dev hub ends each stream 1 s before its token's exp
        // (fraction fixed at 100 %), so the test is exact there; the reference hub picks its own fraction (80–100 %),
        // so its streams end 15 s or more after they open. With the reference 5 s dispatch timeout and a random
        // fraction, a 20 s token's stream could end 11 s after opening, before a connector renewing at 80 % replaces it.
        const server = await startStack(
            {
                hub: { history: false, dispatchTimeout: 1_000, lifetimeFraction: () => 1 },
                app: { expiresIn: 20 },
            },
            hub,
        );
        cleanup.push(() => server.close());
        const ann = await nodeClient(server, 1);
        cleanup.push(() => ann.echo.disconnect());
        const errors: string[] = [];
        const received = recordNumbers(ann, "private", "orders.1");
        ann.echo.private("orders.1").error((error: { code: string; message: string }) => errors.push(`${error.code}: ${error.message}`));
        await waitFor(() => ann.echo.connectionStatus() === "connected", "connected");
        const count = 450;
        const started = Date.now();
        const stream = numberedStream(server, "private-orders.1", count, 25);
        cleanup.push(() => stream.stop());
        let churn = 0;
        while (Date.now() - started < 15_000) {
            await sleep(600);
            if (churn % 2 === 0) ann.echo.channel(`side.${churn}`);
            else ann.echo.leave(`side.${churn - 1}`);
            churn++;
        }
        await stream.done;
        await waitFor(() => received.length >= count, "every number", 10_000);
        await sleep(200);
        expectExactly(received, count);
        expect(errors).toEqual([]);
        // A cookie was minted per change and every stream was replaced before the hub ended it.
        const auths = server.app.stats.authRequests.length;
        expect(auths).toBeGreaterThanOrEqual(churn);
        expect(server.hub.stats.subscribeConnections.length).toBeGreaterThanOrEqual(churn);
        expect(server.hub.stats.expiredStreams).toBe(0);
        expect(Date.now() - started).toBeGreaterThan(12_000);
    }, 45_000);
});
