import type { ConnectionStatus } from "laravel-echo";
import type { AuthResult } from "../auth/auth-client";
import { BatchAuth, type BatchAuthOptions } from "../auth/batch-auth";
import { CookieRefreshTimer } from "../auth/cookie-refresh";
import { hasFunction } from "../auth/credential-options";
import { createChannel } from "./channel-factory";
import { ChannelRegistry } from "../channel/channel-registry";
import type { MercureChannel } from "../channel/mercure-channel";
import { EncryptedChannels } from "../crypto";
import { Capabilities, cryptoCapability, presenceCapability, whisperCapability } from "./capabilities";
import { HubLocator, type HubOptions } from "../discovery/hub-location";
import { deliverRoute, type RouteTarget } from "../dispatch/deliver-route";
import { Dispatcher } from "../dispatch/dispatcher";
import * as failures from "../error-messages";
import type { MercureError } from "../errors";
import { createPresenceRooms } from "../presence/presence-rooms";
import { ReconnectTimer } from "../status/reconnect-timer";
import { StatusStore } from "../status/status-store";
import { WakeSignals } from "../status/wake-signals";
import { buildSubscribeUrl } from "../topic/subscribe-url";
import { channelTopic } from "../topic/topics";
import { HubStream, type HubStreamHandlers } from "../transport/hub-stream";
import { OPEN_DEADLINE_MS, StreamSwitch } from "../transport/stream-switch";
import type { Platform, StreamMessage } from "../transport/platform";
import { whisperTarget, Whispers } from "../whisper/whispers";
import { CallbackQueue } from "./callback-queue";
import { EchoChannelMethods } from "./echo-channel-methods";
import { resolveDebug } from "./debug-log";
import { BatchIsolation } from "./batch-isolation";
import { StreamDiagnosis } from "./stream-diagnosis";
import { planStreamFailure } from "./stream-failure";
import { RefreshScheduler } from "./refresh-scheduler";
import { cloneHeaderOptions, MAX_CHANNELS, resolveHubTimeouts, type MercureConnectorOptions } from "./options";

/**
 * Laravel Echo connector for Laravel's `mercure` broadcaster: every channel over one Mercure `EventSource`.
 *
 * Usable as `new Echo({ broadcaster: MercureConnector, host })`. The connector orchestrates; the auth
 * request and the cookie renewal live in `auth/`, channel kinds and classes in `channel/`, topics and
 * URLs in `topic/`, the streams and the connection budget in `transport/`, routing in `dispatch/`,
 * status, backoff and wake-up signals in `status/`, presence members in `presence/`, whisper publishing
 * and the per-channel whisper streams in `whisper/` (loaded on first use), hub discovery and diagnostics
 * in `discovery/`.
 *
 * State changes first, user callbacks after: every entry point (a public method, a stream event, a
 * timer, an auth answer) runs its state change inside {@link MercureConnector.settle}, which then runs
 * the `error()`, `subscribed()` and `onConnectionChange()` callbacks the change produced. Presence
 * callbacks run from the subscription event or the snapshot answer that caused them, once the connector's
 * own state has moved (cursor, drains); one that calls `leave()` or `disconnect()` silences what follows.
 * Whisper listeners and whisper errors run through the same queue.
 */
export class MercureConnector extends EchoChannelMethods {
    /** Joined channels by full name, in join order (the order of the auth batch). */
    private readonly registry = new ChannelRegistry(createChannel);

    /** User callbacks waiting for the connector's state to settle. */
    private readonly callbacks = new CallbackQueue();

    /** The connection status; its `set()` is the only writer, its listeners run from {@link callbacks}. */
    private readonly status = new StatusStore((notify) => this.callbacks.defer(notify));

    /** The socket id, the cursor and the once-per-channel ledger of the main stream's messages. */
    private readonly dispatcher = new Dispatcher();

    /** The keys of the `private-encrypted-*` channels and their ordered decryption queue (laravel-mercure §6). */
    private readonly encrypted = new EncryptedChannels({ socketId: () => this.dispatcher.socketId });

