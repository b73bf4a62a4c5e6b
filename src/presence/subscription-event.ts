import { isRecord, parseJson } from "../json";

/**
 * One subscription to a presence channel's topic, as a subscription event or a snapshot entry reports it.
 *
 * - `active: true`: the subscription opened; `payload` is the member payload (never `null`/absent:
 *   payload-less "phantoms" are dropped while parsing).
 * - `active: false`: the subscription ended; `payload` is whatever the hub sent (unused).
 */
export interface Subscription {
    /** The exact topic subscribed to (the document's `match`). */
    topic: string;
    /** The hub-assigned id of the connection (shared by all its subscriptions). */
    subscriber: string;
    /** Whether the subscription opened (`true`) or ended (`false`). */
    active: boolean;
    /** The member payload from the subscriber's presence grant. */
    payload: unknown;
}

/**
 * Parse the data of a live `event: mercure` subscription event; `null` when it is not a usable
 * presence subscription (malformed, not `exact`, a phantom).
 *
 * The hub may pretty-print the JSON over several `data:` lines; `id`, `type` and `@context` are ignored.
 */
export function parseSubscriptionEvent(data: unknown): Subscription | null {
    const document = typeof data === "string" ? parseJson(data) : null;
    // [spec] laravel-mercure §5.4 step 6: `match` string and `match_type === "exact"` (urlpattern
    // subscriptions carry the payload too and must be ignored).
    return isRecord(document) && typeof document["match"] === "string" && document["match_type"] === "exact"
        ? readSubscription(document, document["match"])
        : null;
}

/**
 * Validate one subscription document of topic `topic`: `subscriber` string, `active` boolean, and a
 * payload when active; `null` otherwise.
 */
export function readSubscription(document: Record<string, unknown>, topic: string): Subscription | null {
    const { subscriber, active, payload } = document;
    if (typeof subscriber !== "string" || typeof active !== "boolean") return null;
    // [spec] §5.4 step 6: active without payload is a phantom (a subscriber without a presence grant).
    return active && payload == null ? null : { topic, subscriber, active, payload };
}
