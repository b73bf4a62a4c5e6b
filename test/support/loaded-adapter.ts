/*
 * The unit project's set-up, beside loaded-capabilities.ts: loads the platform set-up chunk
 * (src/transport/platform-setup.ts: the `EventSource` adapter, the hub token, and the checks that the tests run outside
 * a page need) before any test runs, as the testing kit does (src/testing/index.ts). Every connector built on the fakes
 * passes the `eventSource` and `fetch` options, so it loads that chunk before its first auth request; in a browser that
 * load settles in a later task, and under vitest the first `import()` of a module in a worker takes real time (it is
 * transformed), which no fake timer advances. Loaded once here, the connector's own `import()` settles within the
 * ticks a test's `flush()` runs. The tests of the load itself (test/unit/transport/setup-chunk.test.ts) mock the module.
 */
import { loadSetup } from "../../src/transport/platform";

await loadSetup();
