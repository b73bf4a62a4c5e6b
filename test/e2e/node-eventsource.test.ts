import { EventSource } from "eventsource";
import { afterEach, expect, it } from "vitest";
import { MercureEcho } from "../../src/connector/mercure-echo";
import { cookieJarFetch } from "../../src/dev/cookie-jar";
import type { DevServer } from "../../src/dev/server";
import type { MercureError } from "../../src/errors";
import type { EventSourceInitLike } from "../../src/transport/platform";
import { startStack } from "./support/stack";
import { sleep, waitFor } from "./support/wait";
import { ALL_HUBS, describeEachHub, type HubTarget } from "../support/hubs";

let server: DevServer | null = null;
const echos: MercureEcho[] = [];

afterEach(async () => {
    for (const echo of echos.splice(0)) echo.disconnect();
    await server?.close();
    server = null;
});

/** A MercureEcho on the `eventsource` package and a cookie-keeping fetch, as README's "In Node.js" section has it, on `hub`. */
async function client(hub: HubTarget, login: number | null, eventSource: typeof EventSource = EventSource) {
    server = await startStack({}, hub);
    const fetch = cookieJarFetch();
    if (login !== null) expect((await fetch(`${server.url}/dev/login?user=${login}`, { method: "POST" })).status).toBe(200);
    const echo = new MercureEcho({ host: server.hubUrl, eventSource, fetch });
    echos.push(echo);
    const errors: MercureError[] = [];
    const received: unknown[] = [];
    const channel = echo
        .private("orders.1")
        .listen("OrderShipped", (payload) => received.push(payload))
        .error((error) => errors.push(error));
    return { server, echo, channel, errors, received };
}

describeEachHub("the connector in Node.js with the eventsource package", ALL_HUBS, (hub) => {
    it("receives a private broadcast: the stream carries the cookie the auth request stored, through the fetch option", async () => {
        const { server, channel, errors, received } = await client(hub, 1);
        let subscribed = false;
        channel.subscribed(() => (subscribed = true));
        await waitFor(() => subscribed || errors.length > 0, "the channel to be subscribed", 15_000);
        expect(errors).toEqual([]);
        await server.broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { id: 7 } });
        await waitFor(() => received.length > 0, "the broadcast", 15_000);
        expect(received).toEqual([{ id: 7 }]);
    });

    it("names the EventSource that does not use that fetch, with the hub's 401, in place of the stream_error", async () => {
        /** An EventSource that makes its requests with the global fetch, which keeps no cookies. */
        class CookielessEventSource extends EventSource {
            constructor(url: string | URL, init?: EventSourceInitLike) {
                super(url, { withCredentials: init?.withCredentials ?? false });
            }
        }
        const { errors } = await client(hub, 1, CookielessEventSource);
        // The diagnosis finds the hub accepting the same request through the connector's fetch, and names the EventSource
        // that does not send the cookie, with the refusal's status: the stream_error held meanwhile gives way (issue 51).
        await waitFor(() => errors.length > 0, "the diagnosis", 15_000);
        expect([errors[0]!.code, errors[0]!.status]).toEqual(["cookie_missing", 401]);
        expect(errors[0]!.message).toContain("the EventSource does not send the cookie that `fetch` keeps");
    });

    it("names both causes of a denial when nobody logged in", async () => {
        const { errors } = await client(hub, null);
        await waitFor(() => errors.length > 0, "the denial", 15_000);
        expect(errors[0]!.code).toBe("auth_denied");
        expect(errors[0]!.message).toContain("a user is logged in");
        expect(errors[0]!.message).toContain("routes/channels.php");
    });
});

