/**
 * `laravel-echo-mercure/testing`: Echo for an app's unit tests, on the real `MercureConnector` with an in-memory hub
 * and Laravel app in place of the network (see `createTestEcho`). Runs in Vitest or Jest, with happy-dom, jsdom or no
 * DOM at all; uses no timers of its own and nothing of Node.js (the end-to-end stack is `laravel-echo-mercure/testing/e2e`).
 *
 * The connector loads presence, encrypted channels, whispers, diagnostics (and the stream's probe), the search for a failing channel, the
 * platform set-up (the `EventSource` adapter, the checks) as lazy chunks, which in a browser are downloads that settle in a later task. This entry loads them before any test runs
 * (through the connector's own loaders, and the same files they import), so that the connector finds them loaded or
 * settles its `import()` of them within microtasks, and `hub.flush()` needs no timer.
 */
import { CAPABILITY_SLOTS } from "../connector/capability-slots";
import { loadSetup } from "../transport/platform";

// The kit's connectors pass the eventSource and fetch options: they use the platform set-up (the EventSource adapter;
// without a page, no DOM or jsdom's about:blank, the checks). Loaded first, on its own: Jest 30's ESM loader fails to
// link it while it links the whisper chunk too ("request for './core-….js' is not in cache").
await loadSetup();
await Promise.all([
    ...CAPABILITY_SLOTS.map((slot) => slot.chunk()),
    import("../discovery/diagnose"),
    import("../connector/stream-diagnosis"),
    import("../connector/batch-isolation"),
]);

export { createTestEcho, TEST_HUB_URL, type TestEcho, type TestEchoOptions, type TestFramework } from "./create-test-echo";
export { TestHub, type BroadcastOptions, type HubCondition, type PresenceControl, type SentWhisper, type WhisperOptions } from "./test-hub";
export { TOPIC_PREFIX, type TestUser } from "./laravel-side";
export { MemoryEventSource } from "./memory-event-source";
export { wireEventName } from "./event-names";
