// The dev stack the bench measures against: the built dev server (dist/dev) on 127.0.0.1, one origin for the
// hub, the Laravel-compatible app and the bench page, with the channels every scenario joins.
import { deriveChannelKey, sealJwe, startDevServer } from "../../dist/dev/index.js";
import { rawUrlEncode } from "../../dist/index.js";
import { BENCH_PAGE, benchPage } from "./page.mjs";

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
 * with the bench page and one authorized user; resolves with the server and publishing helpers. `distDir` is the
 * build the bench page loads (default: this package's dist/; another build compares two versions in one run).
 */
export async function startBenchStack({ history = true, distDir } = {}) {
    /** Why the hub refused requests (token checks and grants), for the report of a run that saw refusals. */
    const refusals = [];
    const server = await startDevServer({
        hub: { history, onRefusal: (message) => refusals.push(message) },
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
        pages: { [BENCH_PAGE]: benchPage() },
        ...(distDir === undefined ? {} : { distDir }),
    });
    return {
        server,
        refusals,
        /** Publish one plaintext broadcast to one channel in-process (the hub's own publish path). */
        publish(channel, event, payload) {
            return server.hub.publish({
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
            return server.hub.publish({ topics: [topicOf(channel)], private: true, data });
        },
        /** The hub update of a plaintext broadcast to `channel`, for {@link burst}. */
        update(channel, event, payload) {
            return { topics: [topicOf(channel)], private: !isPublic(channel), data: JSON.stringify({ channels: [channel], event, payload }) };
        },
        /** The hub update of update data prepared by {@link sealed}, for {@link burst}. */
        updateData(channel, data) {
            return { topics: [topicOf(channel)], private: true, data };
        },
        /** Publish `updates` at once, each open stream receiving its share in one socket write (MercureHub.publishBurst). */
        burst(updates) {
            return server.hub.publishBurst(updates);
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
