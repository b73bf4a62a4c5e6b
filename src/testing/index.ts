/**
 * `laravel-echo-mercure/testing`: Echo for an app's unit tests, on the real `MercureConnector` with an in-memory hub
 * and Laravel app in place of the network (see `createTestEcho`). Runs in Vitest or Jest, with happy-dom, jsdom or no
 * DOM at all; uses no timers of its own and nothing of Node.js (the end-to-end stack is `laravel-echo-mercure/testing/e2e`).
 *
 * The connector loads presence, encrypted channels, whispers, diagnostics and more as lazy chunks, which in a browser
 * are downloads that settle in a later task. This entry loads them before any test runs (see `preloadChunks`).
 */
import { preloadChunks } from "./preload";

await preloadChunks();

export * from "./exports";
