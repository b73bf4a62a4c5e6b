import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import { HUB, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

/*
 * The platform checks (src/transport/platform-checks.ts) are a chunk the connector loads before resolving its platform
 * only where its options do not resolve in a page as they are (src/transport/platform.ts `inPage`): outside an http(s)
 * page, without an `EventSource` or a `fetch`, or with a `host` that does not parse. Here its module fails to load as
 * often as `chunk.failures` says, then loads; every load is counted. Each test has a page of its own (fresh modules:
 * the loader keeps what it loaded for the page's life).
 */
const chunk = { failures: 0, loads: 0 };

let Connector: typeof MercureConnector;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

beforeEach(async () => {
    useScopedFakeTimers();
    vi.resetModules();
    vi.doMock("../../../src/transport/platform-checks", async (importOriginal) => {
        chunk.loads++;
        if (chunk.failures > 0) {
            chunk.failures--;
            throw new TypeError("Failed to fetch dynamically imported module");
        }
        return importOriginal();
    });
    chunk.failures = 0;
    chunk.loads = 0;
    ({ MercureConnector: Connector } = await import("../../../src/connector/mercure-connector"));
    auth = new FakeAuthServer();
    ES = createFakeEventSource();
});

afterEach(() => {
    for (const connector of connectors.splice(0)) connector.disconnect();
    vi.unstubAllGlobals();
    vi.useRealTimers();
});

/** A connector with the fake `EventSource` and `fetch` (`shareAcrossTabs: false`: happy-dom has no Web Locks anyway). */
function connector(options: MercureConnectorOptions = {}): MercureConnector {
    const made = new Connector({ host: HUB, shareAcrossTabs: false, eventSource: ES, fetch: auth.fetch, ...options });
    connectors.push(made);
    return made;
}

/** Let the loads and zero-delay timers run until `done()` holds (see {@link settleLoadsUntil}). */
const settle = (done?: () => boolean): Promise<void> => settleLoadsUntil(done);

describe("the platform checks chunk", () => {
    it("is never imported in a page whose options resolve as they are; a relative host and the auth endpoint stay relative to the page", async () => {
        const made = connector({ host: "/.well-known/mercure" });
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(new URL(ES.live()[0]!.url).origin + new URL(ES.live()[0]!.url).pathname).toBe(HUB);
        expect(auth.requests.map((request) => request.url)).toEqual(["/broadcasting/auth"]);
        expect(chunk.loads).toBe(0);
    });

    it("is loaded outside a page, where the auth endpoint resolves against the hub", async () => {
        vi.stubGlobal("location", undefined);
        const made = connector();
        made.privateChannel("orders.1");
        await settle(() => ES.live().length > 0);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(auth.requests.map((request) => request.url)).toEqual(["https://app.test/broadcasting/auth"]);
        expect(chunk.loads).toBe(1);
    });

    it("is loaded for a host that does not parse, and says so with invalid_option", async () => {
        const made = connector({ host: "http://[::1" });
        const errors: MercureError[] = [];
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length > 0);
        expect(chunk.loads).toBe(1);
        expect([errors[0]!.code, errors[0]!.channel]).toEqual(["invalid_option", "news"]);
        expect(errors[0]!.message).toContain('The `host` option "http://[::1" is not a valid URL');
        expect(auth.requests).toHaveLength(0);
    });

    it("failing to load gives each joined channel load_failed, goes reconnecting, and the retry with backoff downloads it again", async () => {
        vi.stubGlobal("location", undefined);
        chunk.failures = 1;
        const made = connector();
        const errors: MercureError[] = [];
        made.channel("news").error((error: MercureError) => errors.push(error));
        await settle(() => errors.length > 0);
        expect([errors[0]!.code, errors[0]!.channel]).toEqual(["load_failed", "news"]);
        expect(errors[0]!.message).toContain("The connection set-up code");
        expect(made.connectionStatus()).toBe("reconnecting");
        expect(auth.requests).toHaveLength(0);
        // The first backoff is 1 s ± 20 %: the retry downloads the chunk again, then authorizes.
        await vi.advanceTimersByTimeAsync(1_500);
        await settle(() => ES.live().length > 0);
        expect(chunk.loads).toBe(2);
        expect(auth.requests).toHaveLength(1);
        ES.live()[0]!.emitOpen();
        await settle();
        expect(made.connectionStatus()).toBe("connected");
        expect(errors).toHaveLength(1);
    });
});