describeEachHub("the eventsource package with a cookie-keeping fetch, over time", ALL_HUBS, (hub) => {
    for (const history of [false, true]) {
        it(`says once in the debug log that the hub replays nothing when it answers earliest to a reconnect's cursor (hub ${history ? "with" : "without"} history: ${history ? "nothing said" : "said once"})`, async () => {
            // Issue 52: on a hub without history a reconnect's Last-Event-ID is answered Mercure-Last-Event-ID: earliest
            // (mercure-hub §1.4); the eventsource package's requests go through the connector's fetch, which reads it.
            server = await startStack({ hub: { history } }, hub);
            const stack = server;
            const fetch = cookieJarFetch();
            expect((await fetch(`${stack.url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
            const steps: Array<{ step: string; detail: unknown }> = [];
            const echo = new MercureEcho({ host: stack.hubUrl, eventSource: EventSource, fetch, debug: (step, detail) => steps.push({ step, detail }) });
            echos.push(echo);
            const received: number[] = [];
            let subscribed = 0;
            echo.private("orders.1")
                .listen(".tick", (payload: { n: number }) => received.push(payload.n))
                .subscribed(() => subscribed++);
            await waitFor(() => subscribed === 1, "the channel to be subscribed", 15_000);
            for (let drop = 1; drop <= 2; drop++) {
                await stack.broadcast({ channels: ["private-orders.1"], event: "tick", payload: { n: drop } });
                await waitFor(() => received.length === drop, `tick ${drop}`, 15_000);
                // Every stream drops: the eventsource package reconnects with the last id in Last-Event-ID.
                const before = stack.hub.stats.subscribeConnections.length;
                stack.hub.dropConnections();
                await waitFor(() => stack.hub.stats.subscribeConnections.length > before && echo.connectionStatus() === "connected", `reconnect ${drop}`, 15_000);
                await sleep(200);
            }
            const told = steps.filter((entry) => entry.step === "history");
            if (!history) {
                expect(told).toHaveLength(1);
                expect(told[0]!.detail).toMatchObject({ cursor: expect.stringMatching(/^urn:uuid:/), replayed: false });
            } else expect(told).toEqual([]);
        }, 45_000);
    }

    it("receives every private broadcast, in order, across a cookie expiry and a hub restart (the hub keeps history)", async () => {
        // 10 s cookies on a hub with a 1 s dispatch timeout: the dev hub ends a stream 1 s before its token's exp
        // (fraction 100 %), the reference hub at 80–100 % of the token's remaining life less 1 s (6.2 s or later, the
        // token's iat being floored to the second); the connector, told so, renews at 6 s. A hub restart drops every
        // stream (on the reference hub: the reverse proxy's restart); the reconnect resumes from the cursor.
        server = await startStack({ app: { expiresIn: 10 }, hub: { dispatchTimeout: 1_000, lifetimeFraction: () => 1 } }, hub);
        const stack = server;
        const fetch = cookieJarFetch();
        expect((await fetch(`${stack.url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
        const echo = new MercureEcho({ host: stack.hubUrl, eventSource: EventSource, fetch, hubTimeouts: { dispatch: 1_000 } });
        echos.push(echo);
        const received: number[] = [];
        let subscribed = false;
        echo.private("orders.1")
            .listen(".tick", (payload: { n: number }) => received.push(payload.n))
            .subscribed(() => (subscribed = true));
        await waitFor(() => subscribed, "the channel to be subscribed", 15_000);

        let n = 0;
        const tick = () => stack.broadcast({ channels: ["private-orders.1"], event: "tick", payload: { n: n++ } });
        const started = Date.now();
        // Past the first cookie's expiry (10 s) with the hub up, waiting for each tick to arrive before the next.
        while (Date.now() - started < 12_000) {
            await tick();
            await waitFor(() => received.length === n, `tick ${n - 1}`, 15_000);
            await sleep(100);
        }
        // A hub restart: the streams drop; broadcasts resume as soon as the hub is back, before the client reconnects.
        await stack.stop();
        await sleep(500);
        await stack.restart();
        for (let i = 0; i < 5; i++) await tick();
        await waitFor(() => received.length === n, "the broadcasts made while the client reconnected", 30_000);

        expect(received).toEqual(Array.from({ length: n }, (_, i) => i));
        expect(stack.app.stats.authRequests.filter((record) => record.status === 200).length).toBeGreaterThanOrEqual(2);
        expect(stack.hub.stats.subscribeConnections.filter((connection) => connection.status !== 200)).toEqual([]);
    }, 90_000);
});
