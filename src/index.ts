export { MercureConnector } from "./connector/mercure-connector";
export { MercureEcho, encryptedPrivate, type MercureEchoOptions } from "./connector/mercure-echo";
export type { MercureConnectorOptions } from "./connector/options";
export { MercureChannel, type AnyEventCallback, type BroadcastNotification, type ErrorCallback, type EventCallback, type SubscribedCallback } from "./channel/mercure-channel";
export { MercurePrivateChannel } from "./channel/mercure-private-channel";
export { MercurePresenceChannel } from "./presence/mercure-presence-channel";
export { MercureError, type MercureErrorCode } from "./errors";
export type { EventSourceConstructor, EventSourceLike, FetchLike, FetchResponseLike } from "./transport/platform";
export { rawUrlEncode } from "./topic/encode";
// `parseLinkHeader`, `discoverFromDocument` and their types: the `laravel-echo-mercure/discovery` entry (src/discovery/public.ts).
export { discoverHub, type DiscoveredHub, type DiscoverHubOptions } from "./discovery";
export type { DebugLogger } from "./connector/debug-log";