    /** The joined presence channels' members, seeded from snapshots and kept by subscription events. */
    private readonly presence = createPresenceRooms();

    /** Whisper publishing and the per-channel whisper streams (laravel-mercure §7), sharing the crypto above. */
    private readonly whispers = new Whispers(
        {
            locate: (name) => (this.paused || !this.registry.has(name) ? null : whisperTarget(name, this.hub.platform, this.auth)),
            refresh: () => {
                this.hub.platform?.stale?.(); // A refused whisper: a tabs' shared auth must not answer from its last grant.
                this.scheduleRefresh();
                return !this.paused;
            },
            joined: (channel) => this.registry.get(channel.name) === channel,
            report: (name, error) => this.settle(() => this.reportEach([name], () => error)),
            // Only after an auth (the platform is resolved); drains end early if the budget needs their connections.
            open: (url, name, topic, handlers) => {
                this.streams.trimDrains(this.hub.budget() - this.whispers.size - 1);
                const platform = this.hub.platform as Platform;
                return new HubStream(platform.whisperEventSource ?? platform.EventSource, url, [name], [topic], handlers);
            },
            deliver: (name, event, payload) => this.settle(() => this.callbacks.defer(() => this.deliveries.deliver(name, event, payload))),
            // [spec] laravel-mercure §7.3: the shared re-auth and backoff; a healthy main stream is not reopened.
            failed: () => this.settle(() => this.scheduleRetry(false)),
            // For the diagnosis of a refused whisper: the cookie's expiry, as far as `expires_in` tells it.
            tokenExpiresAt: () => this.cookieRefresh.expiresAt(),
        },
        { socketId: () => this.dispatcher.socketId, crypto: this.encrypted, maxStreams: (): number => this.hub.whisperBudget(this.whispers.size) },
    );

    /** The capabilities, told of joins, leaves, auth answers and streams through one seam (see {@link Capabilities}). */
    private readonly capabilities = new Capabilities(presenceCapability(this.presence), cryptoCapability(this.encrypted), whisperCapability(this.whispers));

    /** Bumped by `disconnect()`; async work captured with an older value stops. */
    private generation = 0;

    /** Set by `disconnect()`: nothing reconnects until `connect()` or a newly joined channel. */
    private paused = false;

    /** Cancels in-flight requests (auth, discovery, snapshots, probes) on `disconnect()`, which also bumps {@link generation}. */
    private aborter = new AbortController();

    /** Where the hub is and the platform resolved for it (null until the first auth), both forgotten by `disconnect()`. */
    private readonly hub = new HubLocator();

    /** The `debug` option's logger, or null (then call sites build no detail objects). */
    private readonly log = resolveDebug(this.options["debug"]);

    /** Probes the hub once per failure streak to name the cause of a terminal stream failure. */
    private readonly diagnosis = new StreamDiagnosis();

    /**
     * Coalesces joins and leaves into one refresh (auth, then stream) at a time, plus one trailing run. A
     * refresh that throws where nothing should (a broken EventSource polyfill, a fetch wrapper that throws
     * synchronously) is reported on every channel and retried with backoff, never an unhandled rejection.
     */
    private readonly refresher = new RefreshScheduler(
        () => this.refreshOnce(this.generation),
        (error) =>
            this.settle(() => {
                this.reportEach(this.registry.names(), (name) => failures.unexpectedFailure(name, error));
                this.capabilities.tell("authFailed");
                this.backOff();
            }),
    );

    /** The next refresh must open a new stream even when the topics did not change (renewal, stream lost). */
    private reopenRequested = false;

    /** The batch auth request, and what the last successful answer granted. */
    private readonly auth = new BatchAuth(this.options as BatchAuthOptions);

