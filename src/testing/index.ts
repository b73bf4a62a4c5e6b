/**
 * `laravel-echo-mercure/testing`: Echo for an app's unit tests, on the real `MercureConnector` with an in-memory hub
 * and Laravel app in place of the network (see `createTestEcho`). Runs in Vitest or Jest, with happy-dom, jsdom or no
 * DOM at all; uses no timers of its own and nothing of Node.js (the end-to-end stack is `laravel-echo-mercure/testing/e2e`).
 *
 * The connector loads whispers, diagnostics and the search for a failing channel as lazy chunks, which in a browser
 * are downloads that settle in a later task. This entry loads them before any test runs (the same files the
 * connector imports), so that the connector's own `import()` of them settles within microtasks and `hub.flush()`
 * needs no timer.
 */
await Promise.all([import("../whisper/index"), import("../discovery/diagnose"), import("../auth/isolation"), import("../transport/event-source-adapter")]);

export { createTestEcho, TEST_HUB_URL, type TestEcho, type TestEchoOptions, type TestFramework } from "./create-test-echo";
export { TestHub, type BroadcastOptions, type HubCondition, type PresenceControl, type SentWhisper, type WhisperOptions } from "./test-hub";
export { TOPIC_PREFIX, type TestUser } from "./laravel-side";
export { MemoryEventSource } from "./memory-event-source";
export { wireEventName } from "./event-names";
