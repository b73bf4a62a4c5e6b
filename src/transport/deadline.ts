// Bounded waits live below auth and transport (src/bounded-wait.ts: its own module, so that only the lazy chunks that
// use it carry it); re-exported for the readers here.
export { within, type Waited } from "../bounded-wait";