    /**
     * The current stream, its make-before-break replacement and the replaced streams still draining. When a
     * stream misses its open deadline: a replacement closes every stream, freeing their connections, and
     * opens one that resumes from the cursor (the ledger drops what comes twice); a fallback leaves nothing
     * of ours to close, so the likely cause is reported and the refresh retried with backoff.
     */
    private readonly streams = new StreamSwitch(
        (stream, stall) =>
            this.settle(() => {
                const platform = this.hub.platform;
                if (platform === null) return;
                const replaced = this.streams.current;
                this.streams.closeAll();
                this.lose(replaced?.channels ?? stream.channels);
                if (stall === "replacement") return this.createStream([...stream.channels], [...stream.topics], platform, true);
                this.reportEach(stream.channels, (name) => failures.streamStalled(name, OPEN_DEADLINE_MS / 1_000));
                this.scheduleRetry();
            }),
        (stream) => this.log?.("drain end", { stream: stream.id }),
    );

    /** Whether any stream opened since construction, the last `disconnect()` or the last channel left. */
    private everConnected = false;

    /** The one pending reconnect, with its backoff. */
    private readonly reconnect = new ReconnectTimer();

    /** Channels whose auth fails alone (issue 30): found, reported, left out of the batch and retried alone. */
    private readonly isolation = new BatchIsolation({
        auth: this.auth,
        signal: () => this.aborter.signal,
        current: (generation) => generation === this.generation,
        report: (names, error) => this.settle(() => this.reportEach(names, error)),
        refresh: () => this.scheduleRefresh(),
    });

    /** The renewal of the cookie and of the stream, before the hub may end it. */
    private readonly cookieRefresh = new CookieRefreshTimer();

    /** `online`, page shown again: retry a pending reconnect and check the renewal against the wall clock. */
    private readonly wake = new WakeSignals((signal) =>
        this.settle(() => {
            if (signal === "online") this.reconnect.retryNow();
            this.cookieRefresh.check();
        }),
    );

    /**
     * Create the connector; opens no connection until the first channel is joined. With `host` set, in a browser where
     * tabs share one connection, it queues for the tabs' lead at once: a first join made later in the page's life
     * (a component mounted after Echo was created) then finds the election settled instead of waiting for it.
     */
    constructor(options: MercureConnectorOptions) {
        super(options as never);
        this.resolveEarly();
    }

    /**
     * Merge options like Echo does, on copies, so that Echo's shared defaults are never mutated. A credential given as a
     * function is read at each request (auth/credentials.ts overwrites what Echo writes for it) and keeps the tab alone.
     */
    protected override setOptions(options: MercureConnectorOptions): void {
        super.setOptions(cloneHeaderOptions(options) as never);
        if (hasFunction(this.options)) this.options["shareAcrossTabs"] = false;
    }

    /** Resume after `disconnect()`; construction opens nothing (the first joined channel does). */
    connect(): void {
        // Echo's base constructor calls connect() before this class's fields exist.
        if ((this.registry as ChannelRegistry | undefined) === undefined) return;
        this.paused = false;
        this.resolveEarly();
        if (this.registry.names().length > 0) this.scheduleRefresh(true);
    }

    /** All joined channels by full name; Echo's `leaveAllChannels()` iterates this. */
    get channels(): Record<string, MercureChannel> {
        return this.registry.snapshot();
    }

    /** Leave one channel by its full name; leaving the last one closes the stream. */
    leaveChannel(name: string): void {
        if (this.registry.remove(name) === undefined) return;
        this.capabilities.tell("dropped", name);
        this.scheduleRefresh();
    }

    /** This connection's socket id, sent by Echo's interceptors as `X-Socket-Id` for `toOthers()`. */
    socketId(): string {
        return this.dispatcher.socketId;
    }

    /** The current connection status. */
    connectionStatus(): ConnectionStatus {
        return this.status.get();
    }

    /** Call `callback` on every status change; returns the function that stops it. */
    onConnectionChange(callback: (status: ConnectionStatus) => void): () => void {
        return this.status.subscribe(callback);
    }

