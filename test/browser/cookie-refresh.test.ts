import { expect, it } from "vitest";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { sleep } from "./support/wait";

/** The dev stack of the renewal suite. */
const RENEWAL: BrowserSuiteOptions = {
    server: {
        // 12 s cookies on a hub that replays nothing and ends each stream 1 s before its token's exp (the
        // fraction fixed at 100 %, a 1 s dispatch timeout, so at 11 s): the connector, assuming the reference hub's
        // 5 s dispatch timeout, renews at its 5 s floor, 6 s before the hub would end the stream; any gap would lose
        // updates for good.
        hub: { history: false, dispatchTimeout: 1_000, lifetimeFraction: () => 1 },
        app: { users: [{ id: 1, name: "Ann" }], expiresIn: 12 },
        channels: { "orders.{id}": (user) => user.id === 1 },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("the hub cookie in Chromium", RENEWAL, ({ dev, open }) => {
    it("is renewed before it expires, so a private channel keeps every update across several expiries", async () => {
        const server = dev();
        const ann = await open(1);
        await ann.create();
        await ann.join({ kind: "private", name: "orders.1", events: [".tick"] });
        await ann.waitForSubscribed(["private-orders.1"]);
        const cookieBefore = (await ann.context.cookies(server.hubUrl)).find((cookie) => cookie.name === "mercure_access_token");
        const authsBefore = server.app.stats.authRequests.length;

        // One every ~50 ms for 22 s: three renewals (about 5, 10 and 15 s), and the first two cookies and their
        // streams' planned ends (11 and about 16 s) pass.
        const started = Date.now();
        let total = 0;
        while (Date.now() - started < 22_000) {
            await server.broadcast({ channels: ["private-orders.1"], event: "tick", payload: { n: total++ } });
            await sleep(50);
        }
        const seen = await ann.waitFor(`tick ${total - 1}`, (s) => s.events.some((e) => (e.payload as { n: number }).n === total - 1), { timeout: 5_000 });

        expect(seen.events.map((e) => (e.payload as { n: number }).n)).toEqual(Array.from({ length: total }, (_, n) => n));
        expect(seen.errors).toEqual([]);
        expect(seen.statuses.filter((status) => status !== "connected" && status !== "connecting" && status !== "disconnected")).toEqual([]);
        // The browser stored each renewed cookie and the replacement streams carried it (the hub checks it).
        expect(server.app.stats.authRequests.length - authsBefore).toBeGreaterThanOrEqual(2);
        const cookieAfter = (await ann.context.cookies(server.hubUrl)).find((cookie) => cookie.name === "mercure_access_token");
        expect(cookieAfter?.value).not.toBe(cookieBefore?.value);
        expect(cookieAfter!.expires * 1000).toBeGreaterThan(Date.now());
        const refused = server.hub.stats.subscribeConnections.filter((connection) => connection.status !== 200);
        expect(refused).toEqual([]);
        // Every stream was replaced by the connector before the hub ended it.
        expect(server.hub.stats.expiredStreams).toBe(0);
    }, 90_000);
});

/** The dev stack of the Secure-cookie suite. */
const SECURE_COOKIE: BrowserSuiteOptions = {
    server: {
        // A relative public URL: Laravel (through symfony/mercure) marks the cookie Secure, even over http.
        app: { users: [{ id: 1, name: "Ann" }], publicUrl: "/.well-known/mercure" },
        channels: { "orders.{id}": (user) => user.id === 1 },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("a Secure hub cookie on plain HTTP in Chromium", SECURE_COOKIE, ({ dev, open }) => {
    it("is stored and sent on http://127.0.0.1, which Chromium treats as a secure origin", async () => {
        const server = dev();
        const ann = await open(1);
        await ann.create();
        await ann.join({ kind: "private", name: "orders.1", events: [".shipped"] });
        await ann.waitForSubscribed(["private-orders.1"]);
        const cookie = (await ann.context.cookies()).find((candidate) => candidate.name === "mercure_access_token");
        expect(cookie?.secure).toBe(true);
        await server.broadcast({ channels: ["private-orders.1"], event: "shipped", payload: { id: 1 } });
        const seen = await ann.waitFor("the private event", (s) => s.events.length === 1);
        expect(seen.events).toEqual([{ channel: "private-orders.1", listener: ".shipped", payload: { id: 1 } }]);
        expect(seen.errors).toEqual([]);
        expect(server.hub.stats.subscribeConnections.map((connection) => connection.status)).toEqual([200]);
    });
});
