/**
 * `laravel-echo-mercure/dev`: the Node-only development stack. A Mercure 1.0 hub, a server that behaves like
 * Laravel's `mercure` broadcasting driver, and both on one origin with pages, for tests and the demo.
 * Development and test tools, not production servers.
 */
export { MercureHub, startDevHub, type DevHub, type DevHubOptions, type HubStats, type HubUpdate, type MercureHubOptions, type OpenStream, type SubscribeConnectionRecord, type UngrantedSubscription } from "./hub";
export { BroadcastingApp, deriveChannelKey, openJwe, sealJwe, type BroadcastInput, type BroadcastingAppOptions, type ChannelCallback, type DevUser } from "./laravel";
export { startDevServer, type DevServer, type DevServerOptions, type RenderedPage } from "./server";
export { startDemo, DEMO_USERS } from "./demo/demo";
export { cookieJarFetch, type CookieJarFetch } from "./cookie-jar";