    /**
     * Close every stream, cancel in-flight requests and timers; joined channels stay registered, and
     * `connect()` or a newly joined channel reconnects them. Leaving channels meanwhile reconnects nothing.
     */
    disconnect(): void {
        this.settle(() => this.stop("disconnected"));
    }

    /** Stop like `disconnect()`, reporting `status` (`failed`: the hub's configuration must change first). */
    private stop(status: ConnectionStatus): void {
        this.generation++;
        this.paused = true;
        this.aborter.abort();
        this.aborter = new AbortController();
        this.wake.stop();
        this.hub.forget();
        this.refresher.reset();
        this.dispatcher.reset();
        this.capabilities.tell("cleared");
        this.windDown(status);
    }

    /**
     * Resolve the platform now when the hub is known (the `host` option): when tabs share one connection, this starts
     * the election (see `share-platform.ts`). Nothing is reported here: a failure shows again at the first join.
     */
    private resolveEarly(): void {
        if (this.hub.platform !== null || !this.hub.locate(this.options as HubOptions)) return;
        try {
            this.hub.resolve(this.options as HubOptions, this.dispatcher, this.log);
        } catch {
            // Reported on the channels by the first batch's own resolution.
        }
    }

    /** Return the joined channel with this full name, creating it by its kind and joining it when needed. */
    protected join(name: string): MercureChannel {
        const existing = this.registry.get(name);
        if (existing !== undefined) return existing;
        const channel = this.registry.add(name, this.options);
        this.capabilities.tell("joined", channel);
        this.paused = false;
        this.scheduleRefresh();
        return channel;
    }

    /** Run a state change, then the user callbacks it produced (see {@link CallbackQueue}; nested, the outermost runs them). */
    private settle<T>(change: () => T): T {
        return this.callbacks.run(change);
    }

    /** Report an error on each named joined channel's `error()` callbacks, once the state is settled. */
    private reportEach(names: Iterable<string>, error: (name: string) => MercureError): void {
        for (const name of names) {
            const channel = this.registry.get(name);
            if (channel !== undefined) this.callbacks.defer(() => channel.reportError(error(name)));
        }
    }

    /** Ask for a refresh (`reopen`: with a new stream even for the same topics); nothing while paused by `disconnect()`. */
    private scheduleRefresh(reopen = false): void {
        if (this.paused) return;
        if (reopen) this.reopenRequested = true;
        this.refresher.request();
    }

    /** Authorize the current channel set, then open (or keep) the stream that carries it. */
    private async refreshOnce(generation: number): Promise<void> {
        const found = this.hub.locate(this.options as HubOptions) || (await this.hub.prepare(this.options as HubOptions, this.aborter.signal, this.log));
        if (found instanceof Error) {
            this.settle(() => {
                this.reportEach(this.registry.names(), (name) => failures.platformFailure(name, found));
                if (found.status === undefined) this.backOff();
                else this.status.set("failed");
            });
        }
        if (found !== true) return;
        this.refresher.captured(); // The joins made while locating are in this batch.
        const batch = this.settle(() => this.prepareBatch());
        if (batch === null) this.capabilities.tell("authFailed");
        if (batch === null || generation !== this.generation) return;
        this.log?.("auth", { channels: batch.names });
        const requestedAt = Date.now();
        this.capabilities.tell("authStarted");
        const result = await this.auth.request(batch.names, batch.platform, this.aborter.signal);
        if (generation !== this.generation) return;
        if (this.auth.shouldIsolate(batch.names, result) && (await this.isolation.isolate(batch.names, batch.platform, generation))) return;
        this.settle(() => this.applyAuthResult(batch.names, result, batch.platform, requestedAt));
    }

