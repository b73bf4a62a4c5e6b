// The dev stack the bench measures against: the built dev server (dist/dev) on 127.0.0.1, one origin for the
// hub, the Laravel-compatible app and the bench page, with the channels every scenario joins. The hub is the
// embedded dev hub (publishing in-process), or the reference Go hub (test/reference-hub/) behind the dev server's
// same-origin proxy, published to over HTTP as Laravel does.
import { deriveChannelKey, sealJwe, startDevServer } from "../../dist/dev/index.js";
import { rawUrlEncode } from "../../dist/index.js";
import { buildReferenceHub, CURRENT_HUB, hasGo, INSTALL_HINT, startReferenceHub } from "../../test/reference-hub/hub.mjs";
import { httpPublisher, publisherToken } from "./http-publisher.mjs";
import { BENCH_PAGE, benchPage } from "./page.mjs";

/** The dev hub, and the reference hub the bench measures beside it. */
export const DEV_HUB = { name: "dev hub", reference: null };
export const REFERENCE_HUB = { name: `reference hub ${CURRENT_HUB}`, reference: CURRENT_HUB };

/**
 * Build the reference hub for the bench (cached by its sources); resolves to false, with the reason, when there
 * is no Go toolchain: the bench then measures the dev hub alone and says so.
 */
export function prepareReferenceHub() {
    if (!hasGo()) return { ok: false, reason: `no Go toolchain (${INSTALL_HINT})` };
    buildReferenceHub(CURRENT_HUB);
    return { ok: true, reason: null };
}

/** Laravel's default topic prefix (what the dev app uses unless told otherwise). */
export const TOPIC_PREFIX = "https://laravel.alt/echo/";

/** The dev user every page logs in as. */
export const USER = { id: 1, name: "Ann" };

/** A fixed 32-byte master key (`encryption_key`) for the encrypted channels: a bench, not a secret. */
const ENCRYPTION_KEY = Buffer.alloc(32, 7);

/** The hub topic of a full channel name (laravel-mercure §3). */
export function topicOf(channel) {
    return TOPIC_PREFIX + "channel/" + rawUrlEncode(channel);
}

/**
 * Start the dev server for the bench (`history`: whether the hub keeps history for `last_event_id` replay),
 * with the bench page and one authorized user, on `hub` (default the dev hub; {@link REFERENCE_HUB} starts a
 * reference hub the server proxies to, closed with it); resolves with the server and publishing helpers. `distDir`
 * is the build the bench page loads (default: this package's dist/; another build compares two versions in one run);
 * `pages` are served beside the bench page (path → HTML); `cacheAssets`: the files of `distDir` served as a production
 * server serves content-hashed assets (the dev server's option).
 */
