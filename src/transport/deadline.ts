// Bounded waits live with the other timers (src/timers.ts), below auth and transport; re-exported for the readers here.
export { within, type Waited } from "../timers";