    /**
     * Resolve the platform at first use (on failure report and set `failed`), evict the channels past the
     * 100th with an explicit error, and report `connecting`; the names to authorize, or null for nothing to do.
     */
    private prepareBatch(): { names: string[]; platform: Platform } | null {
        let platform = this.hub.platform;
        try {
            platform ??= this.hub.resolve(this.options as HubOptions, this.dispatcher, this.log);
        } catch (error) {
            this.reportEach(this.registry.names(), (name) => failures.platformFailure(name, error));
            this.status.set("failed");
            return null;
        }
        this.wake.start();
        this.reconnect.cancel();
        const joined = this.registry.names();
        for (const name of joined.splice(MAX_CHANNELS)) this.evict(name, failures.channelLimit(name, MAX_CHANNELS));
        for (const name of this.auth.isolated.keys()) if (!this.registry.has(name)) this.auth.isolated.delete(name);
        const names = joined.filter((name) => !this.auth.isolated.has(name));
        if (names.length === 0) {
            // Only channels whose auth fails alone are left: their retry brings them back.
            if (this.auth.isolated.size === 0) this.windDown();
            return null;
        }
        if (this.streams.latest() === null) this.status.set(this.everConnected ? "reconnecting" : "connecting");
        return { names, platform };
    }

    /** Act on what the auth answer means for the batch (see {@link BatchAuth.answer}): evictions first. */
    private applyAuthResult(names: string[], result: AuthResult, platform: Platform, requestedAt: number): void {
        const outcome = this.auth.answer(names, result, platform.authEndpoint, (name) => this.registry.has(name));
        this.log?.("auth result", outcome.kind === "granted" ? { granted: outcome.granted, denied: outcome.denied } : { outcome: outcome.kind });
        for (const [name, error] of outcome.evict ?? []) this.evict(name, error);
        if (outcome.kind === "granted") {
            // With `hubToken`, the token's `exp` may come before the cookie's: the renewal follows the earlier.
            this.cookieRefresh.authorized(requestedAt, platform.hubToken?.lifetime(requestedAt, outcome.response.expiresIn) ?? outcome.response.expiresIn);
            // [spec] laravel-mercure §6.4, §7.3: keys and whisper streams follow every auth, before the stream opens and counts them.
            const report = (name: string, error: MercureError) => this.reportEach([name], () => error);
            this.capabilities.tell("authorized", { granted: outcome.granted, response: outcome.response, platform, report });
            if (outcome.granted.length === 0) this.windDown();
            else this.openStream(outcome.granted, outcome.response.topicPrefix, platform);
            return;
        }
        if (outcome.kind === "newcomers_rejected") return this.refresher.request(); // A trailing run authorizes the others again.
        if (outcome.failure !== undefined) {
            this.reportEach(names, outcome.failure);
            this.backOff();
        }
        this.capabilities.tell("authFailed");
    }

    /**
     * Open a stream for `granted` unless the live one already carries exactly those topics. A stream
     * already relied on keeps running until the new one is open (make before break).
     */
    private openStream(granted: string[], topicPrefix: string | null, platform: Platform): void {
        const topics = granted.map((name) => channelTopic(topicPrefix, name));
        const reopen = this.reopenRequested;
        const live = reopen ? null : this.streams.carrying(topics);
        this.reopenRequested = false;
        if (live !== null) {
            // [spec] laravel-mercure §9 item 19: a channel left and joined again fires subscribed() again;
            // §5.4 step 4: a failed snapshot is retried on the next refresh.
            if (live === this.streams.current && live.isOpen()) this.announce(live);
            return;
        }
        this.createStream(granted, topics, platform, false, reopen);
    }

    /**
     * Create the stream for `granted` within the connection budget (over HTTP/1.1 with whisper streams, the
     * current stream may close first); a `fallback` replaces a stalled one and is watched in turn; `reopen` names
     * the step in the `debug` log.
     */
    private createStream(granted: string[], topics: string[], platform: Platform, fallback = false, reopen = fallback): void {
        const broken = this.streams.makeRoom(this.hub.budget() - this.whispers.size);
        if (broken !== null) this.lose(broken.channels);
        // [spec] laravel-mercure §4.1: match per channel, match_urlpattern per presence channel, last_event_id when reopening.
        const patterns = this.presence.patterns(platform.hub, granted, topics);
        const url = buildSubscribeUrl(platform.hub, { topics, patterns, lastEventId: this.dispatcher.cursor });
        this.streams.add(new HubStream(platform.EventSource, url, granted, topics, this.streamHandlers), fallback);
        this.log?.(reopen ? "reopen" : "stream", { url, channels: granted });
        // [spec] mercure-hub §1.5: replace this stream before the hub may end it.
        const generation = this.generation;
        this.cookieRefresh.arm(resolveHubTimeouts(this.options["hubTimeouts"]), (expired) =>
            this.settle(() => {
                if (generation === this.generation) this.renew(expired);
            }),
        );
    }

