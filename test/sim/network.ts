import type { FetchLike, FetchResponseLike } from "../../src/fetch";
import type { EventSourceLike } from "../../src/transport/platform";
import { rawUrlEncode } from "../../src/topic/encode";
import { compilePattern } from "../../src/testing/memory-hub";
import { channelOfTopic, channelTopic, whisperTopic } from "../../src/testing/laravel-side";
import { channelKey, log, sealForChannel } from "./determinism";

/*
 * The network of the simulation: one Laravel app (the batch auth endpoint, the server's broadcasts) and one Mercure hub,
 * on one origin, reached by several browser profiles. Each profile has its own cookie jar (the hub cookie a successful
 * auth answer sets: its grants and expiry), and each of its tabs its own `fetch` and `EventSource` (see {@link Profile}).
 * The hub follows the reference hub where the tests' fakes are kinder (mercure-hub §1–§4): a private update reaches a
 * stream only under the grant of the cookie the stream connected with; a stream ends before its cookie expires and the
 * browser reconnects it with the cookie of now and `Last-Event-ID`; a stale cookie is refused with 401; a restarted hub
 * has no history unless configured with one; subscription events and the snapshot carry the presence payload of the
 * subscriber's own grant. Every latency is a fake timer drawn from the run's seeded randomness.
 */

/** `SIM_TRACE=<file>`: log the hub's connections as they open and end. */
const trace = process.env["SIM_TRACE"] !== undefined && process.env["SIM_TRACE"] !== "";

/** The page's origin; the hub is on it (`/.well-known/mercure`), as is the auth endpoint. */
export const ORIGIN = "https://app.test";
/** The hub URL the connectors are given. */
export const HUB_URL = ORIGIN + "/.well-known/mercure";
/** The hub's path. */
const HUB_PATH = "/.well-known/mercure";
/** The auth endpoint's path (Echo's default). */
const AUTH_PATH = "/broadcasting/auth";
/** `expires_in` of every grant (Laravel's default `subscribe_expiration` of 5 minutes). */
export const EXPIRES_IN = 300;
/** The reference hub's `write_timeout` and `dispatch_timeout` (mercure-hub §1.5). */
const WRITE_TIMEOUT_MS = 600_000;
const DISPATCH_TIMEOUT_MS = 5_000;
/** Chromium's `EventSource` reconnection time. */
export const RECONNECT_MS = 3_000;

/** What a hub cookie grants (laravel-mercure §2.7), as the hub reads it. */
export interface Grant {
    /** The user it was issued for. */
    readonly user: number;
    /** When it expires (ms, fake clock). */
    readonly exp: number;
    /** The channel topics it may subscribe to (private, encrypted, presence). */
    readonly topics: ReadonlySet<string>;
    /** The presence channel topics, with the member payload of each (their subscription events are granted too). */
    readonly presence: ReadonlyMap<string, unknown>;
    /** The whisper topics it may subscribe and publish to. */
    readonly whisper: ReadonlySet<string>;
}

/** One update as the hub keeps and dispatches it. */
interface Update {
    readonly id: string;
    readonly topics: readonly string[];
    readonly data: string;
    readonly type: string;
    readonly private: boolean;
}

/** The hub's side of one `EventSource` connection. */
interface Connection {
    readonly subscriber: string;
    readonly source: SimEventSource;
    readonly grant: Grant | null;
    /** When it opened (ms, fake clock). */
    readonly since: number;
    /** When the hub ends it (its cookie's life, the write timeout). */
    end: ReturnType<typeof setTimeout> | null;
    /** What the hub wrote that the browser has not read yet (it reads in a later task), in order. */
    readonly written: Array<() => void>;
    /** The task that reads them. */
    reading: ReturnType<typeof setTimeout> | null;
}

/** One browser profile: its user, its cookie jar, its tabs' network access. */
export interface Profile {
    readonly id: number;
    readonly user: number;
    /** The hub cookie, or null. */
    cookie: Grant | null;
    /** Whether Laravel's session rotates the `XSRF-TOKEN` cookie on every response (see `Network.xsrf`). */
    rotatesXsrf: boolean;
}

