import type { IncomingMessage, ServerResponse } from "node:http";
import { rawUrlEncode } from "../../index";
import { authenticate, sendChallenge } from "./authorization";
import { canSubscribeToAny } from "./grants";
import { send, sendError } from "./http";
import { goIndentedJson } from "./json";
import type { RequestContext } from "./http";
import { isMatchType } from "./matchers";
import type { HubRuntime } from "./runtime";
import type { Subscriber, Subscription } from "./subscriber";
import { generateEventId, SUBSCRIPTION_EVENT_TYPE } from "./update";
import type { Update } from "./update";

/** The document describing one subscription, in events and in the API. */
export interface SubscriptionDocument {
    /** The subscription's topic (relative, hub path based). */
    id: string;
    /** Always `subscription`. */
    type: "subscription";
    /** Hub-assigned id of the connection. */
    subscriber: string;
    /** The matcher string. */
    match: string;
    /** The matcher type. */
    match_type: string;
    /** Whether the subscription is open. */
    active: boolean;
    /** Payload of the first matching subscribe detail, when it has one. */
    payload?: unknown;
}

/** Topic of a subscription: `<hub path>/subscriptions/<match_type>/<enc(match)>/<enc(subscriber)>`. */
export function subscriptionTopic(hubPath: string, matchType: string, match: string, subscriber: string): string {
    // [spec] §4.1: each variable percent-encoded exactly once as a whole (RFC 3986 unreserved kept).
    return `${hubPath}/subscriptions/${rawUrlEncode(matchType)}/${rawUrlEncode(match)}/${rawUrlEncode(subscriber)}`;
}

/** Build the document of one subscription of `subscriber`. */
export function subscriptionDocument(
    hubPath: string,
    subscriber: Subscriber,
    subscription: Subscription,
    active: boolean,
): SubscriptionDocument {
    const { type, value } = subscription.matcher;
    const document: SubscriptionDocument = {
        id: subscriptionTopic(hubPath, type, value, subscriber.id),
        type: "subscription",
        subscriber: subscriber.id,
        match: value,
        match_type: type,
        active,
    };
    // [spec] §4.1: the payload is omitted when there is none (Go's omitempty drops a null one too).
    if (subscription.payload !== undefined && subscription.payload.value !== null) document.payload = subscription.payload.value;
    return document;
}

/** The private `mercure`-typed updates announcing each subscription of `subscriber` as active or inactive. */
export function subscriptionUpdates(hubPath: string, subscriber: Subscriber, active: boolean): Update[] {
    // [spec] §4.1: one private update per subscription, SSE type `mercure`, topic = the document id.
    return subscriber.subscriptions.map((subscription) => {
        const document = subscriptionDocument(hubPath, subscriber, subscription, active);
        return {
            id: generateEventId(),
            topics: [document.id],
            // [spec] §4.1: pretty-printed JSON, so the data spans several `data:` lines as on the reference hub.
            data: goIndentedJson(document),
            private: true,
            type: SUBSCRIPTION_EVENT_TYPE,
        };
    });
}

/**
 * Serve the subscription API: `<path>/subscriptions`, `…/<match_type>/<enc(match)>` and
 * `…/<match_type>/<enc(match)>/<enc(subscriber)>`. `rest` is what follows `<path>/subscriptions`.
 */
export function handleSubscriptionsApi(
    req: IncomingMessage,
    res: ServerResponse,
    context: RequestContext,
    runtime: HubRuntime,
    rest: string,
): void {
    const { options } = runtime;
    const auth = authenticate(req, context, options, "subscriber");
    if (!auth.ok) return sendChallenge(res, context, auth.status, auth.error);
    // [spec] §4.2: a subscribe grant must match the request path in relative form, as sent, no query.
    if (!canSubscribeToAny(auth.token?.grants ?? [], [context.rawPath])) {
        return sendChallenge(res, context, 403, "insufficient_scope");
    }
    if (rest !== "" && !rest.startsWith("/")) return sendError(res, 404, "Not found.");
    const segments = rest === "" ? [] : rest.slice(1).split("/");
    if (segments.length === 1 || segments.length > 3 || segments.some((s) => s === "")) {
        return sendError(res, 404, "Not found.");
    }
    const [matchType, encodedMatch, encodedSubscriber] = segments;
    if (matchType !== undefined && !isMatchType(rawUrlDecode(matchType))) {
        return sendError(res, 400, "Unknown match type.");
    }
    const match = encodedMatch === undefined ? undefined : rawUrlDecode(encodedMatch);
    const subscriberId = encodedSubscriber === undefined ? undefined : rawUrlDecode(encodedSubscriber);
    if (match === null || subscriberId === null) return sendError(res, 404, "Not found.");
    const documents: SubscriptionDocument[] = [];
    for (const subscriber of runtime.subscribers) {
        if (!subscriber.isOpen || (subscriberId !== undefined && subscriber.id !== subscriberId)) continue;
        for (const subscription of subscriber.subscriptions) {
            const { type, value } = subscription.matcher;
            if (matchType !== undefined && (type !== rawUrlDecode(matchType) || value !== match)) continue;
            documents.push(subscriptionDocument(options.path, subscriber, subscription, true));
        }
    }
    // [spec] §4.2: the cursor to open the stream with, so nothing is lost between snapshot and stream.
    const headers = {
        Link: `<${context.hubUrl}>; rel="mercure"; last-event-id=${quote(runtime.history.lastEventId)}; type="mercure"; content-type="application/json"`,
        "Cache-Control": "no-cache",
    };
    if (subscriberId !== undefined) {
        const document = documents[0];
        if (document === undefined) return sendError(res, 404, "Unknown subscription.", headers);
        return send(res, 200, goIndentedJson(document), { ...headers, "Content-Type": "application/json" });
    }
    const collection = { id: context.rawPath, type: "subscriptions", subscriptions: documents };
    // [spec] §4.2: application/json, indented like the reference hub's documents.
    send(res, 200, goIndentedJson(collection), { ...headers, "Content-Type": "application/json" });
}

/** Quote a Link parameter value (RFC 9110 quoted-string). */
function quote(value: string): string {
    return `"${value.replace(/["\\]/g, (char) => "\\" + char)}"`;
}

/** Percent-decode a path segment of a subscription URL; null when it is not valid percent-encoded UTF-8. */
function rawUrlDecode(value: string): string | null {
    try {
        return decodeURIComponent(value);
    } catch {
        return null;
    }
}
