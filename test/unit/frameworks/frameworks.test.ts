import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureEchoOptions } from "../../../src/connector/mercure-echo";
import { MercureError } from "../../../src/errors";
import { configureMercure } from "../../../src/frameworks/configure";
import { ConnectorSlot } from "../../../src/frameworks/connector-slot";
import { EncryptedSubscriptions } from "../../../src/frameworks/encrypted-subscriptions";
import { withHubHost } from "../../../src/frameworks/hub-host";
import { HUB, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

// The page is https://app.test/dashboard (vitest.config.ts). That Vite replaces `import.meta.env.VITE_MERCURE_HUB_URL`
// in the built entry is tested where it happens: the React app of test/browser/frameworks.test.ts has it in its .env.

describe("withHubHost", () => {
    afterEach(() => {
        vi.unstubAllGlobals();
    });

    it("uses VITE_MERCURE_HUB_URL when the app defines it, passing every other option through", () => {
        const options = { broadcaster: "mercure", authEndpoint: "/api/broadcasting/auth", auth: { headers: { "X-App": "1" } }, csrfToken: "t", bearerToken: "b", namespace: false } as const;
        expect(withHubHost(options, "https://hub.example/.well-known/mercure")).toEqual({ ...options, host: "https://hub.example/.well-known/mercure" });
    });

    it("falls back to /.well-known/mercure on the page's origin", () => {
        expect(withHubHost({}, undefined)).toEqual({ host: "https://app.test/.well-known/mercure" });
    });

    it("leaves host alone when the app gave host (null too: the connector's own lookup) or discover", () => {
        expect(withHubHost({ host: "https://other.test/hub" }, "https://hub.example/")).toEqual({ host: "https://other.test/hub" });
        expect(withHubHost({ host: null }, "https://hub.example/")).toEqual({ host: null });
        expect(withHubHost({ discover: "/" }, "https://hub.example/")).toEqual({ discover: "/" });
    });

    it("fills nothing without import.meta.env and location (server-side rendering)", () => {
        vi.stubGlobal("location", undefined);
        expect(withHubHost({ namespace: "App.Events" }, undefined)).toEqual({ namespace: "App.Events" });
    });
});

describe("configureMercure", () => {
    let EventSource: FakeEventSourceClass;
    let auth: FakeAuthServer;
    /** What the framework's configureEcho received, in order. */
    let configured: MercureEchoOptions[];
    let slot: ConnectorSlot;

    beforeEach(() => {
        useScopedFakeTimers();
        EventSource = createFakeEventSource();
        auth = new FakeAuthServer();
        configured = [];
        slot = new ConnectorSlot();
    });
    afterEach(() => {
        vi.useRealTimers();
    });

    const configure = (options: MercureEchoOptions) => configureMercure((config) => configured.push(config), slot, options, "laravel-echo-mercure/react");

    /** Build the connector as the framework's Echo does from the last configuration. */
    const build = () => {
        const config = configured.at(-1)!;
        const Connector = config.broadcaster as typeof MercureConnector;
        return new Connector({ ...config, eventSource: EventSource, fetch: auth.fetch });
    };

    it("hands the framework a MercureConnector class as broadcaster, for \"mercure\", MercureConnector or none", () => {
        configure({ broadcaster: "mercure", host: HUB, namespace: false });
        configure({ broadcaster: MercureConnector, host: HUB });
        configure({ host: HUB });
        expect(configured).toHaveLength(3);
        for (const config of configured) expect(config.broadcaster).toBe(slot.connector);
        expect(configured[0]).toEqual({ broadcaster: slot.connector, host: HUB, namespace: false });
        expect(build()).toBeInstanceOf(MercureConnector);
    });

    it("refuses another broadcaster with invalid_option naming the entry, configuring nothing", () => {
        const call = () => configure({ broadcaster: "reverb" as unknown as "mercure" });
        expect(call).toThrow(MercureError);
        expect(call).toThrow(/laravel-echo-mercure\/react only supports the `broadcaster` option "mercure"/);
        expect(configured).toEqual([]);
    });

    it("a second call disconnects the connector built from the first and leaves its channels", async () => {
        configure({ broadcaster: "mercure", host: HUB });
        const first = build();
        first.channel("news");
        first.privateChannel("orders.1");
        await vi.advanceTimersByTimeAsync(0);
        EventSource.live()[0]!.emitOpen();
        await vi.advanceTimersByTimeAsync(0);
        expect(first.connectionStatus()).toBe("connected");

        configure({ broadcaster: "mercure", host: HUB });
        await vi.advanceTimersByTimeAsync(60_000);

        expect(first.connectionStatus()).toBe("disconnected");
        expect(Object.keys(first.channels)).toEqual([]);
        expect(EventSource.live()).toEqual([]);
        // The connector built from the second configuration is the one the next call retires.
        const second = build();
        second.channel("news");
        configure({ broadcaster: "mercure", host: HUB });
        expect(Object.keys(second.channels)).toEqual([]);
    });
});

describe("EncryptedSubscriptions", () => {
    it("leaves an encrypted channel when its last user releases it, per connector", () => {
        const subscriptions = new EncryptedSubscriptions();
        const connector = new MercureConnector({ host: HUB, eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch });
        const echo = { connector };
        const channel = subscriptions.acquire(echo, "secrets.1");
        expect(channel.name).toBe("private-encrypted-secrets.1");
        expect(subscriptions.acquire(echo, "secrets.1")).toBe(channel);
        subscriptions.release(echo, "secrets.1");
        expect(Object.keys(connector.channels)).toEqual(["private-encrypted-secrets.1"]);
        subscriptions.release(echo, "secrets.1");
        expect(Object.keys(connector.channels)).toEqual([]);
        // A release without an acquire (a component mounted across a reconfiguration) changes nothing.
        connector.channel("news");
        subscriptions.release(echo, "news");
        expect(Object.keys(connector.channels)).toEqual(["news"]);
        connector.disconnect();
    });

    it("refuses an Echo whose connector is not a MercureConnector, with invalid_option", () => {
        expect(() => new EncryptedSubscriptions().acquire({ connector: {} }, "secrets.1")).toThrow(expect.objectContaining({ code: "invalid_option" }));
    });
});
