// What `laravel-echo-mercure/testing` exports, in its ESM entry (index.ts) and its CommonJS one (commonjs.ts).
export { createTestEcho, TEST_HUB_URL, type TestEcho, type TestEchoOptions, type TestFramework } from "./create-test-echo";
export { TestHub, type BroadcastOptions, type HubCondition, type PresenceControl, type SentWhisper, type WhisperOptions } from "./test-hub";
export { TOPIC_PREFIX, type TestUser } from "./laravel-side";
export { MemoryEventSource } from "./memory-event-source";
export { wireEventName } from "./event-names";