    /** Callbacks every stream reports to; the stream itself drops them once retired. */
    private readonly streamHandlers: HubStreamHandlers = {
        // A stream opened, for the first time or after a native reconnect.
        open: (stream) =>
            this.settle(() => {
                // A replacement that opens becomes current; the streams it replaces drain, then retire.
                const replaced = this.streams.current;
                if (!this.streams.opened(stream)) return;
                this.log?.("open", { stream: stream.id, ...(replaced !== null && replaced !== stream ? { draining: replaced.id } : {}) });
                this.diagnosis.reset();
                // [spec] laravel-mercure §10: a reconnect made after the cookie expired (the machine slept) is
                // anonymous at best; renew instead of reporting `connected`.
                if (this.cookieRefresh.isExpired()) return this.renew(true);
                this.everConnected = true;
                this.status.set("connected");
                this.announce(stream);
                this.reconnect.connected(() => stream === this.streams.current && stream.isOpen());
                this.cookieRefresh.check(); // The renewal timer may be late (a throttled tab).
            }),
        message: (stream, event) => this.dispatch(stream, event),
        // [spec] laravel-mercure §5.4 step 6 and §8: a subscription event (presence) moves the main cursor too.
        subscription: (stream, { lastEventId: id, data }) => {
            if (id !== "") this.streams.delivered(stream, (this.dispatcher.cursor = id));
            this.presence.handleEvent(data, id);
        },
        // A stream error: report it; a stream that gave up is replaced with backoff.
        error: (stream, event, closed) =>
            this.settle(() => {
                const failure = this.streams.failed(stream, closed);
                this.log?.("stream error", { stream: stream.id, failure });
                if (failure === "ignored") return;
                if (failure !== "replacement_refused") this.lose(stream.channels);
                this.reportEach(stream.channels, (name) => failures.streamError(name, failure, stream.channels, event));
                const plan = planStreamFailure(failure, event, stream.hasOpened(), stream.failedToConnect(), this.streams.candidate !== null);
                if (plan.retry) {
                    // Issue 13: opened on the tabs' shared grant without asking Laravel: re-authorize at once, at Laravel.
                    if (this.auth.refusedAfterGrant()) {
                        this.hub.platform?.stale?.();
                        this.scheduleRefresh(true);
                    } else {
                        if (plan.reconnectRefused) this.hub.platform?.stale?.(); // The retry's auth must reach Laravel for a new cookie.
                        this.scheduleRetry();
                    }
                }
                if (plan.diagnose) void this.diagnoseStream(stream, plan.fatal);
            }),
    };

    /**
     * The open `stream` serves: mark the channels it carries subscribed once the state is settled, while it
     * still carries them, and seed its presence channels from their snapshots (laravel-mercure §5.4 step 3).
     */
    private announce(stream: HubStream): void {
        const generation = this.generation;
        const carried = () => generation === this.generation && stream === this.streams.current && stream.isOpen();
        this.callbacks.defer(() => this.registry.markSubscribed(stream.channels, carried));
        this.capabilities.tell("announced", stream.channels, this.hub.platform, this.aborter.signal, this.log);
    }

    /** Deliver one main-stream message to its channels (laravel-mercure §4.4), once per channel. */
    private dispatch(stream: HubStream, event: StreamMessage): void {
        const { id, route } = this.dispatcher.receive(event, (name) => stream.channels.has(name) && this.registry.has(name));
        if (id !== null) this.streams.delivered(stream, id);
        if (route === null) return;
        this.log?.("event", { id, channels: route.channels });
        deliverRoute(route, this.encrypted, this.deliveries, this.aborter.signal);
    }

