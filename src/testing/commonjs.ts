/**
 * `laravel-echo-mercure/testing` for CommonJS (`dist/testing/index.cjs`: Jest's default mode, which `require()`s the
 * package): the ESM entry's exports, on the CommonJS core. A CommonJS module cannot wait for the lazy chunks at the top
 * as the ESM entry does; here they are `require()`d inside a promise that settles within microtasks, before any test
 * runs, and so is any `import()` of them the connector makes.
 */
import { preloadChunks } from "./preload";

// A chunk that failed to load is reported by the connector's own loader (load_failed) when a test needs it.
preloadChunks().catch(() => undefined);

export * from "./exports";
