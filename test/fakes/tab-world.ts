import { vi } from "vitest";
import { MercureConnector } from "../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../src/connector/options";
import { HUB, settleLoads } from "./connector-harness";
import { FakeAuthServer } from "./fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "./fake-event-source";
import { FakeBrowser, type FakeTab } from "./fake-tabs";
import { linkName } from "../../src/share/load";

/** What the tab-sharing unit tests run on: one fake browser of tabs, one fake hub's `EventSource`, one fake auth endpoint. */
export interface TabWorld {
    browser: FakeBrowser;
    ES: FakeEventSourceClass;
    auth: FakeAuthServer;
}

/** A fresh {@link TabWorld} on fake timers (`Date` included: tabs compare clocks); call it from `beforeEach`. */
export function enterTabWorld(): TabWorld {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    return { browser: new FakeBrowser(), ES: createFakeEventSource(), auth: new FakeAuthServer() };
}

/** Disconnect the test's `connectors` (emptying the list) and go back to real timers; call it from `afterEach`. */
export function leaveTabWorld(connectors: MercureConnector[]): void {
    for (const connector of connectors.splice(0)) connector.disconnect();
    vi.useRealTimers();
}

/**
 * Open `tab` (default: a new tab of the world's browser) with its connector on the world's hub `EventSource` and auth
 * endpoint, added to `connectors` (which {@link leaveTabWorld} disconnects).
 */
export function openTab(
    world: TabWorld,
    connectors: MercureConnector[],
    options: MercureConnectorOptions = {},
    tab: FakeTab = world.browser.tab(),
): { tab: FakeTab; connector: MercureConnector } {
    const connector = new MercureConnector({ host: HUB, eventSource: world.ES, fetch: world.auth.fetch, shareEnvironment: tab.env, ...options });
    connectors.push(connector);
    return { tab, connector };
}

/** Let `ms` of fake time pass, then the tasks and microtasks (messages between tabs, lock grants, chunk imports). */
export async function settleTabs(ms = 0): Promise<void> {
    await vi.advanceTimersByTimeAsync(ms);
    await settleLoads(1, 30);
}

/** Open every real stream of `ES` still connecting, and let replaced streams drain out (three rounds, 2 s apart). */
export async function openAllStreams(ES: FakeEventSourceClass): Promise<void> {
    for (let round = 0; round < 3; round++) {
        for (const source of ES.live()) if (source.readyState === 0) source.emitOpen();
        await settleTabs(round === 0 ? 0 : 2_000);
    }
}

/**
 * Another tab of `browser` pings the link of the world's connectors (hub {@link HUB}, the default auth endpoint, no
 * identifying header), as a tab that is about to follow does: a tab that leads alone then loads its share client and
 * its engine (issue 53: until then it needs neither).
 */
export function ringLink(browser: FakeBrowser): void {
    const bus = new (browser.tab().env.BroadcastChannel)(linkName({ hub: new URL(HUB), authEndpoint: "/broadcasting/auth" }, {}));
    bus.postMessage({ t: "ping", c: "", k: "" });
    bus.close();
}
