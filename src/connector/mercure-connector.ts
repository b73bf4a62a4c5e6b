import type { ConnectionStatus } from "laravel-echo";
import { BatchAuth, type BatchAuthOptions } from "../auth/batch-auth";
import { CookieRefreshTimer } from "../auth/cookie-refresh";
import { hasFunction } from "../auth/credential-options";
import { createChannel } from "./channel-factory";
import { ChannelRegistry } from "../channel/channel-registry";
import type { MercureChannel } from "../channel/mercure-channel";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";
import { Capabilities } from "./capabilities";
import { CAPABILITY_SLOTS, RESUME, whisperLink } from "./capability-slots";
import { HubLocator, type HubOptions } from "../discovery/hub-location";
import type { RouteTarget } from "../dispatch/deliver-route";
import { Dispatcher } from "../dispatch/dispatcher";
import * as failures from "../error-messages";
import type { MercureError } from "../errors";
import { ReconnectTimer } from "../status/reconnect-timer";
import { StatusStore } from "../status/status-store";
import { WakeSignals } from "../status/wake-signals";
import { buildSubscribeUrl } from "../topic/subscribe-url";
import { channelTopic } from "../topic/topics";
import { HubStream } from "../transport/hub-stream";
import { OPEN_DEADLINE_MS, StreamSwitch } from "../transport/stream-switch";
import type { Platform } from "../transport/platform";
import { CallbackQueue } from "./callback-queue";
import { EchoChannelMethods } from "./echo-channel-methods";
import { resolveDebug } from "./debug-log";
import type { ConnectorHost } from "./connector-host";
import { RefreshCycle } from "./refresh-cycle";
import { StreamEvents } from "./stream-events";
import { cloneHeaderOptions, resolveHubTimeouts, type MercureConnectorOptions } from "./options";

/**
 * Laravel Echo connector for Laravel's `mercure` broadcaster: every channel over one Mercure `EventSource`.
 *
 * Usable as `new Echo({ broadcaster: MercureConnector, host })`. The connector orchestrates; the auth
 * request and the cookie renewal live in `auth/`, channel kinds and classes in `channel/`, topics and
 * URLs in `topic/`, the streams and the connection budget in `transport/`, routing in `dispatch/`,
 * status, backoff and wake-up signals in `status/`, presence members in `presence/`, whisper publishing
 * and the per-channel whisper streams in `whisper/` (loaded on first use), hub discovery and diagnostics
 * in `discovery/`. In this folder, the refresh (locate the hub, authorize the batch, act on the answer) is
 * `refresh-cycle.ts` and the answers to what the streams report are `stream-events.ts`: both act through the
 * parts and state changes the connector lends them (`connector-host.ts`); the state changes stay here.
 *
 * State changes first, user callbacks after: every entry point (a public method, a stream event, a
 * timer, an auth answer) runs its state change inside `#settle`, which then runs
 * the `error()`, `subscribed()` and `onConnectionChange()` callbacks the change produced. Presence
 * callbacks run from the subscription event or the snapshot answer that caused them, once the connector's
 * own state has moved (cursor, drains); one that calls `leave()` or `disconnect()` silences what follows.
 * Whisper listeners and whisper errors run through the same queue.
 */
export class MercureConnector extends EchoChannelMethods {
    /** Joined channels by full name, in join order (the order of the auth batch). */
    readonly #registry = new ChannelRegistry(createChannel);

    /** User callbacks waiting for the connector's state to settle. */
    readonly #callbacks = new CallbackQueue();

    /** The connection status; its `set()` is the only writer, its listeners run from {@link callbacks}. */
    readonly #status = new StatusStore((notify) => this.#callbacks.defer(notify));

    /** The socket id, the cursor and the once-per-channel ledger of the main stream's messages. */
    readonly #dispatcher = new Dispatcher();

    /**
     * The capabilities (presence, encrypted channels, whispers), each loaded on first use through one seam (see
     * {@link Capabilities}): a joined channel that needs one starts its download beside the auth request.
     */
    readonly #capabilities = new Capabilities(() => this.#host, CAPABILITY_SLOTS);

