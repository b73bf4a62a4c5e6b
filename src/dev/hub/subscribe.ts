import type { IncomingMessage, ServerResponse } from "node:http";
import { authenticate, sendChallenge } from "./authorization";
import { grantsSelector, payloadFor } from "./grants";
import { hasForbiddenChars, parseForm, utf8Length } from "./form";
import { sendError } from "./http";
import type { RequestContext } from "./http";
import { streamClosesAt } from "./lifetime";
import { compileMatcher, MATCHER_PARAMETERS, MAX_PATTERN_BYTES } from "./matchers";
import type { HubRuntime, SubscribeConnectionRecord } from "./runtime";
import { KEEP_ALIVE, STREAM_HEADERS } from "./sse";
import { Subscriber } from "./subscriber";
import type { Subscription } from "./subscriber";

/** Most matcher parameters one subscribe request may carry (the Go hub's limit). */
export const MAX_MATCHERS = 100;

/**
 * Most updates one connection's history replay delivers: the Go hub queues a replay in the connection's buffer of
 * 1 000 updates and disconnects a subscriber whose buffer overflows, so a longer replay delivers 1 000 and ends.
 */
export const MAX_REPLAY = 1_000;

/** A subscribe request's parameters after validation. */
interface SubscribeParameters {
    /** One entry per matcher parameter, in query order. */
    readonly matchers: readonly { readonly name: string; readonly value: string }[];
    /** The `last_event_id` query parameter, when present. */
    readonly lastEventId: string | undefined;
}

/**
 * Parse and validate the subscribe query; returns the reason on a bad request. `legacy` parses it as a 0.x
 * hub does: `topic` parameters are the (exact) matchers and `match…` ones are ignored.
 */
export function parseSubscribeQuery(query: string, legacy = false): SubscribeParameters | string {
    // [spec] §1.2: parse with the form-urlencoded algorithm; values must be valid UTF-8.
    const fields = parseForm(Buffer.from(query, "latin1"));
    if (fields === null) return "The query string is not valid UTF-8.";
    const matchers: { name: string; value: string }[] = [];
    let lastEventId: string | undefined;
    for (const [field, value] of fields) {
        if (field === "last_event_id") {
            lastEventId ??= value;
            continue;
        }
        // [spec] §10: the 0.x `topic` parameter is refused by a 1.0 hub; a 0.x hub knows only it.
        if (field === "topic" && !legacy) return 'The "topic" parameter is not supported; use "match".';
        const name = field === "topic" ? "match" : field;
        if (!name.toLowerCase().startsWith("match") || (legacy && field !== "topic")) continue;
        // [spec] §1.2: names are case-sensitive; any other `match…` name is an error.
        if (!Object.hasOwn(MATCHER_PARAMETERS, name)) return `Unsupported matcher parameter "${name}".`;
        if (matchers.length >= MAX_MATCHERS) return `More than ${MAX_MATCHERS} matcher parameters.`;
        if (value === "" || hasForbiddenChars(value)) return `Invalid "${name}" value.`;
        if (utf8Length(value) > MAX_PATTERN_BYTES) return `A "${name}" value exceeds ${MAX_PATTERN_BYTES} bytes.`;
        matchers.push({ name, value });
    }
    // [spec] §1.2: at least one matcher parameter.
    if (matchers.length === 0) return legacy ? 'Missing "topic" parameter.' : 'Missing "match" subscription parameter.';
    return { matchers, lastEventId };
}

/**
 * Handle a subscribe request (GET or HEAD on the hub path): validate, authenticate, open the event stream,
 * replay history after the cursor, then register for live updates.
 */
export function handleSubscribe(
    req: IncomingMessage,
    res: ServerResponse,
    context: RequestContext,
    runtime: HubRuntime,
): void {
    const { options } = runtime;
    const rawCursor = req.headers["last-event-id"];
    const headerCursor = Array.isArray(rawCursor) ? rawCursor[0] : rawCursor;
    const record: SubscribeConnectionRecord = {
        query: context.query,
        lastEventId: headerCursor ?? null,
        at: Date.now(),
        status: 200,
        closesAt: null,
    };
    runtime.stats.subscribeConnections.push(record);
    const fail = (status: number): void => {
        record.status = status;
    };

    const auth = authenticate(req, context, options, "subscriber", options.anonymous);
    if (!auth.ok) {
        fail(auth.status);
        return sendChallenge(res, context, auth.status, auth.error);
    }
    const parameters = parseSubscribeQuery(context.query, options.legacyProtocol);
    if (typeof parameters === "string") {
        fail(400);
        return sendError(res, 400, parameters);
    }
    const grants = auth.token?.grants ?? null;
    const subscriptions: Subscription[] = [];
    for (const { name, value } of parameters.matchers) {
        const matcher = compileMatcher(MATCHER_PARAMETERS[name]!, value, options.patternBase);
        if (matcher === null) {
            fail(400);
            return sendError(res, 400, `Invalid "${name}" URL pattern.`);
        }
        const payload = grants === null ? undefined : payloadFor(grants, value);
        subscriptions.push(payload === undefined ? { matcher } : { matcher, payload });
    }

    // [spec] §1.4: the header wins over the query parameter; an empty cursor still counts as sent.
    const cursor = headerCursor ?? parameters.lastEventId;
    const replay = cursor === undefined ? null : runtime.history.replay(cursor);
    const headers: Record<string, string> = { ...STREAM_HEADERS };
    // [spec] §1.4: Mercure-Last-Event-ID whenever a cursor was sent.
    if (replay !== null) headers["Mercure-Last-Event-ID"] = replay.lastEventId;
    res.writeHead(200, headers);
    if (req.method === "HEAD") {
        res.end();
        return;
    }
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    // Test instrumentation: the selectors this stream carries that its token does not grant.
    for (const { name, value } of parameters.matchers) {
        if (grants !== null && grantsSelector(grants, MATCHER_PARAMETERS[name]!, value)) continue;
        runtime.stats.ungrantedSubscriptions.push({ query: context.query, selector: value, anonymous: grants === null, at: record.at });
    }

    // [spec] §1.5: the stream ends within 80–100 % of the token's remaining life or of the write timeout.
    record.closesAt = streamClosesAt(record.at, auth.token?.expiresAt ?? null, options);
    const subscriber = new Subscriber(res, subscriptions, grants, {
        heartbeatMs: options.heartbeatMs,
        closesAt: record.closesAt,
        onExpire: () => runtime.stats.expiredStreams++,
        onClose: (closed) => runtime.removeSubscriber(closed),
    });
    // [spec] §1.3: an initial comment flushes the headers so EventSource fires `open`.
    subscriber.write(KEEP_ALIVE);
    // Replay and registration run in one synchronous step: no update can be dispatched in between, so none
    // is lost or sent twice. [spec] §1.4: replay re-checks authorization against the current token.
    let replayed = 0;
    for (const update of replay?.updates ?? []) {
        if (!subscriber.accepts(update)) continue;
        // [spec] mercure-hub §1.5: past 1 000 the stream ends cleanly after those; the client's reconnect with the
        // last id continues the replay. The subscriber is still announced (then gone), as the Go hub does.
        if (replayed === MAX_REPLAY) {
            subscriber.end();
            break;
        }
        subscriber.send(update);
        replayed++;
    }
    runtime.addSubscriber(subscriber);
}
