/*
 * The `laravel-echo-mercure/discovery` entry (dist/discovery/index.js): the synchronous discovery helpers for
 * code that reads links itself. They live outside the main entry so that an app which sets `host` (nearly all)
 * ships none of the link parsing; the connector reaches the same code through its lazy discovery chunk. The
 * asynchronous `discoverHub()` stays in the main entry (it loads that chunk on first call).
 */

export { parseLinkHeader, type LinkValue } from "./link-header";
export { discoverFromDocument, type DiscoveredHub, type DocumentLike } from "./link-element";