    /** What joined guarded channels whisper through: the whisper capability, loaded on their first whisper or listener. */
    readonly #whisperLink = whisperLink(this.#capabilities, (channel, error) =>
        this.#settle(() => this.#registry.get(channel.name) === channel && this.#reportEach([channel.name], () => error)),
    );

    /** Bumped by `disconnect()`; async work captured with an older value stops. */
    #generation = 0;

    /** Set by `disconnect()`: nothing reconnects until `connect()` or a newly joined channel. */
    #paused = false;

    /** Cancels in-flight requests (auth, discovery, snapshots, probes) on `disconnect()`, which also bumps {@link generation}. */
    #aborter = new AbortController();

    /** The `debug` option's logger, or null (then call sites build no detail objects). */
    readonly #log = resolveDebug(this.options["debug"]);

    /** The next refresh must open a new stream even when the topics did not change (renewal, stream lost). */
    #reopenRequested = false;

    /** The batch auth request, and what the last successful answer granted. */
    readonly #auth = new BatchAuth(this.options as BatchAuthOptions);

    /**
     * The current stream, its make-before-break replacement and the replaced streams still draining. When a
     * stream misses its open deadline: a replacement closes every stream, freeing their connections, and
     * opens one that resumes from the cursor (the ledger drops what comes twice); a fallback leaves nothing
     * of ours to close, so the likely cause is reported and the refresh retried with backoff.
     */
    readonly #streams = new StreamSwitch(
        (stream, stall) =>
            this.#settle(() => {
                const platform = this.#hub.platform;
                if (platform === null) return;
                const replaced = this.#streams.current;
                this.#streams.closeAll();
                this.#lose(replaced?.channels ?? stream.channels);
                if (stall === "replacement") return this.#createStream([...stream.channels], [...stream.topics], platform, true);
                this.#reportEach(stream.channels, (name) => failures.streamStalled(name, OPEN_DEADLINE_MS / 1_000));
                this.#scheduleRetry();
            }),
        (stream) => this.#log?.("drain end", { stream: stream.id }),
    );

    /** The one pending reconnect, with its backoff. */
    readonly #reconnect = new ReconnectTimer();

    /** The renewal of the cookie and of the stream, before the hub may end it. */
    readonly #cookieRefresh = new CookieRefreshTimer();

    /**
     * Where the hub is and the platform resolved for it (null until the first auth), both forgotten by `disconnect()`. A
     * tabs' lead it wins before the share client has loaded goes on from the connector's last auth (see `HubLocator`).
     */
    readonly #hub = new HubLocator({
        auth: this.#auth,
        cookie: this.#cookieRefresh,
        move: () => {
            const current = this.#streams.current;
            if (current === null) return; // A retry pending, or no stream yet: it opens through the new platform.
            // Reconnecting by itself (the hub down), it serves nothing and would reconnect on the old platform: close it.
            if (!current.isOpen()) this.#streams.retireCurrent();
            this.#scheduleRefresh(true);
        },
        running: () => this.#cycle.running(),
        names: () => this.#registry.names(),
    });

    /** `online`, page shown again: retry a pending reconnect and check the renewal against the wall clock. */
    readonly #wake = new WakeSignals((signal) =>
        this.#settle(() => {
            if (signal === "online") this.#reconnect.retryNow();
            this.#cookieRefresh.check();
        }),
    );

    /** Where routed broadcasts go: the joined channels' listeners, and a failed decryption to their `error()` callbacks. */
    readonly #deliveries: RouteTarget = {
        deliver: (name, event, payload) => {
            const matched = this.#registry.get(name)?.deliver(event, payload);
            this.#log?.("deliver", { channel: name, event, matched }); // The name and whether a listener matched, never the payload.
        },
        failed: (name, error) => {
            this.#log?.("decrypt failed", { channel: name, code: error.code });
            this.#settle(() => this.#reportEach([name], () => error));
        },
    };

    /** What the refresh cycle and the stream events act on: the parts above, and the state changes below. */
    readonly #host: ConnectorHost = {
        hubOptions: this.options as HubOptions,
        registry: this.#registry,
        status: this.#status,
        dispatcher: this.#dispatcher,
        capabilities: this.#capabilities,
        hub: this.#hub,
        auth: this.#auth,
        streams: this.#streams,
        reconnect: this.#reconnect,
        cookieRefresh: this.#cookieRefresh,
        wake: this.#wake,
        deliveries: this.#deliveries,
        log: this.#log,
        generation: () => this.#generation,
        signal: () => this.#aborter.signal,
        hubTimeouts: () => resolveHubTimeouts(this.options["hubTimeouts"]),
        paused: () => this.#paused,
        everConnected: () => this.#events.everConnected,
        settle: (change) => this.#settle(change),
        defer: (callback) => this.#callbacks.defer(callback),
        reportEach: (names, error) => this.#reportEach(names, error),
        backOff: () => this.#backOff(),
        evict: (name, error) => this.#evict(name, error),
        windDown: () => this.#windDown(),
        stop: (status) => this.#stop(status),
        lose: (channels) => this.#lose(channels),
        renew: (expired) => this.#renew(expired),
        announce: (stream) => this.#announce(stream),
        openStream: (granted, topicPrefix, platform) => this.#openStream(granted, topicPrefix, platform),
        scheduleRefresh: (reopen) => this.#scheduleRefresh(reopen),
        scheduleRetry: (reopen) => this.#scheduleRetry(reopen),
    };

    /** Locates the hub, authorizes the joined channels in one batch and acts on the answer, one refresh at a time. */
    readonly #cycle = new RefreshCycle(this.#host);

    /** What every main stream reports to (open, message, subscription event, error); a retired stream falls silent. */
    readonly #events = new StreamEvents(this.#host);

    /**
     * Create the connector; opens no connection until the first channel is joined. With `host` set, in a browser where
     * tabs share one connection, it queues for the tabs' lead at once: a first join made later in the page's life
     * (a component mounted after Echo was created) then finds the election settled instead of waiting for it.
     */
    constructor(options: MercureConnectorOptions) {
        super(options as never);
        if (this.options["resumeAcrossPages"]) this.#capabilities.start(RESUME); // Issue 52: read before the first stream.
        this.#resolveEarly();
    }

    /**
     * Merge options like Echo does, on copies, so that Echo's shared defaults are never mutated. A credential given as a
     * function is read at each request (auth/credentials.ts overwrites what Echo writes for it); one that tells users
     * apart (not the CSRF token's) keeps the tab alone: its value would name the tabs' group (see `identifies`).
     */
    protected override setOptions(options: MercureConnectorOptions): void {
        super.setOptions(cloneHeaderOptions(options) as never);
        if (hasFunction(this.options, true)) this.options["shareAcrossTabs"] = false;
    }

    /** Resume after `disconnect()`; construction opens nothing (the first joined channel does). */
    connect(): void {
        // Echo's base constructor calls connect() before this class's fields exist.
        if (!(#registry in this)) return;
        this.#paused = false;
        this.#resolveEarly();
        if (this.#registry.names().length > 0) this.#scheduleRefresh(true);
    }

    /** All joined channels by full name; Echo's `leaveAllChannels()` iterates this. */
    get channels(): Record<string, MercureChannel> {
        return this.#registry.snapshot();
    }

    /** Leave one channel by its full name; leaving the last one closes the stream. */
    leaveChannel(name: string): void {
        if (this.#registry.remove(name) === undefined) return;
        this.#capabilities.tell("dropped", name);
        this.#scheduleRefresh();
    }

    /** This connection's socket id, sent by Echo's interceptors as `X-Socket-Id` for `toOthers()`. */
    socketId(): string {
        return this.#dispatcher.socketId;
    }

    /** The current connection status. */
    connectionStatus(): ConnectionStatus {
        return this.#status.get();
    }

    /** Call `callback` on every status change; returns the function that stops it. */
    onConnectionChange(callback: (status: ConnectionStatus) => void): () => void {
        return this.#status.subscribe(callback);
    }

    /**
     * Close every stream, cancel in-flight requests and timers; joined channels stay registered, and
     * `connect()` or a newly joined channel reconnects them. Leaving channels meanwhile reconnects nothing.
     */
    disconnect(): void {
        this.#settle(() => this.#stop("disconnected"));
    }

    /** Stop like `disconnect()`, reporting `status` (`failed`: the hub's configuration must change first). */
    #stop(status: ConnectionStatus): void {
        this.#generation++;
        this.#paused = true;
        this.#aborter.abort();
        this.#aborter = new AbortController();
        this.#wake.stop();
        this.#hub.forget();
        this.#cycle.reset();
        this.#dispatcher.reset();
        this.#capabilities.tell("cleared");
        this.#windDown(status);
    }

    /**
     * Resolve the platform when the hub is known (the `host` option), once the chunks it needs have loaded (their
     * download starts now): when tabs share one connection, this starts the election (see `share-platform.ts`).
     */
    #resolveEarly(): void {
        const generation = this.#generation;
        this.#hub.resolveEarly(this.options as HubOptions, this.#dispatcher, this.#log, () => generation === this.#generation);
    }

    /** Return the joined channel with this full name, creating it by its kind and joining it when needed. */
    protected join(name: string): MercureChannel {
        const existing = this.#registry.get(name);
        if (existing !== undefined) return existing;
        const channel = this.#registry.add(name, this.options);
        if (channel instanceof MercurePrivateChannel) channel.whisperLink = this.#whisperLink;
        this.#capabilities.joined(channel);
        this.#paused = false;
        this.#scheduleRefresh();
        return channel;
    }

    /** Run a state change, then the user callbacks it produced (see {@link CallbackQueue}; nested, the outermost runs them). */
    #settle<T>(change: () => T): T {
        return this.#callbacks.run(change);
    }

    /** Report an error on each named joined channel's `error()` callbacks, once the state is settled. */
    #reportEach(names: Iterable<string>, error: (name: string) => MercureError): void {
        for (const name of names) {
            const channel = this.#registry.get(name);
            if (channel !== undefined) this.#callbacks.defer(() => channel.reportError(error(name)));
        }
    }

    /** Ask for a refresh (`reopen`: with a new stream even for the same topics); nothing while paused by `disconnect()`. */
    #scheduleRefresh(reopen = false): void {
        if (this.#paused) return;
        if (reopen) this.#reopenRequested = true;
        this.#cycle.request();
    }

    /**
     * Open a stream for `granted` unless the live one already carries exactly those topics. A stream
     * already relied on keeps running until the new one is open (make before break).
     */
    #openStream(granted: string[], topicPrefix: string | null, platform: Platform): void {
        const topics = granted.map((name) => channelTopic(topicPrefix, name));
        const reopen = this.#reopenRequested;
        const live = reopen ? null : this.#streams.carrying(topics);
        this.#reopenRequested = false;
        if (live !== null) {
            // [spec] laravel-mercure §9 item 19: a channel left and joined again fires subscribed() again;
            // §5.4 step 4: a failed snapshot is retried on the next refresh (and with backoff before: presence/presence-sync.ts).
            // Issue 53: a stream opened beside the page's first auth request serves from the answer on.
            if (live === this.#streams.current && live.isOpen()) this.#events.serve(live);
            return;
        }
        // Tabs alone: another tab's answer came after this one's, and a stream opened now would carry its cookie.
        if (this.#auth.cookieReplaced(platform, granted)) return this.#scheduleRefresh(true);
        this.#createStream(granted, topics, platform, false, reopen);
    }

    /**
     * Create the stream for `granted` within the connection budget (over HTTP/1.1 with whisper streams, the
     * current stream may close first); a `fallback` replaces a stalled one and is watched in turn; `reopen` names
     * the step in the `debug` log.
     */
    #createStream(granted: string[], topics: string[], platform: Platform, fallback = false, reopen = fallback): void {
        const broken = this.#streams.makeRoom(this.#hub.budget() - this.#capabilities.connections());
        if (broken !== null) this.#lose(broken.channels);
        // [spec] laravel-mercure §4.1: match per channel, match_urlpattern per presence channel, last_event_id when reopening.
        const patterns = this.#capabilities.patterns(platform.hub, granted, topics);
        const url = buildSubscribeUrl(platform.hub, { topics, patterns, lastEventId: this.#dispatcher.cursor });
        this.#streams.add(new HubStream(platform.EventSource, url, granted, topics, this.#events), fallback);
        this.#log?.(reopen ? "reopen" : "stream", { url, channels: granted });
        // [spec] mercure-hub §1.5: replace this stream before the hub may end it.
        const generation = this.#generation;
        this.#cookieRefresh.arm(this.#host.hubTimeouts(), (expired) =>
            this.#settle(() => {
                if (generation === this.#generation) this.#renew(expired);
            }),
        );
    }

    /**
     * The open `stream` serves: mark the channels it carries subscribed once the state is settled, while it
     * still carries them, and seed its presence channels from their snapshots (laravel-mercure §5.4 step 3).
     */
    #announce(stream: HubStream): void {
        const generation = this.#generation;
        const carried = () => generation === this.#generation && stream === this.#streams.current && stream.isOpen();
        this.#callbacks.defer(() => this.#registry.markSubscribed(stream.channels, carried));
        this.#capabilities.tell("announced", stream.channels, this.#hub.platform, this.#aborter.signal, this.#log);
    }

    /** An auth or a stream failed: report `reconnecting` unless a stream still serves, and retry with backoff. */
    #backOff(): void {
        if (this.#streams.current?.isOpen() !== true) this.#status.set("reconnecting");
        this.#scheduleRetry();
    }

    /** A stream no longer serves: its channels count as unsubscribed, their presence out of sync, until another opens. */
    #lose(channels: Iterable<string>): void {
        this.#registry.markUnsubscribed(channels);
        this.#capabilities.tell("streamLost", channels);
        this.#status.set("reconnecting");
    }

    /** Schedule one refresh after a jittered exponential backoff (one at a time); `reopen` (noted now): with a new stream. */
    #scheduleRetry(reopen = true): void {
        if (reopen) this.#reopenRequested = true;
        const generation = this.#generation;
        // A retry waits for the probe of its stream failure, which may name a cause that stops the connector.
        this.#reconnect.schedule(() =>
            this.#events.probed(() => {
                if (generation === this.#generation) this.#scheduleRefresh();
            }),
        );
    }

    /**
     * Renew the cookie and replace the stream make-before-break. When the cookie `expired` before this
     * ran, the current stream is no longer relied on: its channels count as unsubscribed, and their
     * presence members out of sync, until the replacement opens.
     */
    #renew(expired: boolean): void {
        this.#cookieRefresh.cancel();
        const stale = this.#streams.current;
        if (expired && stale !== null) this.#lose(stale.channels);
        this.#scheduleRefresh(true);
    }

    /** Remove a channel from the registry and tell its `error()` callbacks why. */
    #evict(name: string, error: MercureError): void {
        const channel = this.#registry.remove(name);
        this.#capabilities.tell("dropped", name);
        if (channel !== undefined) this.#callbacks.defer(() => channel.reportError(error));
    }

    /** Nothing to carry (no channel left, or `disconnect()`): close everything and report `status`. */
    #windDown(status: ConnectionStatus = "disconnected"): void {
        this.#streams.closeAll();
        this.#cookieRefresh.reset();
        this.#reconnect.reset();
        this.#cycle.resetIsolation();
        this.#auth.reset();
        this.#reopenRequested = false;
        this.#events.reset();
        this.#registry.markUnsubscribed();
        this.#capabilities.tell("streamLost");
        this.#capabilities.forgetGrant();
        this.#status.set(status);
    }
}
