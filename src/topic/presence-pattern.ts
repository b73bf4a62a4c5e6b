import { rawUrlEncode } from "./encode";

/**
 * The hub's subscription-API path for the `host` URL: its path with one trailing `/` removed, then
 * `/subscriptions/`.
 */
function subscriptionsPath(hub: URL): string {
    // [spec] laravel-mercure §3: <hostPath> = `host` URL path with one trailing `/` removed.
    return hub.pathname.replace(/\/$/, "") + "/subscriptions/";
}

/**
 * Build the `match_urlpattern` that routes a presence channel's subscription events to the stream:
 * `<hostPath>/subscriptions/:match_type/` + enc(channel topic) + `/:subscriber`.
 *
 * The whole topic is encoded (`:` `/` `*` `(` `)` included), so the pattern matches it literally.
 */
export function presencePattern(hub: URL, topic: string): string {
    // [spec] laravel-mercure §3: the client matcher; its subscriber segment is not optional.
    return subscriptionsPath(hub) + ":match_type/" + rawUrlEncode(topic) + "/:subscriber";
}

/**
 * Build the URL of a presence channel's active-subscriptions snapshot:
 * `<origin><hostPath>/subscriptions/exact/` + enc(channel topic).
 */
export function snapshotUrl(hub: URL, topic: string): string {
    // [spec] laravel-mercure §3 and §5.4 step 3: the exact-matcher collection of the channel topic.
    return hub.origin + subscriptionsPath(hub) + "exact/" + rawUrlEncode(topic);
}