/** The side of a tab the network needs: its profile, and whether it still runs. */
export interface NetworkTab {
    readonly id: string;
    readonly profile: Profile;
    /** Closed or discarded: its requests and streams go nowhere, nothing reaches it. */
    dead: boolean;
}

/** One broadcast the server published: its id, the channels, and when. */
export interface Published {
    readonly id: number;
    readonly channels: readonly string[];
    readonly at: number;
}

/** One whisper the hub accepted. */
export interface Whispered {
    readonly id: number;
    readonly channel: string;
    /** The tab whose `fetch` published it. */
    readonly tab: string;
    readonly at: number;
    /** The published data: the whisper envelope (sealed on an encrypted channel). */
    readonly data: string;
}

/** What a user may join (the app's channel callbacks, laravel-mercure §2.3): `private-orders.N` is user N's alone. */
export function authorizes(user: number, name: string): boolean {
    const own = /^private-orders\.(\d+)$/.exec(name);
    return own === null || Number(own[1]) === user;
}

/** The presence payload of `user` (laravel-mercure §5.3). */
export function memberOf(user: number): { user_id: string; user_info: { id: number; name: string } } {
    return { user_id: String(user), user_info: { id: user, name: "user " + user } };
}

/** A one-shot answer the next auth request of a profile gets instead of Laravel's. */
export type AuthFault = 500 | 503 | 419;

/** The network: the Laravel app and the hub. */
export class Network {
    /** Whether the hub runs. */
    up = true;

    /** Whether the hub keeps history across a restart and replays it (the reference hub's `bolt` transport); else none at all (`local`). */
    readonly history: boolean;

    /** The updates kept for replays (only with {@link Network.history}). */
    readonly #log: Update[] = [];

    /** Every open connection, by its source. */
    readonly #connections = new Map<SimEventSource, Connection>();

    /** Counters of ids. */
    #updates = 0;
    #subscribers = 0;
    #broadcasts = 0;
    #whispers = 0;

    /** The next answers of each profile's auth requests, oldest first. */
    readonly faults = new Map<Profile, AuthFault[]>();

    /** Channels whose auth fails (HTTP 500) in any batch that carries them (a callback that throws, issue 30), for one profile's or (null) everyone's. */
    readonly failing = new Map<string, Profile | null>();

    /** When each profile last got a failed auth answer from a fault ({@link Network.faults}). */
    readonly faultAt = new Map<Profile, number>();

    /**
     * Every failure the network caused, when, and the profile it hit (null: every profile, the hub stopped or started):
     * the invariants excuse an `error()` that follows one (see invariants.ts).
     */
    readonly failures: Array<{ readonly at: number; readonly profile: Profile | null; readonly kind: "hub" | "fault" | "channel" }> = [];

    /** When each channel last failed alone (in {@link Network.failing}). */
    readonly failingAt = new Map<string, number>();

    /** When the hub last stopped or started, or when its maintenance window ends (see {@link Network.refuse}). */
    hubChangedAt = -Infinity;

    /** When the hub was down: each stop, until the start that followed it (Infinity while it is still down). */
    readonly outages: Array<{ readonly from: number; to: number }> = [];

    /** Until when (ms, fake clock) the hub's proxy answers every request with 503 (see {@link Network.refuse}). */
    refusingUntil = -Infinity;

    /** How much later than usual the proxy answers a request to the hub meanwhile (ms). */
    #refusalLatency = 0;

    /** Every auth request: when, by which profile, and its channels. */
    readonly authRequests: Array<{ at: number; profile: Profile; names: string[] }> = [];

    /** Every broadcast published, and every whisper accepted. */
    readonly broadcasts: Published[] = [];
    readonly whispers: Whispered[] = [];

    /** Called when the hub accepts a broadcast or a whisper (the world records what each tab should receive). */
    onBroadcast: (published: Published) => void = () => undefined;
    onWhisper: (whispered: Whispered) => void = () => undefined;