    /** Where routed broadcasts go: the joined channels' listeners, and a failed decryption to their `error()` callbacks. */
    private readonly deliveries: RouteTarget = {
        deliver: (name, event, payload) => {
            const matched = this.registry.get(name)?.deliver(event, payload);
            this.log?.("deliver", { channel: name, event, matched }); // The name and whether a listener matched, never the payload.
        },
        failed: (name, error) => {
            this.log?.("decrypt failed", { channel: name, code: error.code });
            this.settle(() => this.reportEach([name], () => error));
        },
    };

    /**
     * Name the cause of a terminal stream failure once per failure streak (a `fetch` probe reads what
     * `EventSource` hides), after the `stream_error`; a configuration that must change first (or a `fatal` refusal,
     * whatever the probe finds) stops with `failed`.
     */
    private async diagnoseStream(stream: HubStream, fatal: boolean): Promise<void> {
        const { hub: { platform }, generation } = this;
        if (platform === null) return;
        const named = await this.diagnosis.once(platform, stream, this.cookieRefresh.expiresAt(), this.aborter.signal);
        // A disconnect() during the probe, or a stream that opened meanwhile: the failure is history.
        if (generation !== this.generation || this.streams.current?.isOpen() === true) return;
        if (named === null) return void (fatal && this.settle(() => this.stop("failed")));
        this.log?.("diagnosis", { code: named.diagnosis.code, retry: named.diagnosis.retry });
        this.settle(() => {
            this.reportEach(stream.channels, named.error);
            if (fatal || !named.diagnosis.retry) this.stop("failed");
        });
    }

    /** An auth or a stream failed: report `reconnecting` unless a stream still serves, and retry with backoff. */
    private backOff(): void {
        if (this.streams.current?.isOpen() !== true) this.status.set("reconnecting");
        this.scheduleRetry();
    }

    /** A stream no longer serves: its channels count as unsubscribed, their presence out of sync, until another opens. */
    private lose(channels: Iterable<string>): void {
        this.registry.markUnsubscribed(channels);
        this.capabilities.tell("streamLost", channels);
        this.status.set("reconnecting");
    }

    /** Schedule one refresh after a jittered exponential backoff (one at a time); `reopen` (noted now): with a new stream. */
    private scheduleRetry(reopen = true): void {
        if (reopen) this.reopenRequested = true;
        const generation = this.generation;
        this.reconnect.schedule(() => {
            if (generation === this.generation) this.scheduleRefresh();
        });
    }

    /**
     * Renew the cookie and replace the stream make-before-break. When the cookie `expired` before this
     * ran, the current stream is no longer relied on: its channels count as unsubscribed, and their
     * presence members out of sync, until the replacement opens.
     */
    private renew(expired: boolean): void {
        this.cookieRefresh.cancel();
        const stale = this.streams.current;
        if (expired && stale !== null) this.lose(stale.channels);
        this.scheduleRefresh(true);
    }

    /** Remove a channel from the registry and tell its `error()` callbacks why. */
    private evict(name: string, error: MercureError): void {
        const channel = this.registry.remove(name);
        this.capabilities.tell("dropped", name);
        if (channel !== undefined) this.callbacks.defer(() => channel.reportError(error));
    }

    /** Nothing to carry (no channel left, or `disconnect()`): close everything and report `status`. */
    private windDown(status: ConnectionStatus = "disconnected"): void {
        this.streams.closeAll();
        this.cookieRefresh.reset();
        this.reconnect.reset();
        this.isolation.reset();
        this.auth.reset();
        this.reopenRequested = false;
        this.everConnected = false;
        this.registry.markUnsubscribed();
        this.capabilities.tell("streamLost");
        this.diagnosis.reset();
        this.status.set(status);
    }
}
