// The unit tests run the connector with its capabilities' chunks (presence, encrypted channels, whispers) already
// downloaded, as a page has them from their first use on: joins then build them in the same task. The path before a
// chunk has arrived (the download beside the auth request, a failed download) is tested with slots of the tests' own
// in test/unit/connector/capabilities.test.ts and in Chromium against the built files.
// So is the probe of a stream refused for good (its chunk, and the diagnostics it loads): the retry waits for that
// probe, and a first import() settles in real time, which no fake timer orders.
import { CAPABILITY_SLOTS } from "../../src/connector/capability-slots";
import { loadDiagnostics } from "../../src/discovery/load";

await Promise.all([...CAPABILITY_SLOTS.map((slot) => slot.chunk()), loadDiagnostics(), import("../../src/connector/stream-diagnosis")]);
