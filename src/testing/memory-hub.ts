import { rawUrlEncode } from "../index";
import type { EventSourceConstructor, FetchLike, FetchResponseLike } from "../transport/platform";
import { channelOfTopic, channelTopic, memberPayload, type TestAuthEndpoint, type TestUser } from "./laravel-side";
import { MemoryEventSource, type MemoryStreamHost } from "./memory-event-source";

/*
 * The network of the testing kit: a Mercure hub (mercure-hub §1–§4: subscribe, publish, history, subscription
 * events and the subscription API) and the route to the Laravel app's auth endpoint, both in memory. Streams are
 * {@link MemoryEventSource}s, requests go through {@link MemoryHub.fetch}; nothing leaves the process.
 */

/** One update the hub dispatches. */
export interface HubUpdate {
    /** Its id (`urn:uuid:…`), the `lastEventId` subscribers see. */
    readonly id: string;
    /** Its topics. */
    readonly topics: readonly string[];
    /** Its data. */
    readonly data: string;
    /** Its SSE type: `message`, or `mercure` for subscription events. */
    readonly type: string;
    /** A private update of a channel topic reaches only streams whose channel the auth endpoint grants. */
    readonly private: boolean;
}

/** One subscriber of a presence channel that the test made up (another user's connection). */
interface Member {
    readonly subscriber: string;
    readonly user: TestUser;
}

/** A stream the hub serves, with what it subscribed to. */
interface Stream {
    readonly source: MemoryEventSource;
    /** Exact topics (`match`). */
    readonly topics: readonly string[];
    /** `match_urlpattern` values, compiled. */
    readonly patterns: readonly RegExp[];
    /** The subscriber id of its current connection (a reconnect is a new connection). */
    subscriber: string;
    /** The id of the last update it received, for the replay of a reconnect. */
    lastId: string | null;
    /** Whether it is connected (open) right now. */
    connected: boolean;
    /** When it last opened, counted in openings. */
    opened: number;
}

/** A made-up id, counted so that every run of a test sees the same ids. */
function uuid(kind: number, counter: number): string {
    return `urn:uuid:00000000-0000-4000-800${kind}-${counter.toString(16).padStart(12, "0")}`;
}

/**
 * A URL pattern as the connector writes presence matchers (laravel-mercure §3: literal text and `:name` segments),
 * compiled to a regular expression over subscription-event topics; null for anything else (never matches).
 */
export function compilePattern(pattern: string): RegExp | null {
    if (/[*(){}?+\\]/.test(pattern)) return null;
    const source = pattern
        .split(/(:[A-Za-z_][A-Za-z0-9_]*)/)
        .map((part, index) => (index % 2 === 1 ? "[^/]+" : part.replace(/[.^$|[\]]/g, "\\$&")))
        .join("");
    return new RegExp(`^${source}$`);
}

/** The in-memory hub, and the route to the auth endpoint. */
export class MemoryHub implements MemoryStreamHost {
    /** Every stream created and not closed by the client, in creation order. */
    readonly #streams = new Map<MemoryEventSource, Stream>();

    /** Every update dispatched, for the replay of `last_event_id`. */
    readonly #history: HubUpdate[] = [];

    /** Made-up members of presence channels, by channel name. */
    readonly #members = new Map<string, Member[]>();

    /** Whispers the app published, by channel name. */
    readonly published = new Map<string, Array<{ event: string; payload: unknown; socket: string | null }>>();

    /** Counters of made-up ids. */
    #updates = 0;
    #subscribers = 0;
    #openings = 0;

    /** Bumped by everything the connector makes the hub do: {@link MemoryHub.settled} waits until it stays still. */
    activity = 0;

    /** A status the hub refuses every stream with (`status("failed")`), or null. */
    #refusal: number | null = null;

    /** The `EventSource` constructor bound to this hub, for the connector's `eventSource` option. */
    readonly EventSource: EventSourceConstructor;