    /** The `XSRF-TOKEN` cookie's current value (the page's `document.cookie`, one profile's: see world.ts). */
    xsrf = "xsrf-1";
    #xsrfVersion = 1;

    /** `latency(kind)`: the fake-time latency of a request or a connection, drawn from the run's randomness. */
    constructor(
        options: { history: boolean },
        readonly latency: (kind: "auth" | "hub" | "stream") => number,
        readonly random: () => number,
    ) {
        this.history = options.history;
    }

    /** The `fetch` of `tab`: the auth endpoint, the subscription API, whisper publishes and hub probes; nothing once the tab is dead. */
    fetchFor(tab: NetworkTab): FetchLike {
        return (url, init) => {
            if (tab.dead) return new Promise(() => undefined);
            const target = new URL(url, ORIGIN);
            const method = (init.method ?? "GET").toUpperCase();
            const kind = target.pathname === AUTH_PATH ? "auth" : "hub";
            return new Promise<FetchResponseLike>((resolve, reject) => {
                const signal = init.signal ?? undefined;
                const abort = () => reject(new DOMException("The operation was aborted.", "AbortError"));
                if (signal?.aborted) return abort();
                signal?.addEventListener("abort", abort);
                setTimeout(() => {
                    signal?.removeEventListener("abort", abort);
                    if (signal?.aborted || tab.dead) return;
                    try {
                        resolve(kind === "auth" && method === "POST" ? this.#auth(tab.profile, init.body, tab.id) : this.#hub(tab, target, method, init));
                    } catch (error) {
                        reject(error);
                    }
                }, this.latency(kind) + (kind === "hub" && this.#refusing() ? this.#refusalLatency : 0));
            });
        };
    }

    /** The `EventSource` constructor of `tab`: its streams carry its profile's cookie. */
    eventSourceFor(tab: NetworkTab): new (url: string, init?: unknown) => SimEventSource {
        const network = this;
        return class extends SimEventSource {
            constructor(url: string) {
                super(network, tab, url);
            }
        };
    }

    // ---- Laravel ----------------------------------------------------------------------------------------------------

    /** The batch auth endpoint (laravel-mercure §2): a fault if one is queued, else the grants, and the cookie set. */
    #auth(profile: Profile, body: unknown, by: string): FetchResponseLike {
        const names = (JSON.parse(String(body)) as { channel_names: string[] }).channel_names;
        this.authRequests.push({ at: Date.now(), profile, names });
        if (trace) log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} profile ${profile.id} laravel: auth ${JSON.stringify(names)} from ${by}`);
        // [spec] laravel-mercure §2.3: an empty batch is refused (the connector must never send one).
        if (names.length === 0) return response(403, JSON.stringify({ message: "This action is unauthorized." }), "application/json");
        const fault = this.faults.get(profile)?.shift();
        if (fault === 419 && profile.rotatesXsrf) this.rotateXsrf(); // A regenerated session's token (with the cookie only).
        if (fault !== undefined) this.faultAt.set(profile, Date.now());
        if (fault !== undefined) this.failures.push({ at: Date.now(), profile, kind: "fault" });
        if (fault !== undefined) return response(fault, JSON.stringify({ message: `HTTP ${fault} from the simulated Laravel app.` }), "application/json");
        const failing = names.filter((name) => this.failing.has(name) && (this.failing.get(name) === null || this.failing.get(name) === profile));
        for (const name of failing) this.failingAt.set(name, Date.now());
        if (failing.length > 0) this.failures.push({ at: Date.now(), profile, kind: "channel" });
        if (failing.length > 0) return response(500, JSON.stringify({ message: "Server Error" }), "application/json");
        const unique = [...new Set(names)];
        const granted = unique.filter((name) => authorizes(profile.user, name));
        const guarded = granted.filter((name) => /^(private|presence)-/.test(name));
        profile.cookie = {
            user: profile.user,
            exp: Date.now() + EXPIRES_IN * 1_000,
            topics: new Set(guarded.map(channelTopic)),
            presence: new Map(guarded.filter((name) => name.startsWith("presence-")).map((name) => [channelTopic(name), memberOf(profile.user)])),
            whisper: new Set(guarded.map(whisperTopic)),
        };
        if (profile.rotatesXsrf) this.rotateXsrf();
        return response(
            200,
            JSON.stringify({
                channel_names: unique.map((name) =>
                    !granted.includes(name)
                        ? { name, denied: true }
                        : name.startsWith("private-encrypted-")
                          ? { name, jwk: { kty: "oct", k: channelKey(name).toString("base64url"), alg: "A256GCM", use: "enc" } }
                          : { name },
                ),
                expires_in: EXPIRES_IN,
                topic_prefix: "https://laravel.alt/echo/",
                client_events: true,
            }),
            "application/json",
        );
    }

    /** Laravel sends a new `XSRF-TOKEN` value (it does on every web response; a regenerated session's after a 419). */
    rotateXsrf(): void {
        if (!document.cookie.includes("XSRF-TOKEN=")) return; // The pages give their own token: no such cookie.
        this.xsrf = "xsrf-" + ++this.#xsrfVersion;
        document.cookie = `XSRF-TOKEN=${this.xsrf}; path=/`;
    }

    /**
     * The server broadcasts an event on `channels` (laravel-mercure §4.3: the public channels in one update, each
     * guarded channel alone, encrypted ones sealed); null when the hub is down (Laravel's publish fails: nobody gets it).
     */
    broadcast(channels: readonly string[]): Published | null {
        if (!this.up || this.#refusing()) return null;
        const id = ++this.#broadcasts;
        const published = { id, channels: [...channels], at: Date.now() };
        this.broadcasts.push(published);
        this.onBroadcast(published);
        const payload = { b: id };
        const open = channels.filter((name) => !/^(private|presence)-/.test(name));
        if (open.length > 0) this.#publish(open.map(channelTopic), JSON.stringify({ channels: open, event: "sim", payload }), false, "message");
        for (const name of channels.filter((candidate) => /^(private|presence)-/.test(candidate))) {
            const data = name.startsWith("private-encrypted-")
                ? JSON.stringify({ channels: [name], data: sealForChannel(name, { event: "sim", payload }, Buffer.from(Array.from({ length: 12 }, () => Math.floor(this.random() * 256)))) })
                : JSON.stringify({ channels: [name], event: "sim", payload });
            this.#publish([channelTopic(name)], data, true, "message");
        }
        return published;
    }

    // ---- the hub ----------------------------------------------------------------------------------------------------

    /** Stop the hub: every connection drops (no subscription event: the process died), every request fails. */
    stop(): void {
        this.up = false;
        this.hubChangedAt = Date.now();
        this.outages.push({ from: Date.now(), to: Infinity });
        this.failures.push({ at: Date.now(), profile: null, kind: "hub" });
        for (const [source, connection] of [...this.#connections]) {
            this.#read(connection); // What reached the socket before the process died is read first.
            this.#end(connection, false);
            source.dropped();
        }
    }

    /** Start the hub again: without history (the `local` transport) it has forgotten every update. */
    start(): void {
        this.up = true;
        this.hubChangedAt = Date.now();
        const outage = this.outages.at(-1);
        if (outage !== undefined && outage.to === Infinity) outage.to = Date.now();
        this.failures.push({ at: Date.now(), profile: null, kind: "hub" });
        if (!this.history) this.#log.length = 0;
    }

    /**
     * A maintenance window of `ms` (a deploy): the proxy in front of the hub cuts every open connection (the hub sees
     * them end) and answers every request with 503 until the window ends, a `fetch` (the connector's probes, whispers)
     * `slow` ms later than usual; Laravel's publishes fail meanwhile. An `EventSource` refused with 503 gives up for
     * good: the connector's retries (each after its probe answered) must bring it back.
     */
    refuse(ms: number, slow: number): void {
        const now = Date.now();
        this.refusingUntil = now + ms;
        this.#refusalLatency = slow;
        this.hubChangedAt = now + ms;
        this.failures.push({ at: now, profile: null, kind: "hub" }, { at: now + ms, profile: null, kind: "hub" });
        for (const [source, connection] of [...this.#connections]) {
            this.#read(connection);
            this.#end(connection, true);
            source.dropped();
        }
    }

    /** Whether the hub's proxy refuses every request now (see {@link Network.refuse}). */
    #refusing(): boolean {
        return Date.now() < this.refusingUntil;
    }

    /** A stream tries to connect (its first attempt, or the browser's reconnect with `lastEventId`). */
    attempt(source: SimEventSource, lastEventId: string | null): void {
        if (source.tab.dead || source.readyState === 2) return;
        if (!this.up) return source.dropped();
        // [spec] An EventSource answered with another status than 200 fails the connection: no reconnect of its own.
        if (this.#refusing()) return source.refused();
        // The cookie the browser attached when it sent the request (see `SimEventSource.sentCookie`), not the jar's of now.
        const grant = source.sentCookie;
        // [spec] mercure-hub §1.5: a stale cookie is refused with 401, even for public topics; the browser gives up.
        if (grant !== null && grant.exp <= Date.now()) return source.refused();
        const connection: Connection = { subscriber: `urn:uuid:sub-${++this.#subscribers}`, source, grant, since: Date.now(), end: null, written: [], reading: null };
        this.#connections.set(source, connection);
        // [spec] mercure-hub §1.5: the reference hub ends the stream at 80–100 % of min(cookie life, write timeout), less the dispatch timeout.
        const life = Math.min(grant === null ? Infinity : grant.exp - Date.now(), WRITE_TIMEOUT_MS);
        const deadline = (0.8 + 0.2 * this.random()) * life;
        connection.end = setTimeout(() => {
            connection.end = null;
            this.#read(connection); // TCP: what was written before the end is read before it.
            this.#end(connection, true);
            source.dropped();
        }, deadline > DISPATCH_TIMEOUT_MS ? deadline - DISPATCH_TIMEOUT_MS : deadline);
        if (trace) {
            const granted = grant === null ? "none" : [...grant.topics, ...grant.whisper].map((topic) => topic.replace(/^.*\/(channel|whisper)\//, "$1:")).join(" ");
            log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} ${source.tab.id} hub: open ${connection.subscriber} ${source.topics.map((topic) => topic.replace(/^.*\/(channel|whisper)\//, "$1:")).join(" ")} (grant: ${granted}) from ${lastEventId}`);
        }
        source.opened();
        // [spec] mercure-hub §1.4: a hub without history (the reference hub's local transport) replays nothing. The
        // reference hub writes the replay first (its transport's AddSubscriber), then announces the subscription.
        if (lastEventId !== null && this.history) {
            // `earliest` (a page rendered before anything was published) asks for every retained update.
            const since = lastEventId === "earliest" ? -1 : this.#log.findIndex((update) => update.id === lastEventId);
            if (since >= 0 || lastEventId === "earliest") for (const update of this.#log.slice(since + 1)) this.#deliver(connection, update);
        }
        // [spec] mercure-hub §4.1: every new subscription is announced, to the subscriber itself too.
        for (const topic of source.topics) this.#announce(topic, connection, true);
    }

    /**
     * The id of the last update the hub dispatched, or `earliest` before the first (since its last start without history):
     * what the subscriptions API answers, and a Laravel page renders into its `<link rel="mercure" last-event-id>`.
     */
    get lastEventId(): string {
        return this.#log.at(-1)?.id ?? "earliest";
    }

    /** The browser closed a stream (or its tab went away): its subscriptions end. */
    closed(source: SimEventSource): void {
        const connection = this.#connections.get(source);
        if (connection !== undefined) this.#end(connection, true);
    }

    /** `tab` went away (closed, discarded): the browser tore its connections down; the hub announces their end. */
    dropTab(tab: NetworkTab): void {
        for (const connection of [...this.#connections.values()]) if (connection.source.tab === tab) this.#end(connection, true);
    }

    /** Forget a connection; `announce`: its subscriptions are announced inactive (not when the hub itself died). */
    #end(connection: Connection, announce: boolean): void {
        if (!this.#connections.delete(connection.source)) return;
        if (trace) log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} ${connection.source.tab.id} hub: end ${connection.subscriber}${announce ? "" : " (hub stopped)"}`);
        if (connection.end !== null) clearTimeout(connection.end);
        if (announce) for (const topic of connection.source.topics) this.#announce(topic, connection, false);
    }

    /** Publish an update: dispatched to every connection it reaches, and kept for replays. */
    #publish(topics: readonly string[], data: string, isPrivate: boolean, type: string): string {
        const update: Update = { id: `urn:uuid:upd-${++this.#updates}`, topics, data, type, private: isPrivate };
        this.#log.push(update);
        if (this.#log.length > 10_000) this.#log.shift();
        for (const connection of [...this.#connections.values()]) this.#deliver(connection, update);
        return update.id;
    }

    /** Write `update` into `connection` if a matcher selects one of its topics and, for a private one, its grant covers that topic. */
    #deliver(connection: Connection, update: Update): void {
        const { source, grant } = connection;
        const reaches = update.topics.some(
            (topic) => (source.topics.includes(topic) || source.patterns.some((pattern) => pattern.test(topic))) && (!update.private || covers(grant, topic)),
        );
        if (trace && update.topics.some((topic) => topic.includes("/whisper/"))) log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} ${source.tab.id} hub: whisper ${update.id} ${reaches ? "written to" : "not for"} ${connection.subscriber}`);
        if (!reaches) return;
        // Written now, read by the browser in a later task, in order.
        connection.written.push(() => source.received(update.type, update.data, update.id));
        connection.reading ??= setTimeout(() => this.#read(connection), 0);
    }

    /** When the presence subscriptions of each topic last changed (a subscription with a member payload began or ended). */
    readonly presenceChanged = new Map<string, number>();

    /** The browser reads what the hub wrote to `connection`. */
    #read(connection: Connection): void {
        if (connection.reading !== null) clearTimeout(connection.reading);
        connection.reading = null;
        for (const write of connection.written.splice(0)) write();
    }

    /** Announce one subscription of `connection` to `topic` as active or not (mercure-hub §4.1), with its grant's payload. */
    #announce(topic: string, connection: Connection, active: boolean): void {
        const payload = connection.grant?.presence.get(topic);
        if (payload !== undefined) this.presenceChanged.set(topic, Date.now());
        const id = `${HUB_PATH}/subscriptions/exact/${rawUrlEncode(topic)}/${rawUrlEncode(connection.subscriber)}`;
        const document = { id, type: "subscription", subscriber: connection.subscriber, match: topic, match_type: "exact", active, ...(payload === undefined ? {} : { payload }) };
        this.#publish([id], JSON.stringify(document), true, "mercure");
    }

    /** A request to the hub's origin that is not the auth endpoint: the subscription API, a whisper, a probe of the hub. */
    #hub(tab: NetworkTab, target: URL, method: string, init: RequestInit): FetchResponseLike {
        if (!this.up) throw new TypeError("Failed to fetch");
        if (this.#refusing()) return response(503, "Service Unavailable", "text/html");
        if (!target.pathname.startsWith(HUB_PATH)) return response(404, "Not Found", "text/plain");
        const grant = tab.profile.cookie;
        const stale = grant !== null && grant.exp <= Date.now();
        const unauthorized = () => response(401, "Unauthorized", "text/plain", { "www-authenticate": 'Bearer error="invalid_token"' });
        const rest = target.pathname.slice(HUB_PATH.length);
        if (rest.startsWith("/subscriptions/exact/") && method === "GET") {
            const topic = decodeURIComponent(rest.slice("/subscriptions/exact/".length));
            if (grant === null || stale) return unauthorized();
            if (!grant.presence.has(topic)) return response(403, "Forbidden", "text/plain");
            const subscriptions = [...this.#connections.values()]
                .filter((connection) => connection.source.topics.includes(topic))
                .map((connection) => {
                    const payload = connection.grant?.presence.get(topic);
                    const id = `${HUB_PATH}/subscriptions/exact/${rawUrlEncode(topic)}/${rawUrlEncode(connection.subscriber)}`;
                    return { id, type: "subscription", subscriber: connection.subscriber, match: topic, match_type: "exact", active: true, ...(payload === undefined ? {} : { payload }) };
                });
            const id = `${HUB_PATH}/subscriptions/exact/${rawUrlEncode(topic)}`;
            return response(200, JSON.stringify({ id, type: "subscriptions", lastEventID: this.#log.at(-1)?.id ?? "earliest", subscriptions }), "application/ld+json");
        }
        if (rest === "" && method === "POST") {
            // [spec] laravel-mercure §7.2: the cookie is the publisher's credential; a grant without the topic is 403.
            if (grant === null || stale) return unauthorized();
            const form = new URLSearchParams(String(init.body));
            const topic = form.get("topic") ?? "";
            if (!grant.whisper.has(topic)) return response(403, "Forbidden", "text/plain");
            const id = this.#publish([topic], form.get("data") ?? "", form.get("private") === "on", "message");
            const channel = channelOfTopic(topic.replace("/whisper/", "/channel/"));
            if (channel !== null) {
                const whispered = { id: ++this.#whispers, channel, tab: tab.id, at: Date.now(), data: form.get("data") ?? "" };
                this.whispers.push(whispered);
                this.onWhisper(whispered);
            }
            return response(200, id, "text/plain");
        }
        if (rest === "" && method === "GET") return stale ? unauthorized() : response(200, "", "text/event-stream");
        return response(404, "Not Found", "text/plain");
    }

    /** The open connections, with their tab, topics and whether they are whisper streams (resource checks). */
    connections(): Array<{ tab: NetworkTab; topics: readonly string[]; whisper: boolean; main: boolean; grant: Grant | null; since: number }> {
        return [...this.#connections.values()].map(({ source, grant, since }) => ({
            tab: source.tab,
            since,
            topics: source.topics,
            whisper: source.topics.some((topic) => topic.includes("/whisper/")),
            main: source.topics.some((topic) => topic.includes("/channel/")),
            grant,
        }));
    }

    /** The users the hub counts as present on presence channel `name`: the payloads of the open connections subscribed to its topic. */
    presentUsers(name: string): Set<number> {
        const topic = channelTopic(name);
        const users = new Set<number>();
        for (const { source, grant } of this.#connections.values()) {
            const payload = grant?.presence.get(topic) as { user_info?: { id?: number } } | undefined;
            if (source.topics.includes(topic) && payload?.user_info?.id !== undefined) users.add(payload.user_info.id);
        }
        return users;
    }

    /** The hub's pending timers (stream ends): the resource check subtracts them from the connectors'. */
    timers(): number {
        let count = 0;
        for (const connection of this.#connections.values()) count += (connection.end === null ? 0 : 1) + (connection.reading === null ? 0 : 1);
        return count;
    }
}

/** Whether `grant` covers a private update on `topic`: a channel topic it names, a whisper topic, a presence channel's subscription events. */
function covers(grant: Grant | null, topic: string): boolean {
    if (grant === null || grant.exp <= Date.now()) return false;
    if (grant.topics.has(topic) || grant.whisper.has(topic)) return true;
    const prefix = `${HUB_PATH}/subscriptions/exact/`;
    if (!topic.startsWith(prefix)) return false;
    const matched = decodeURIComponent(topic.slice(prefix.length).split("/")[0]!);
    return grant.presence.has(matched);
}

/** A fetch response with `status`, a text body, its content type and other headers. */
function response(status: number, body: string, type: string, headers: Record<string, string> = {}): FetchResponseLike {
    const all = new Headers({ "content-type": type, ...headers });
    return { status, redirected: false, url: ORIGIN, headers: all, text: () => Promise.resolve(body) } as FetchResponseLike;
}

/**
 * A tab's `EventSource`, as a browser runs one against the {@link Network}'s hub: it connects after a latency, and on a
 * drop (the hub restarted or ended the stream) it reconnects by itself after {@link RECONNECT_MS} with its
 * `Last-Event-ID`, sending the profile's cookie of that moment; a refusal (401) closes it for good (readyState 2), as
 * the SSE spec says for any non-2xx answer. Nothing reaches a dead tab.
 */
export class SimEventSource implements EventSourceLike {
    static readonly CLOSED = 2;
    readyState = 0;
    onopen: ((event: Event) => unknown) | null = null;
    onmessage: ((event: MessageEvent) => unknown) | null = null;
    onerror: ((event: Event) => unknown) | null = null;
    readonly withCredentials = true;
    readonly #listeners = new Map<string, Array<(event: MessageEvent) => unknown>>();
    /** The exact topics and the URL patterns of its URL. */
    readonly topics: string[];
    readonly patterns: RegExp[];
    /** The last event id received (sent as `Last-Event-ID` on a reconnect). */
    lastEventId: string | null;
    /** The pending reconnect. */
    #retry: ReturnType<typeof setTimeout> | null = null;
    /**
     * The hub cookie the browser attached to the request in flight: its profile's when the request left (at the
     * construction, then when a reconnect is sent), whatever another tab's auth answer sets while it travels.
     */
    sentCookie: Grant | null;

    constructor(
        readonly network: Network,
        readonly tab: NetworkTab,
        readonly url: string,
    ) {
        const parsed = new URL(url);
        this.topics = parsed.searchParams.getAll("match");
        this.patterns = parsed.searchParams.getAll("match_urlpattern").flatMap((value) => compilePattern(value) ?? []);
        this.lastEventId = parsed.searchParams.get("last_event_id");
        this.sentCookie = tab.profile.cookie;
        this.#schedule(network.latency("stream"));
    }

    addEventListener(type: string, listener: (event: MessageEvent) => unknown): void {
        this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
    }

    close(): void {
        if (this.readyState === 2) return;
        this.readyState = 2;
        if (this.#retry !== null) clearTimeout(this.#retry);
        this.#retry = null;
        this.network.closed(this);
    }

    /** Whether a reconnect or the first connection is pending. */
    pending(): boolean {
        return this.#retry !== null;
    }

    /** Hub side: the connection is open. */
    opened(): void {
        this.#tell(() => {
            if (this.readyState === 2) return;
            this.readyState = 1;
            this.onopen?.(new Event("open"));
        });
    }

    /** Hub side: one event. */
    received(type: string, data: string, id: string): void {
        this.#tell(() => {
            if (this.readyState !== 1) return;
            this.lastEventId = id;
            const event = new MessageEvent(type, { data, lastEventId: id });
            if (type === "message") this.onmessage?.(event);
            for (const listener of this.#listeners.get(type) ?? []) listener(event);
        });
    }

    /** Hub side: the connection dropped or could not be made: an error, then a reconnect after the reconnection time. */
    dropped(): void {
        this.#tell(() => {
            if (this.readyState === 2) return;
            this.readyState = 0;
            this.onerror?.(new Event("error"));
            if (this.readyState !== 2) this.#schedule(RECONNECT_MS, true);
        });
    }

    /** Hub side: refused (401, or 503 in a maintenance window): closed for good. */
    refused(): void {
        this.#tell(() => {
            if (this.readyState === 2) return;
            this.readyState = 2;
            this.onerror?.(new Event("error"));
        });
    }

    /** Connect after `delay` ms: a request that travels that long, or (`reconnect`) a reconnect sent after that wait. */
    #schedule(delay: number, reconnect = false): void {
        if (this.#retry !== null) clearTimeout(this.#retry);
        this.#retry = setTimeout(() => {
            this.#retry = null;
            if (reconnect) this.sentCookie = this.tab.profile.cookie;
            this.network.attempt(this, this.lastEventId);
        }, delay);
    }

    /** Run what the hub did to this stream, unless its tab is dead. */
    #tell(effect: () => void): void {
        if (!this.tab.dead) effect();
    }
}
