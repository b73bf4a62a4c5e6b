import type { History } from "./history";
import type { ResolvedHubOptions } from "./options";
import type { Subscriber } from "./subscriber";
import type { Update } from "./update";

/** One subscribe request as the test counters record it. */
export interface SubscribeConnectionRecord {
    /** Raw query string as sent (without `?`). */
    query: string;
    /** The `Last-Event-ID` request header, or `null` when absent. */
    lastEventId: string | null;
    /** When the request arrived (ms since the epoch). */
    at: number;
    /** HTTP status the hub answered with (200 for an opened stream). */
    status: number;
    /** When the hub will end the opened stream (ms since the epoch), or `null` (no stream, or no end). */
    closesAt: number | null;
}

/**
 * A selector an opened stream carries that its token does not grant: the hub still routes public updates to
 * it, but filters out every private update (a tab subscribed with another tab's cookie stays silently deaf).
 */
export interface UngrantedSubscription {
    /** The subscribe request's raw query string (without `?`). */
    readonly query: string;
    /** The matcher parameter's value (a topic or URL pattern) no subscribe grant of the token covers. */
    readonly selector: string;
    /** Whether the request carried no token at all (an anonymous subscriber has no grants). */
    readonly anonymous: boolean;
    /** When the stream opened (ms since the epoch). */
    readonly at: number;
}

/** One open event stream as the test hooks show it. */
export interface OpenStream {
    /** The hub's id of the connection. */
    readonly id: string;
    /** Its matcher values (topics and URL patterns), in query order. */
    readonly selectors: readonly string[];
}

/** Test counters of a hub; the object and its arrays are live and reset in place. */
export interface HubStats {
    /** Every subscribe request, in arrival order. */
    readonly subscribeConnections: SubscribeConnectionRecord[];
    /** Accepted publications (HTTP and in-process; hub-generated subscription events are not counted). */
    publishes: number;
    /** Streams the hub ended because their lifetime ran out (token expiry or write timeout), not the client. */
    expiredStreams: number;
    /** Currently open event streams. */
    readonly openConnections: number;
    /** The selectors of every event stream open now, in connection order (a fresh array on each read). */
    readonly openStreams: readonly OpenStream[];
    /** Every selector an opened stream carried without a subscribe grant of its token, in arrival order. */
    readonly ungrantedSubscriptions: UngrantedSubscription[];
}

/**
 * Fresh test counters whose `openConnections` and `openStreams` read `openStreams()` live (a hub's own streams,
 * or those a proxy forwards).
 */
export function createHubStats(openStreams: () => readonly OpenStream[]): HubStats {
    return {
        subscribeConnections: [],
        publishes: 0,
        expiredStreams: 0,
        ungrantedSubscriptions: [],
        get openConnections() {
            return openStreams().length;
        },
        get openStreams() {
            return openStreams();
        },
    };
}

/** Reset `stats` in place (the arrays stay the same objects). */
export function resetHubStats(stats: HubStats): void {
    stats.subscribeConnections.length = 0;
    stats.publishes = 0;
    stats.expiredStreams = 0;
    stats.ungrantedSubscriptions.length = 0;
}

/** The hub state the request handlers share. @internal */
export interface HubRuntime {
    /** Resolved options. */
    readonly options: ResolvedHubOptions;
    /** Replay history. */
    readonly history: History;
    /** Open event streams, in connection order. */
    readonly subscribers: ReadonlySet<Subscriber>;
    /** Test counters. */
    readonly stats: HubStats;
    /** Store `update` in history and deliver it to every subscriber that accepts it. */
    dispatch(update: Update): void;
    /** Register an open stream and announce its subscriptions; it is removed (and announced inactive) on close. */
    addSubscriber(subscriber: Subscriber): void;
    /** Forget a closed stream and announce its subscriptions as inactive. */
    removeSubscriber(subscriber: Subscriber): void;
}
