import { vi } from "vitest";
import type { MercureConnector } from "../../src/connector/mercure-connector";
import { FakeAuthServer } from "./fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "./fake-event-source";
import { FakeBrowser } from "./fake-tabs";

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
