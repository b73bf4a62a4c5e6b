import { expect, it } from "vitest";
import { DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { channelTopic } from "../../src/dev/laravel/topics";
import { payloadsOf, type HarnessSnapshot } from "./support/harness";
import { harnessPage, HARNESS_PAGE, INTERCEPTOR_PAGE, interceptorPage, STOCK_ECHO_CHANNEL, STOCK_ECHO_PAGE, stockEchoPage } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { sleep, waitUntil } from "./support/wait";

const ANN = 1;
const BOB = 2;

/** The hub topic the server publishes a channel's broadcasts to. */
const topic = (channel: string) => channelTopic(DEFAULT_TOPIC_PREFIX, channel);

/** The `match` parameters of a recorded subscribe request. */
const matchesOf = (query: string) => new URLSearchParams(query).getAll("match");

/** One Chromium and one dev stack for the suite. */
const SUITE: BrowserSuiteOptions = {
    server: {
        // No replay: a stream gap during a reopen would lose updates for good, so the tests see it.
        hub: { history: false },
        app: {
            users: [
                { id: ANN, name: "Ann" },
                { id: BOB, name: "Bob" },
            ],
        },
        channels: {
            "App.Models.User.{id}": (user, params) => String(user.id) === params["id"],
            "orders.{id}": (user, params) => user.id === ANN && params["id"] === "1",
        },
        pages: { [HARNESS_PAGE]: harnessPage(), [STOCK_ECHO_PAGE]: stockEchoPage(), [INTERCEPTOR_PAGE]: interceptorPage() },
        distDir: DIST_DIR,
    },
    // A test that stopped the server and failed must not leave it down for the next one.
    restartAfterEach: true,
};

describeInChromium("the Mercure connector in Chromium (built bundle)", SUITE, ({ dev, open: openUser, newPage }) => {
    it("receives public and private broadcasts under namespaced and verbatim event names, with the real cookie flow", async () => {
        const ann = await openUser(ANN);
        await ann.create();
        await ann.join(
            { kind: "public", name: "orders", events: ["OrderShipped", ".order.shipped"] },
            { kind: "private", name: "orders.1", events: ["OrderShipped", ".order.shipped"] },
        );
        await ann.waitForSubscribed(["orders", "private-orders.1"]);

        // The browser stored the hub cookie from /broadcasting/auth, scoped to the hub path, hidden from scripts.
        const cookies = await ann.context.cookies(dev().hubUrl);
        expect(cookies.find((cookie) => cookie.name === "mercure_access_token")).toMatchObject({
            httpOnly: true,
            path: "/.well-known/mercure",
            sameSite: "Strict",
        });
        expect(await ann.page.evaluate(() => document.cookie)).not.toContain("mercure_access_token");
        // The hub (not anonymous) accepted the stream: the cookie travelled with the EventSource.
        const connection = dev().hub.stats.subscribeConnections.at(-1);
        expect(connection?.status).toBe(200);
        expect(matchesOf(connection?.query ?? "")).toEqual([topic("orders"), topic("private-orders.1")]);

        const both = ["orders", "private-orders.1"];
        await dev().broadcast({ channels: both, event: "App\\Events\\OrderShipped", payload: { id: 1 } });
        await dev().broadcast({ channels: both, event: "order.shipped", payload: { id: 2 } });
        // Neither listener matches these: the namespace is not applied to `.`-names, and is required otherwise.
        await dev().broadcast({ channels: both, event: "OrderShipped", payload: { id: 3 } });
        await dev().broadcast({ channels: both, event: "App\\Events\\order\\shipped", payload: { id: 4 } });
        await dev().broadcast({ channels: both, event: "order.shipped", payload: { id: "end" } });

        const isEnd = (payload: unknown) => (payload as { id?: unknown }).id === "end";
        const seen = await ann.waitFor("the end marker on both channels", (s) => s.events.filter((e) => isEnd(e.payload)).length === 2);
        expect(seen.events).toEqual([
            { channel: "orders", listener: "OrderShipped", payload: { id: 1 } },
            { channel: "private-orders.1", listener: "OrderShipped", payload: { id: 1 } },
            { channel: "orders", listener: ".order.shipped", payload: { id: 2 } },
            { channel: "private-orders.1", listener: ".order.shipped", payload: { id: 2 } },
            { channel: "orders", listener: ".order.shipped", payload: { id: "end" } },
            { channel: "private-orders.1", listener: ".order.shipped", payload: { id: "end" } },
        ]);
        expect(seen.errors).toEqual([]);
    });

    it("gives each user its own private channel and denies another user's, while that user's public channel keeps working", async () => {
        const ann = await openUser(ANN);
        const bob = await openUser(BOB);
        await ann.create();
        await bob.create();
        await ann.join(
            { kind: "private", name: "App.Models.User.1", notifications: true },
            { kind: "public", name: "news", events: [".headline"] },
        );
        await bob.join(
            { kind: "private", name: "App.Models.User.2", notifications: true },
            { kind: "private", name: "App.Models.User.1", notifications: true },
            { kind: "public", name: "news", events: [".headline"] },
        );
        await ann.waitForSubscribed(["private-App.Models.User.1", "news"]);
        await bob.waitForSubscribed(["private-App.Models.User.2", "news"]);
        const bobBefore = await bob.waitFor("the denial of Ann's channel", (s) => s.errors.length > 0);
        expect(bobBefore.errors).toEqual([
            expect.objectContaining({ channel: "private-App.Models.User.1", code: "auth_denied" }),
        ]);
        expect(bobBefore.subscribed).not.toContain("private-App.Models.User.1");

        const notification = "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated";
        for (const id of [ANN, BOB]) {
            await dev().broadcast({
                channels: [`private-App.Models.User.${id}`],
                event: notification,
                payload: { id: `n${id}`, type: "App\\Notifications\\InvoicePaid", for: id },
            });
        }
        await dev().broadcast({ channels: ["news"], event: "headline", payload: { title: "hello" } });

        const done = (s: HarnessSnapshot) => s.events.some((e) => e.listener === ".headline");
        const annSeen = await ann.waitFor("Ann's headline", done);
        const bobSeen = await bob.waitFor("Bob's headline", done);
        expect(payloadsOf(annSeen, "private-App.Models.User.1", "notification")).toEqual([
            { id: "n1", type: "App\\Notifications\\InvoicePaid", for: ANN },
        ]);
        expect(payloadsOf(bobSeen, "private-App.Models.User.2", "notification")).toEqual([
            { id: "n2", type: "App\\Notifications\\InvoicePaid", for: BOB },
        ]);
        expect(bobSeen.events.filter((e) => e.channel === "private-App.Models.User.1")).toEqual([]);
        expect(payloadsOf(annSeen, "news")).toEqual([{ title: "hello" }]);
        expect(payloadsOf(bobSeen, "news")).toEqual([{ title: "hello" }]);
        expect(bobSeen.errors.map((e) => e.code)).toEqual(["auth_denied"]);
        expect(annSeen.errors).toEqual([]);
    });

    it("joins a burst of channels in one tick with one auth request and one subscribe connection", async () => {
        const ann = await openUser(ANN);
        await ann.create();
        const authBefore = dev().app.stats.authRequests.length;
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        await ann.join(
            { kind: "public", name: "burst.a", events: [".ping"] },
            { kind: "public", name: "burst.b" },
            { kind: "private", name: "orders.1" },
            { kind: "public", name: "burst.c" },
            { kind: "private", name: "App.Models.User.1", events: [".ping"] },
            { kind: "public", name: "burst.d" },
        );
        const names = ["burst.a", "burst.b", "private-orders.1", "burst.c", "private-App.Models.User.1", "burst.d"];
        await ann.waitForSubscribed(names);
        await dev().broadcast({ channels: ["burst.a", "private-App.Models.User.1"], event: "ping", payload: { n: 1 } });
        const seen = await ann.waitFor("the ping on both channels", (s) => s.events.length >= 2);
        // Leave time for any stray follow-up request before counting.
        await sleep(300);

        const auths = dev().app.stats.authRequests.slice(authBefore);
        expect(auths).toEqual([{ channelNames: names, status: 200 }]);
        const connections = dev().hub.stats.subscribeConnections.slice(connectionsBefore);
        expect(connections).toHaveLength(1);
        expect(matchesOf(connections[0]!.query)).toEqual(names.map(topic));
        expect(seen.events.map((e) => e.channel)).toEqual(["burst.a", "private-App.Models.User.1"]);
    });

    it("reopens the stream without a left channel and stops delivering its events", async () => {
        const ann = await openUser(ANN);
        await ann.create();
        await ann.join({ kind: "public", name: "keep", events: [".news"] }, { kind: "public", name: "gone", events: [".news"] });
        await ann.waitForSubscribed(["keep", "gone"]);
        await dev().broadcast({ channels: ["gone"], event: "news", payload: { n: 0 } });
        await ann.waitFor("the event on the channel before leaving it", (s) => s.events.length === 1);

        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        await ann.leave("gone");
        await waitUntil("a new subscribe connection", () => dev().hub.stats.subscribeConnections.length > connectionsBefore);
        const reopened = dev().hub.stats.subscribeConnections.slice(connectionsBefore);
        expect(reopened).toHaveLength(1);
        expect(matchesOf(reopened[0]!.query)).toEqual([topic("keep")]);
        // Make-before-break: the old stream is retired once the new one is open.
        await waitUntil("the old stream to close", () => dev().hub.stats.openConnections === 1, {
            describe: () => dev().hub.stats.openConnections,
        });

        await dev().broadcast({ channels: ["gone"], event: "news", payload: { n: 1 } });
        await dev().broadcast({ channels: ["keep"], event: "news", payload: { n: 2 } });
        const seen = await ann.waitFor("the event on the kept channel", (s) => payloadsOf(s, "keep").length === 1);
        expect(seen.events).toEqual([
            { channel: "gone", listener: ".news", payload: { n: 0 } },
            { channel: "keep", listener: ".news", payload: { n: 2 } },
        ]);
    });

    it("drops a broadcast sent with the page's own socket id (toOthers) but delivers it to another user", async () => {
        const ann = await openUser(ANN);
        const bob = await openUser(BOB);
        const annSocket = await ann.create();
        const bobSocket = await bob.create();
        expect(annSocket).not.toBe(bobSocket);
        for (const user of [ann, bob]) await user.join({ kind: "public", name: "chat", events: [".message"] });
        await ann.waitForSubscribed(["chat"]);
        await bob.waitForSubscribed(["chat"]);

        await dev().broadcast({ channels: ["chat"], event: "message", payload: { text: "from Ann" }, socket: annSocket });
        await dev().broadcast({ channels: ["chat"], event: "message", payload: { text: "marker" } });

        const hasMarker = (s: HarnessSnapshot) => s.events.some((e) => (e.payload as { text?: string }).text === "marker");
        const annSeen = await ann.waitFor("the marker at Ann", hasMarker);
        const bobSeen = await bob.waitFor("the marker at Bob", hasMarker);
        expect(payloadsOf(annSeen, "chat")).toEqual([{ text: "marker" }]);
        expect(payloadsOf(bobSeen, "chat")).toEqual([{ text: "from Ann" }, { text: "marker" }]);
    });

    it("excludes the sender end to end: Echo's axios interceptor sends X-Socket-ID and the server's toOthers() reads it", async () => {
        const ann = await openUser(ANN, INTERCEPTOR_PAGE);
        const bob = await openUser(BOB);
        await ann.create();
        await bob.create();
        for (const user of [ann, bob]) await user.join({ kind: "public", name: "chat", events: [".message"] });
        await ann.waitForSubscribed(["chat"]);
        await bob.waitForSubscribed(["chat"]);

        // The page sends no socket id itself: only Echo's interceptor can put it on the request.
        type AxiosWindow = { axios: { post(url: string, data: unknown): Promise<{ status: number }> } };
        const sent = await ann.page.evaluate(
            () =>
                (window as unknown as AxiosWindow).axios
                    .post("/dev/broadcast", { channels: ["chat"], event: "message", payload: { text: "from Ann" }, toOthers: true })
                    .then((response) => response.status),
        );
        expect(sent).toBe(200);
        await dev().broadcast({ channels: ["chat"], event: "message", payload: { text: "marker" } });

        const hasMarker = (s: HarnessSnapshot) => s.events.some((e) => (e.payload as { text?: string }).text === "marker");
        const annSeen = await ann.waitFor("the marker at Ann", hasMarker);
        const bobSeen = await bob.waitFor("the marker at Bob", hasMarker);
        expect(payloadsOf(annSeen, "chat")).toEqual([{ text: "marker" }]);
        expect(payloadsOf(bobSeen, "chat")).toEqual([{ text: "from Ann" }, { text: "marker" }]);
        expect(ann.pageErrors).toEqual([]);
    });

    it("delivers every update of a stream exactly once and in order while channels are joined and left (no history)", async () => {
        const ann = await openUser(ANN);
        await ann.create();
        await ann.join({ kind: "public", name: "ticks", events: [".tick"] });
        await ann.waitForSubscribed(["ticks"]);

        const total = 150;
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        let producing = true;
        const producer = (async () => {
            try {
                for (let n = 0; n < total; n++) {
                    await dev().broadcast({ channels: ["ticks"], event: "tick", payload: { n } });
                    await sleep(15);
                }
            } finally {
                producing = false;
            }
        })();

        let cycles = 0;
        try {
            await sleep(100);
            while (producing && cycles < 20) {
                const side = `side.${cycles}`;
                await ann.join({ kind: "public", name: side });
                await ann.waitForSubscribed([side]);
                await ann.leave(side);
                const expected = connectionsBefore + 2 * (cycles + 1);
                await waitUntil("the reopen after leaving", () => dev().hub.stats.subscribeConnections.length >= expected, {
                    describe: () => ({ connections: dev().hub.stats.subscribeConnections.length, expected }),
                });
                cycles++;
                await sleep(50);
            }
        } finally {
            await producer;
        }

        const seen = await ann.waitFor(`tick ${total - 1}`, (s) => s.events.some((e) => (e.payload as { n: number }).n === total - 1), {
            timeout: 5_000,
        });
        // Every replaced stream was closed: only the page's current stream is still open at the hub.
        await waitUntil("the replaced streams to close", () => dev().hub.stats.openConnections === 1, {
            describe: () => dev().hub.stats.openConnections,
        });
        await sleep(200);
        const final = await ann.snapshot();
        expect(cycles, "join/leave cycles completed while the stream ran").toBeGreaterThanOrEqual(4);
        expect(dev().hub.stats.subscribeConnections.length - connectionsBefore).toBe(2 * cycles);
        expect(final.events.map((e) => (e.payload as { n: number }).n)).toEqual(Array.from({ length: total }, (_, n) => n));
        expect(seen.errors).toEqual([]);
    });

    it("reports connecting, connected, reconnecting while the server is down, connected again, then disconnected", async () => {
        const ann = await openUser(ANN);
        await ann.create();
        await ann.join({ kind: "public", name: "status.room", events: [".ping"] });
        const first = await ann.waitForStatus("connected");
        expect(first.statuses).toEqual(["disconnected", "connecting", "connected"]);

        await dev().stop();
        try {
            await ann.waitForStatus("reconnecting", { timeout: 5_000 });
            await sleep(500);
        } finally {
            await dev().restart();
        }
        // The connector re-authorizes with a backoff starting at about 1 s; the browser may also retry on its own.
        await ann.waitForStatus("connected", { timeout: 20_000 });
        await dev().broadcast({ channels: ["status.room"], event: "ping", payload: { after: "restart" } });
        await ann.waitFor("a broadcast after the restart", (s) => s.events.length === 1);

        await ann.leave("status.room");
        const last = await ann.waitForStatus("disconnected");
        const afterFirst = last.statuses.slice(3);
        expect(afterFirst[0]).toBe("reconnecting");
        expect(afterFirst.slice(-2)).toEqual(["connected", "disconnected"]);
        expect(afterFirst.slice(0, -1).every((status) => status === "reconnecting" || status === "connected")).toBe(true);
        expect(payloadsOf(last, "status.room")).toEqual([{ after: "restart" }]);
    });

    it("works from a plain <script> page with stock Echo and the connector class as broadcaster", async () => {
        const page = await newPage();
        const pageErrors: string[] = [];
        page.on("pageerror", (error) => pageErrors.push(error.message));
        await page.goto(dev().url + STOCK_ECHO_PAGE);
        type StockWindow = { echo: { connectionStatus(): string }; received: unknown[] };
        await waitUntil("stock Echo to connect", () =>
            page.evaluate(() => (window as unknown as StockWindow).echo.connectionStatus() === "connected"),
        );

        await dev().broadcast({ channels: [STOCK_ECHO_CHANNEL], event: "stock.ping", payload: { hello: "world" } });
        await dev().broadcast({ channels: [STOCK_ECHO_CHANNEL], event: "App\\Events\\StockChanged", payload: { sku: 7 } });
        const received = await waitUntil("both stock events", async () => {
            const list = await page.evaluate(() => (window as unknown as StockWindow).received);
            return list.length >= 2 ? list : null;
        });
        expect(received).toEqual([
            { listener: ".stock.ping", payload: { hello: "world" } },
            { listener: "StockChanged", payload: { sku: 7 } },
        ]);
        expect(pageErrors).toEqual([]);
    });
});
