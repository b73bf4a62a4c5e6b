import { EventSource as EventSource4 } from "eventsource";
import { EventSource as EventSource5 } from "eventsource-5";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { MercureEcho } from "../../src/connector/mercure-echo";
import { cookieJarFetch } from "../../src/dev/cookie-jar";
import type { DevServer } from "../../src/dev/server";
import type { MercureError } from "../../src/errors";
import { ALL_HUBS, describeEachHub } from "../support/hubs";
import { startStack } from "./support/stack";
import { waitFor } from "./support/wait";

// The peer range accepts eventsource 4 (Node.js 20) and 5 (what `npm install eventsource` gives on Node.js 22.12+):
// README's Node.js set-up works with both, across a dropped stream.

const VERSIONS = [
    ["eventsource 4", EventSource4],
    ["eventsource 5", EventSource5],
] as const;

let server: DevServer | null = null;
let echo: MercureEcho | null = null;
afterEach(async () => {
    echo?.disconnect();
    echo = null;
    await server?.close();
    server = null;
});

describe("the eventsource peer range", () => {
    it("accepts the majors tested below: 4 and 5 (npm refuses to install a peer outside it)", () => {
        const read = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as { version: string; peerDependencies: Record<string, string> };
        const ranges = read("../../package.json").peerDependencies["eventsource"]!.split("||").map((range) => range.trim());
        expect(ranges).toEqual(["^4.0.0", "^5.0.0"]);
        expect(read("../../node_modules/eventsource/package.json").version).toMatch(/^4\./);
        expect(read("../../node_modules/eventsource-5/package.json").version).toMatch(/^5\./);
    });
});

describeEachHub("README's Node.js set-up with each eventsource major", ALL_HUBS, (hub) => {
    it.each(VERSIONS)("%s: a private channel receives, and receives again after the hub dropped the stream", async (_name, EventSource) => {
        server = await startStack({}, hub);
        const fetch = cookieJarFetch();
        expect((await fetch(`${server.url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
        echo = new MercureEcho({ host: server.hubUrl, eventSource: EventSource, fetch });
        const received: unknown[] = [];
        const errors: MercureError[] = [];
        let subscribed = false;
        echo.private("orders.1")
            .listen("OrderShipped", (payload) => received.push(payload))
            .error((error) => errors.push(error))
            .subscribed(() => (subscribed = true));
        await waitFor(() => subscribed || errors.length > 0, "the channel to be subscribed", 15_000);
        expect(errors).toEqual([]);
        await server.broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { id: 1 } });
        await waitFor(() => received.length === 1, "the first broadcast", 15_000);

        const opened = server.hub.stats.subscribeConnections.length;
        server.hub.dropConnections();
        await waitFor(() => server!.hub.stats.openConnections === 1 && server!.hub.stats.subscribeConnections.length > opened, "the stream to reopen", 15_000);
        await server.broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { id: 2 } });
        await waitFor(() => received.length === 2, "the broadcast after the reopen", 15_000);
        expect(received).toEqual([{ id: 1 }, { id: 2 }]);
    });
});