export async function startBenchStack({ history = true, distDir, hub = DEV_HUB, pages = {}, cacheAssets } = {}) {
    /** Why the hub refused requests (token checks and grants), for the report of a run that saw refusals (dev hub only). */
    const refusals = [];
    /** The HTTP publisher of a reference hub, set once it runs. */
    let publisher = null;
    const options = {
        app: { users: [USER], encryptionKey: ENCRYPTION_KEY.toString("base64") },
        channels: {
            "App.Models.User.{id}": (user, params) => String(user.id) === params.id,
            "orders.{id}": () => true,
            "cycle.{id}": () => true,
            "side.{id}": () => true,
            "stream": () => true,
            "secure": () => true,
            "chat.{id}": (user) => ({ id: user.id, name: user.name }),
        },
        pages: { [BENCH_PAGE]: benchPage(), ...pages },
        ...(distDir === undefined ? {} : { distDir }),
        ...(cacheAssets === undefined ? {} : { cacheAssets }),
    };
    const server =
        hub.reference === null
            ? await startDevServer({ ...options, hub: { history, onRefusal: (message) => refusals.push(message) } })
            : await startDevServer({
                  ...options,
                  // Configured as a Laravel deployment configures its hub: the app's key and issuer, the public hub
                  // URL as the audience, the app's origin for whispers.
                  externalHub: async (stack) => {
                      const running = await startReferenceHub(hub.reference, {
                          jwtKey: stack.jwtKey,
                          issuer: stack.issuer,
                          resource: stack.publicUrl,
                          cookieName: stack.cookieName,
                          publishOrigins: [stack.origin],
                          history,
                      });
                      // One token for the whole run (the full bench takes about 6 minutes).
                      publisher = httpPublisher(running.url, publisherToken({ jwtKey: stack.jwtKey, issuer: stack.issuer, audience: stack.publicUrl, ttlSeconds: 3_600 }));
                      return { url: running.url, close: () => running.close() };
                  },
              });
    /** How long the last burst took to publish, per message (ms), over HTTP. */
    let publishMsPerMessage = 0;
    /** Publish one update: in-process on the dev hub, a POST (after the previous ones) on the reference hub. */
    const publishUpdate = (update) => (publisher === null ? server.hub.publish(update) : publisher.send(update));
    return {
        server,
        refusals,
        hub,
        /** Whether publishing goes over HTTP (a reference hub) rather than in-process. */
        overHttp: publisher !== null,
        /** Publish one plaintext broadcast to one channel (a promise over HTTP). */
        publish(channel, event, payload) {
            return publishUpdate({
                topics: [topicOf(channel)],
                private: !isPublic(channel),
                data: JSON.stringify({ channels: [channel], event, payload }),
            });
        },
        /** The hub update data of an encrypted broadcast to `channel`, sealed as Laravel seals it (§6.3). */
        sealed(channel, event, payload) {
            const key = deriveChannelKey(ENCRYPTION_KEY, channel);
            return JSON.stringify({ channels: [channel], data: sealJwe(key, JSON.stringify({ event, payload })) });
        },
        /** Publish update data prepared by {@link sealed}. */
        publishData(channel, data) {
            return publishUpdate({ topics: [topicOf(channel)], private: true, data });
        },
        /** The hub update of a plaintext broadcast to `channel`, for {@link burst}. */
        update(channel, event, payload) {
            return { topics: [topicOf(channel)], private: !isPublic(channel), data: JSON.stringify({ channels: [channel], event, payload }) };
        },
        /** The hub update of update data prepared by {@link sealed}, for {@link burst}. */
        updateData(channel, data) {
            return { topics: [topicOf(channel)], private: true, data };
        },
        /**
         * Publish `updates` at once: on the dev hub each open stream receives its share in one socket write
         * (MercureHub.publishBurst); on the reference hub they are POSTed over several connections. Resolves once
         * the hub took them all.
         */
        async burst(updates) {
            if (publisher === null) {
                server.hub.publishBurst(updates);
                return;
            }
            const started = performance.now();
            await publisher.burst(updates);
            publishMsPerMessage = (performance.now() - started) / updates.length;
        },
        /**
         * How long the first arrival of a burst of `count` holds the page before the clock starts: `minimum` on the
         * dev hub (the burst is written at once); over HTTP at least twice what the last burst took to publish,
         * scaled to `count`, so that the whole burst is in the page's buffers when the clock starts, whatever the load.
         */
        holdFor(count, minimum) {
            return Math.max(minimum, Math.ceil(2 * publishMsPerMessage * count));
        },
        /** Reset the hub's and the app's counters. */
        resetStats() {
            server.hub.resetStats();
            server.app.resetStats();
        },
        /** Auth requests and subscribe requests since the last reset. */
        counts() {
            return { auth: server.app.stats.authRequests.length, subscribes: server.hub.stats.subscribeConnections.length };
        },
    };
}

/** Whether a full channel name is public (no private- or presence- prefix). */
function isPublic(channel) {
    return !channel.startsWith("private-") && !channel.startsWith("presence-");
}
