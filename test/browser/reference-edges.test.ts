import { expect, it } from "vitest";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { sleep } from "./support/wait";

// The reference hub's edge cases in Chromium (issue 27), on the dev hub and on the reference Go hub.

/** The app's clock lags the hub's by this much, so its cookies outlive their tokens (see test/e2e/reference-edges.test.ts). */
const APP_CLOCK_LAG_MS = 17_000;

describeInChromium(
    "the reference hub's edge cases in Chromium",
    {
        server: {
            // 20 s cookies whose tokens the hub sees expire after 3 s, on a hub that accepts anonymous subscribers.
            hub: { anonymous: true },
            app: { expiresIn: 20, now: () => Date.now() - APP_CLOCK_LAG_MS },
            pages: { [HARNESS_PAGE]: harnessPage() },
            distDir: DIST_DIR,
        },
    },
    ({ dev, open }) => {
        it("recovers from a stale hub cookie that the hub refuses with 401 on an anonymous hub: a public channel loses nothing", async () => {
            const server = dev();
            const page = await open(null);
            await page.create();
            await page.join({ kind: "public", name: "news", events: [".tick"] });
            await page.waitForSubscribed(["news"]);
            const connections = server.hub.stats.subscribeConnections.length;
            const auths = server.app.stats.authRequests.length;

            // 14 s of updates: the hub ends the stream by the token's expiry, Chromium reconnects with the cookie it
            // still holds, the hub refuses it with 401, and the connector's next auth replaces it.
            const count = 70;
            for (let n = 1; n <= count; n++) {
                await server.broadcast({ channels: ["news"], event: "tick", payload: { n } });
                await sleep(200);
            }
            const seen = await page.waitFor(`tick ${count}`, (s) => s.events.length >= count || s.status === "failed", { timeout: 15_000 });

            expect(seen.events.map((event) => (event.payload as { n: number }).n)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
            expect(seen.statuses).not.toContain("failed");
            expect(seen.errors.filter((error) => error.code !== "stream_error")).toEqual([]);
            const refused = server.hub.stats.subscribeConnections.slice(connections).filter((connection) => connection.status === 401);
            expect(refused.length).toBeGreaterThanOrEqual(1);
            expect(server.app.stats.authRequests.length - auths).toBeGreaterThanOrEqual(refused.length);
        }, 60_000);
    },
);
