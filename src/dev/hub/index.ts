/**
 * The development Mercure 1.0 hub: {@link MercureHub} to mount in any Node HTTP server, {@link startDevHub}
 * to run one on 127.0.0.1.
 */
export { MercureHub } from "./hub";
export { startDevHub } from "./server";
export type { DevHub, DevHubOptions } from "./server";
export type { MercureHubOptions } from "./options";
export type { HubUpdate } from "./update";
export type { HubStats, OpenStream, SubscribeConnectionRecord, UngrantedSubscription } from "./runtime";
