import { EventSource } from "eventsource";
import { afterEach, expect, it } from "vitest";
import { MercureEcho } from "../../src/connector/mercure-echo";
import { cookieJarFetch } from "../../src/dev/cookie-jar";
import type { DevServer } from "../../src/dev/server";
import type { MercureError } from "../../src/errors";
import { startStack } from "./support/stack";
import { waitFor } from "./support/wait";
import { closedPort } from "../support/ports";

// Issue 30: Laravel answers, the hub is not running: the channels hear hub_unreachable naming the hub, and the
// connector goes on retrying (status reconnecting), instead of a bare "interrupted" repeated.

let server: DevServer | null = null;
let echo: MercureEcho | null = null;
afterEach(async () => {
    echo?.disconnect();
    await server?.close();
});

it("names a hub that is not running on every channel within seconds, and keeps retrying", async () => {
    server = await startStack();
    const fetch = cookieJarFetch();
    expect((await fetch(`${server.url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
    const hub = `http://127.0.0.1:${await closedPort()}/.well-known/mercure`;
    echo = new MercureEcho({ host: hub, authEndpoint: server.authEndpoint, eventSource: EventSource, fetch });
    const errors: Record<string, MercureError[]> = { news: [], "private-orders.1": [] };
    echo.channel("news").error((error) => errors["news"]!.push(error));
    echo.private("orders.1").error((error) => errors["private-orders.1"]!.push(error));
    await waitFor(() => Object.values(errors).every((list) => list.some((error) => error.code === "hub_unreachable")), "hub_unreachable on both channels", 5_000);
    for (const list of Object.values(errors)) expect(list.find((error) => error.code === "hub_unreachable")!.message).toContain(`The hub at ${hub} could not be reached`);
    expect(echo.connectionStatus()).toBe("reconnecting");
});

it("names a hub that went down after the stream opened once its reconnect fails too, and connects again when it is back", async () => {
    server = await startStack();
    const fetch = cookieJarFetch();
    expect((await fetch(`${server.url}/dev/login?user=1`, { method: "POST" })).status).toBe(200);
    echo = new MercureEcho({ host: server.hubUrl, eventSource: EventSource, fetch });
    const errors: MercureError[] = [];
    let subscribed = false;
    echo.private("orders.1").error((error) => errors.push(error)).subscribed(() => (subscribed = true));
    await waitFor(() => subscribed, "the channel to be subscribed", 15_000);
    await server.stop();
    await waitFor(() => errors.some((error) => error.code === "hub_unreachable"), "hub_unreachable", 10_000);
    expect(errors.find((error) => error.code === "hub_unreachable")!.message).toContain(`The hub at ${server.hubUrl} could not be reached`);
    expect(echo.connectionStatus()).toBe("reconnecting");
    await server.restart();
    await waitFor(() => echo!.connectionStatus() === "connected", "connected again", 15_000);
});