    /** The `fetch` bound to this hub and the auth endpoint, for the connector's `fetch` option. */
    readonly fetch: FetchLike = (url, init) => Promise.resolve(this.#request(url, init));

    /**
     * Create the hub at `hubUrl` (an absolute URL), with the Laravel app's `auth` endpoint at `authPath`; `user` is
     * the user the app's own connections present (their presence payload).
     */
    constructor(
        readonly hubUrl: URL,
        readonly authPath: string,
        readonly auth: TestAuthEndpoint,
        readonly user: () => TestUser,
    ) {
        const hub = this;
        this.EventSource = class TestEventSource extends MemoryEventSource {
            /** Create a stream served by this hub; `init` (`withCredentials`, `fetch`) means nothing in memory. */
            constructor(url: string, _init?: unknown) {
                super(hub, url);
            }
        };
    }

    /** A stream was created: open it in a microtask, unless the hub refuses streams. */
    connect(source: MemoryEventSource): void {
        this.activity++;
        const stream: Stream = {
            source,
            topics: source.url.searchParams.getAll("match"),
            patterns: source.url.searchParams.getAll("match_urlpattern").flatMap((value) => compilePattern(value) ?? []),
            subscriber: "",
            lastId: source.url.searchParams.get("last_event_id"),
            connected: false,
            opened: -1,
        };
        this.#streams.set(source, stream);
        void Promise.resolve().then(() => {
            if (source.readyState !== MemoryEventSource.CONNECTING) return;
            if (this.#refusal !== null) return source.refuse(this.#refusal);
            this.#open(stream);
        });
    }

    /** The client closed a stream: announce its subscriptions inactive. */
    closed(source: MemoryEventSource): void {
        this.activity++;
        const stream = this.#streams.get(source);
        this.#streams.delete(source);
        if (stream?.connected === true) this.#disconnect(stream);
    }

    /** Open (or reopen) a stream: a new connection, announced, then the replay after its last event id. */
    #open(stream: Stream): void {
        this.activity++;
        stream.subscriber = uuid(1, ++this.#subscribers);
        stream.connected = true;
        stream.opened = ++this.#openings;
        const since = stream.lastId === null ? -1 : this.#history.findIndex((update) => update.id === stream.lastId);
        stream.source.open();
        // [spec] mercure-hub §4.1: every new subscription is announced, to the subscriber itself too.
        for (const topic of stream.topics) this.#announce(topic, stream.subscriber, this.#ownPayload(topic), true);
        if (since >= 0) for (const update of this.#history.slice(since + 1)) this.#deliver(stream, update);
    }

    /** A connection ended: its subscriptions are announced inactive. */
    #disconnect(stream: Stream): void {
        stream.connected = false;
        for (const topic of stream.topics) this.#announce(topic, stream.subscriber, this.#ownPayload(topic), false);
    }

    /** The payload of the app's own subscription to `topic`: the user's, on a presence channel the app may join. */
    #ownPayload(topic: string): unknown {
        const channel = channelOfTopic(topic);
        return channel !== null && channel.startsWith("presence-") && this.auth.grants(channel) ? memberPayload(this.user()) : undefined;
    }

    /** Publish an update to every stream it reaches, and keep it for replays; returns its id. */
    publish(topics: readonly string[], data: string, options: { private?: boolean; type?: string } = {}): string {
        const update: HubUpdate = { id: uuid(0, ++this.#updates), topics, data, type: options.type ?? "message", private: options.private ?? false };
        this.#history.push(update);
        for (const stream of [...this.#streams.values()]) if (stream.connected) this.#deliver(stream, update);
        return update.id;
    }

    /** Write `update` into `stream` when one of its matchers selects one of the update's topics. */
    #deliver(stream: Stream, update: HubUpdate): void {
        const reaches = update.topics.some(
            (topic) => (stream.topics.includes(topic) && (!update.private || this.#granted(topic))) || stream.patterns.some((pattern) => pattern.test(topic)),
        );
        if (!reaches || !stream.connected) return;
        stream.lastId = update.id;
        stream.source.write({ type: update.type, data: update.data, lastEventId: update.id });
    }

    /** Whether the app's cookie covers a private update on `topic` (what the auth endpoint grants now). */
    #granted(topic: string): boolean {
        const channel = channelOfTopic(topic);
        return channel === null || this.auth.grants(channel);
    }

    /** The subscription-event topic of one exact subscription (mercure-hub §4.1). */
    #subscriptionTopic(topic: string, subscriber: string): string {
        return `${this.#hubPath()}/subscriptions/exact/${rawUrlEncode(topic)}/${rawUrlEncode(subscriber)}`;
    }

    /** The hub's path without a trailing slash. */
    #hubPath(): string {
        return this.hubUrl.pathname.replace(/\/$/, "");
    }

    /** The subscription document of one exact subscription (mercure-hub §4.1), its payload left out when none. */
    #document(topic: string, subscriber: string, payload: unknown, active: boolean): Record<string, unknown> {
        const document: Record<string, unknown> = { id: this.#subscriptionTopic(topic, subscriber), type: "subscription", subscriber, match: topic, match_type: "exact", active };
        if (payload !== undefined) document["payload"] = payload;
        return document;
    }

    /** Announce one subscription as active or inactive: a private `mercure` update on its subscription topic. */
    #announce(topic: string, subscriber: string, payload: unknown, active: boolean): void {
        const document = this.#document(topic, subscriber, payload, active);
        this.publish([document["id"] as string], JSON.stringify(document), { private: true, type: "mercure" });
    }

    /** Another user's connection joins presence channel `name`. */
    join(name: string, user: TestUser): void {
        const member = { subscriber: uuid(2, ++this.#subscribers), user };
        this.#members.set(name, [...(this.#members.get(name) ?? []), member]);
        this.#announce(channelTopic(name), member.subscriber, memberPayload(user), true);
    }

    /** The oldest connection of `user` on presence channel `name` leaves; false when there is none. */
    leave(name: string, user: TestUser): boolean {
        const members = this.#members.get(name) ?? [];
        const index = members.findIndex((member) => String(member.user.id) === String(user.id));
        if (index < 0) return false;
        const [member] = members.splice(index, 1);
        this.#announce(channelTopic(name), member!.subscriber, memberPayload(member!.user), false);
        return true;
    }

    /** Every connection drops and reconnects by itself until {@link MemoryHub.reconnect}. */
    interrupt(): void {
        for (const stream of [...this.#streams.values()]) {
            if (!stream.connected) continue;
            this.#disconnect(stream);
            stream.source.interrupt();
        }
    }

    /** Every dropped connection reconnects, with the replay of what it missed; the hub accepts streams again. */
    reconnect(): void {
        this.#refusal = null;
        for (const stream of [...this.#streams.values()]) if (!stream.connected && stream.source.readyState === MemoryEventSource.CONNECTING) this.#open(stream);
    }

    /** Refuse every stream with HTTP `status` (open ones are closed), until {@link MemoryHub.reconnect}. */
    refuse(status: number): void {
        this.#refusal = status;
        for (const stream of [...this.#streams.values()]) {
            if (stream.connected) this.#disconnect(stream);
            stream.source.refuse(status);
        }
    }

    /**
     * The full names of the channels the app's newest open main stream subscribes to, in subscription order (a stream it
     * replaced may still be draining: the connector ignores what reaches it for channels it left).
     */
    subscribedChannels(): string[] {
        let newest: { names: string[]; opened: number } = { names: [], opened: -1 };
        for (const stream of this.#streams.values()) {
            const names = stream.topics.flatMap((topic) => channelOfTopic(topic) ?? []);
            if (stream.connected && names.length > 0 && stream.opened > newest.opened) newest = { names, opened: stream.opened };
        }
        return newest.names;
    }

    /** Answer one request of the connector: the auth endpoint, the subscription API, a whisper publish, a probe. */
    #request(url: string, init: RequestInit): FetchResponseLike {
        this.activity++;
        const target = new URL(url, this.hubUrl);
        const method = (init.method ?? "GET").toUpperCase();
        if (target.pathname === this.authPath && method === "POST") {
            const answer = this.auth.answer(init.body);
            return response(answer.status, answer.body, "application/json", target);
        }
        if (target.origin !== this.hubUrl.origin || !target.pathname.startsWith(this.#hubPath())) return response(404, "Not Found", "text/plain", target);
        const rest = target.pathname.slice(this.#hubPath().length);
        if (rest.startsWith("/subscriptions/exact/") && method === "GET") return this.#snapshot(decodeURIComponent(rest.slice("/subscriptions/exact/".length)), target);
        if (rest === "" && method === "POST") return this.#whisperPublish(new URLSearchParams(init.body as string | URLSearchParams), target);
        // A probe of the subscribe URL (the connector's diagnosis): the refusal, if any.
        if (rest === "" && method === "GET") return this.#refusal === null ? response(200, "", "text/event-stream", target) : response(this.#refusal, "Invalid request", "text/plain", target);
        return response(404, "Not Found", "text/plain", target);
    }

    /** The active subscriptions to `topic` (mercure-hub §4.2): the app's own connections and the made-up members. */
    #snapshot(topic: string, target: URL): FetchResponseLike {
        const subscriptions: Array<Record<string, unknown>> = [];
        for (const stream of this.#streams.values()) {
            if (stream.connected && stream.topics.includes(topic)) subscriptions.push(this.#document(topic, stream.subscriber, this.#ownPayload(topic), true));
        }
        const name = channelOfTopic(topic);
        for (const member of name === null ? [] : (this.#members.get(name) ?? [])) subscriptions.push(this.#document(topic, member.subscriber, memberPayload(member.user), true));
        const id = `${this.#hubPath()}/subscriptions/exact/${rawUrlEncode(topic)}`;
        return response(200, JSON.stringify({ id, type: "subscriptions", lastEventID: this.#history.at(-1)?.id ?? "earliest", subscriptions }), "application/ld+json", target);
    }

    /** A whisper the app published (laravel-mercure §7.2): recorded for `whispers()`, then dispatched like any update. */
    #whisperPublish(form: URLSearchParams, target: URL): FetchResponseLike {
        const topics = form.getAll("topic");
        const data = form.get("data") ?? "";
        if (topics.length === 0) return response(400, "Missing \"topic\" parameter", "text/plain", target);
        const envelope = parseObject(data);
        const channel = Array.isArray(envelope?.channels) ? envelope.channels[0] : undefined;
        if (typeof channel === "string" && typeof envelope?.event === "string") {
            const list = this.published.get(channel) ?? [];
            list.push({ event: envelope.event.replace(/^client-/, ""), payload: envelope.payload, socket: typeof envelope.socket === "string" ? envelope.socket : null });
            this.published.set(channel, list);
        }
        const id = this.publish(topics, data, { private: form.get("private") === "on" });
        return response(200, id, "text/plain", target);
    }
}

/** The JSON object in `text`, or null. */
function parseObject(text: string): { channels?: unknown; event?: unknown; payload?: unknown; socket?: unknown } | null {
    try {
        const value: unknown = JSON.parse(text);
        return typeof value === "object" && value !== null ? value : null;
    } catch {
        return null;
    }
}

/** A fetch response with `status`, a text body and its content type. */
function response(status: number, body: string, type: string, url: URL): FetchResponseLike {
    return {
        status,
        redirected: false,
        url: url.href,
        headers: { get: (name: string) => (name.toLowerCase() === "content-type" ? type : null) },
        text: () => Promise.resolve(body),
    };
}
