import { Connector, type ConnectionStatus, type PresenceChannel } from "laravel-echo";
import { requestAuthorization, type AuthResult } from "../auth/auth-client";
import type { AuthResponse } from "../auth/auth-response";
import { CookieRefreshTimer } from "../auth/cookie-refresh";
import { MercureChannel } from "../channel/mercure-channel";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";
import { DeliveryLedger } from "../dispatch/delivery-ledger";
import { parseEnvelope } from "../dispatch/envelope";
import { MercureError, unsupported } from "../errors";
import { ReconnectTimer } from "../status/reconnect-timer";
import { StatusStore } from "../status/status-store";
import { buildSubscribeUrl } from "../topic/subscribe-url";
import { channelTopic } from "../topic/topics";
import { HubStream, type HubStreamHandlers } from "../transport/hub-stream";
import { StreamSwitch } from "../transport/stream-switch";
import { resolvePlatform, type EventSourceConstructor, type FetchLike, type Platform } from "../transport/platform";
import {
    cloneHeaderOptions,
    DEFAULT_AUTH_TIMEOUT,
    MAX_CHANNELS,
    type MercureConnectorOptions,
} from "./options";

/** The prefixes of the four channel kinds, as `leave(name)` removes them. */
const CHANNEL_PREFIXES = ["", "private-", "private-encrypted-", "presence-"] as const;

/**
 * Laravel Echo connector for Laravel's `mercure` broadcaster: every channel over one Mercure `EventSource`.
 *
 * Usable as `new Echo({ broadcaster: MercureConnector, host })`. The connector orchestrates; the auth
 * request lives in `auth/`, topics and URLs in `topic/`, the stream in `transport/`, routing in
 * `dispatch/`, status and backoff in `status/`.
 */
export class MercureConnector extends Connector<"null", MercureChannel, MercurePrivateChannel, PresenceChannel> {
    /** Joined channels by full name, in join order (the order of the auth batch). */
    private readonly registry = new Map<string, MercureChannel>();

    /** The connection status; its `set()` is the only writer. */
    private readonly status = new StatusStore();

    /** Which channels each recent event id reached, so overlapping streams deliver once. */
    private readonly ledger = new DeliveryLedger();

    /** This connection's id for `toOthers()`; stable for the connector's life. */
    private readonly ownSocketId = createSocketId();

    /** Bumped by `disconnect()`; async work captured with an older value stops. */
    private generation = 0;

    /** Cancels in-flight auth requests on `disconnect()`. */
    private abortController = new AbortController();

    /** Resolved platform, or null until the first subscription. */
    private platform: Platform | null = null;

    /** `queued` between a change and the microtask that starts the refresh. */
    private refreshState: "idle" | "queued" | "running" = "idle";

    /** A change arrived during a running refresh: run exactly one more. */
    private trailing = false;

    /** The next refresh must open a new stream even when the topics did not change (cookie renewed, stream lost). */
    private reopenRequested = false;

    /** The channels the last successful auth granted (the cookie covers them), or null. */
    private granted: ReadonlySet<string> | null = null;

    /** The current stream, its make-before-break replacement and the replaced stream still draining. */
    private readonly streams = new StreamSwitch();

    /** The last event id seen, sent as `last_event_id` on every reopen. */
    private cursor: string | null = null;

    /** Whether any stream opened since construction or the last `disconnect()`. */
    private everConnected = false;

    /** The one pending reconnect, with its backoff. */
    private readonly reconnect = new ReconnectTimer();

    /** The proactive cookie renewal. */
    private readonly cookieRefresh = new CookieRefreshTimer();

    /** Retries at once when the browser comes back online. */
    private readonly onOnline = () => this.reconnect.retryNow();

    /**
     * Create the connector; opens nothing until the first channel is joined.
     */
    constructor(options: MercureConnectorOptions) {
        super(options as never);
    }

    /**
     * Merge options like Echo does, on copies, so that Echo's shared defaults are never mutated.
     */
    protected override setOptions(options: MercureConnectorOptions): void {
        super.setOptions(cloneHeaderOptions(options) as never);
    }

    /**
     * Resume after `disconnect()`; construction opens nothing (the first joined channel does).
     */
    connect(): void {
        // Echo's base constructor calls connect() before this class's fields exist.
        if ((this.registry as Map<string, MercureChannel> | undefined) === undefined) return;
        if (this.registry.size > 0) this.scheduleRefresh(true);
    }

    /**
     * All joined channels by full name; Echo's `leaveAllChannels()` iterates this.
     */
    get channels(): Record<string, MercureChannel> {
        const snapshot: Record<string, MercureChannel> = Object.create(null);
        for (const [name, channel] of this.registry) snapshot[name] = channel;
        return snapshot;
    }

    /**
     * Listen for an event on a public channel.
     */
    listen(name: string, event: string, callback: CallableFunction): MercureChannel {
        return this.channel(name).listen(event, callback);
    }

    /**
     * Get a public channel by name, joining it if needed.
     */
    channel(name: string): MercureChannel {
        return this.join(name);
    }

    /**
     * Get a private channel by name (without the `private-` prefix), joining it if needed.
     */
    privateChannel(name: string): MercurePrivateChannel {
        return this.join("private-" + name) as MercurePrivateChannel;
    }

    /**
     * Encrypted private channels are not available in this version; throws a `MercureError` (`unsupported`).
     */
    encryptedPrivateChannel(name: string): never {
        throw unsupported("An encrypted private channel", "private-encrypted-" + name);
    }

    /**
     * Presence channels are not available in this version; throws a `MercureError` (`unsupported`).
     */
    presenceChannel(name: string): never {
        throw unsupported("A presence channel", "presence-" + name);
    }

    /**
     * Leave a channel and its private, encrypted and presence variants.
     */
    leave(name: string): void {
        for (const prefix of CHANNEL_PREFIXES) this.leaveChannel(prefix + name);
    }

    /**
     * Leave one channel by its full name; leaving the last one closes the stream.
     */
    leaveChannel(name: string): void {
        const channel = this.registry.get(name);
        if (channel === undefined) return;
        this.registry.delete(name);
        channel.markUnsubscribed();
        this.scheduleRefresh();
    }

    /**
     * This connection's socket id, sent by Echo's interceptors as `X-Socket-Id` for `toOthers()`.
     */
    socketId(): string {
        return this.ownSocketId;
    }

    /**
     * The current connection status.
     */
    connectionStatus(): ConnectionStatus {
        return this.status.get();
    }

    /**
     * Call `callback` on every status change; returns the function that stops it.
     */
    onConnectionChange(callback: (status: ConnectionStatus) => void): () => void {
        return this.status.subscribe(callback);
    }

    /**
     * Close every stream, cancel in-flight requests and timers; joined channels stay registered, and
     * `connect()` or a new join reconnects them.
     */
    disconnect(): void {
        this.generation++;
        this.abortController.abort();
        this.abortController = new AbortController();
        this.streams.closeAll();
        this.reconnect.reset();
        this.cookieRefresh.cancel();
        removeOnlineListener(this.onOnline);
        this.platform = null;
        this.refreshState = "idle";
        this.trailing = false;
        this.reopenRequested = false;
        this.granted = null;
        this.cursor = null;
        this.ledger.clear();
        this.everConnected = false;
        this.status.set("disconnected");
    }

    /** Return the joined channel `name`, creating and joining it when needed. */
    private join(name: string): MercureChannel {
        const existing = this.registry.get(name);
        if (existing !== undefined) return existing;
        const channel = name.startsWith("private-")
            ? new MercurePrivateChannel(name, this.options)
            : new MercureChannel(name, this.options);
        this.registry.set(name, channel);
        this.scheduleRefresh();
        return channel;
    }

    /**
     * Ask for a refresh: joins and leaves in the same tick coalesce into one; during a running refresh
     * this schedules exactly one trailing run.
     */
    private scheduleRefresh(reopen = false): void {
        if (reopen) this.reopenRequested = true;
        if (this.refreshState === "running") {
            this.trailing = true;
            return;
        }
        if (this.refreshState === "queued") return;
        this.refreshState = "queued";
        const generation = this.generation;
        // [spec] laravel-mercure §9 item 5: await one microtask before capturing the channel set.
        queueMicrotask(() => {
            if (generation !== this.generation) return;
            this.runRefresh(generation).catch((error: unknown) => this.recoverFromFailure(error, generation));
        });
    }

    /** Run refreshes until no trailing one is requested. */
    private async runRefresh(generation: number): Promise<void> {
        this.refreshState = "running";
        try {
            do {
                this.trailing = false;
                await this.refreshOnce(generation);
            } while (this.trailing && generation === this.generation);
        } finally {
            if (generation === this.generation) this.refreshState = "idle";
        }
    }

    /**
     * Something threw where nothing should (a broken EventSource polyfill, a fetch wrapper that throws
     * synchronously): report it on every channel and retry with backoff, never as an unhandled rejection.
     */
    private recoverFromFailure(error: unknown, generation: number): void {
        if (generation !== this.generation) return;
        for (const [name, channel] of this.registry) {
            channel.reportError(
                new MercureError("stream_error", `Connecting channel "${name}" failed unexpectedly (${describe(error)}); retrying with backoff.`, {
                    channel: name,
                    cause: error,
                }),
            );
        }
        if (this.streams.current?.isOpen() !== true) this.status.set("reconnecting");
        this.scheduleRetry();
    }

    /** Authorize the current channel set, then open (or keep) the stream that carries it. */
    private async refreshOnce(generation: number): Promise<void> {
        const platform = this.ensurePlatform();
        if (platform === null) return;
        this.reconnect.cancel();
        const names = this.enforceChannelLimit();
        if (names.length === 0) {
            this.windDown();
            return;
        }
        if (this.streams.latest() === null) {
            this.status.set(this.everConnected ? "reconnecting" : "connecting");
        }
        const result = await requestAuthorization({
            endpoint: platform.authEndpoint,
            headers: this.options.auth.headers,
            channelNames: names,
            fetch: platform.fetch,
            signal: this.abortController.signal,
            timeout: typeof this.options["authTimeout"] === "number" ? this.options["authTimeout"] : DEFAULT_AUTH_TIMEOUT,
        });
        if (generation !== this.generation) return;
        this.applyAuthResult(names, result, platform);
    }

    /** Act on a classified auth result. */
    private applyAuthResult(names: string[], result: AuthResult, platform: Platform): void {
        switch (result.kind) {
            case "aborted":
                return;
            case "ok":
                this.applyGrant(names, result.response, platform);
                return;
            case "rejected":
                this.applyRejection(names, result.status, platform);
                return;
            case "error": {
                const reason = result.status === null ? describe(result.cause) : `HTTP ${result.status}`;
                const error = (channel: string) =>
                    new MercureError(
                        "auth_failed",
                        `The broadcasting auth request to "${platform.authEndpoint}" failed (${reason}); retrying with backoff.`,
                        { channel, status: result.status ?? undefined, cause: result.cause },
                    );
                for (const name of names) this.registry.get(name)?.reportError(error(name));
                if (this.streams.current?.isOpen() !== true) this.status.set("reconnecting");
                this.scheduleRetry();
                return;
            }
        }
    }

    /** A 200: evict denied channels, remember the grant, arm the cookie refresh, open the stream. */
    private applyGrant(names: string[], response: AuthResponse, platform: Platform): void {
        const denied = names.filter((name) => response.channels.get(name)?.denied === true);
        for (const name of denied) {
            // [spec] laravel-mercure §2.4: per-channel denial, the others keep working.
            this.evict(
                name,
                new MercureError(
                    "auth_denied",
                    `The broadcasting auth request denied access to channel "${name}": check its authorization callback in routes/channels.php.`,
                    { channel: name },
                ),
            );
        }
        const granted = names.filter((name) => !denied.includes(name) && this.registry.has(name));
        this.granted = new Set(granted);
        this.armCookieRefresh(response.expiresIn);
        if (granted.length === 0) {
            this.windDown();
            return;
        }
        this.openStream(granted, response.topicPrefix, platform);
    }

    /** A 4xx: evict the newcomers and re-authorize the rest, or back off when the existing set is refused. */
    private applyRejection(names: string[], status: number, platform: Platform): void {
        const previous = this.granted ?? new Set<string>();
        const newcomers = names.filter((name) => !previous.has(name));
        if (newcomers.length > 0) {
            // [spec] laravel-mercure §2.8: older servers deny all-or-nothing; evict the newly joined only.
            const list = newcomers.join(", ");
            for (const name of newcomers) {
                this.evict(
                    name,
                    new MercureError(
                        "auth_rejected",
                        `The broadcasting auth request was denied (HTTP ${status}) after joining [${list}]; channel "${name}" was left.`,
                        { channel: name, status },
                    ),
                );
            }
            this.trailing = true;
            return;
        }
        for (const name of names) {
            this.registry.get(name)?.reportError(
                new MercureError(
                    "auth_rejected",
                    `The broadcasting auth request to "${platform.authEndpoint}" was rejected (HTTP ${status}) for channel "${name}"; retrying with backoff (is the user still logged in?).`,
                    { channel: name, status },
                ),
            );
        }
        if (this.streams.current?.isOpen() !== true) this.status.set("reconnecting");
        this.scheduleRetry();
    }

    /**
     * Open a stream for `granted` unless the live one already carries exactly those topics. A stream
     * already relied on keeps running until the new one is open (make before break).
     */
    private openStream(granted: string[], topicPrefix: string | null, platform: Platform): void {
        const topics = granted.map((name) => channelTopic(topicPrefix, name));
        const reopen = this.reopenRequested;
        this.reopenRequested = false;
        const live = this.streams.latest();
        if (!reopen && live !== null && sameList(live.topics, topics)) return;
        // [spec] laravel-mercure §4.1: match per channel, last_event_id when reopening.
        const url = buildSubscribeUrl(platform.hub, { topics, lastEventId: this.cursor });
        this.streams.add(new HubStream(platform.EventSource, url, granted, topics, this.streamHandlers));
    }

    /** Callbacks every stream reports to; the stream itself drops them once retired. */
    private readonly streamHandlers: HubStreamHandlers = {
        open: (stream) => {
            // A replacement that opens becomes current; the stream it replaces drains, then retires.
            if (!this.streams.opened(stream)) return;
            this.everConnected = true;
            this.status.set("connected");
            for (const name of stream.channels) this.registry.get(name)?.markSubscribed();
            this.reconnect.connected(() => stream === this.streams.current && stream.isOpen());
        },
        message: (stream, event) => this.dispatch(stream, event),
        error: (stream, event, closed) => this.handleStreamError(stream, event, closed),
    };

    /** Route one main-stream message to its channels (laravel-mercure §4.4). */
    private dispatch(stream: HubStream, event: MessageEvent): void {
        // [spec] §4.4 step 1: every message moves the cursor, even one that is then dropped.
        const id = event.lastEventId !== "" ? event.lastEventId : null;
        if (id !== null) this.cursor = id;
        this.route(stream, id, event.data);
        if (id !== null) this.streams.delivered(stream, id);
    }

    /** Deliver one message's envelope to the channels `stream` carries. */
    private route(stream: HubStream, id: string | null, data: unknown): void {
        const envelope = parseEnvelope(data);
        if (envelope === null) return;
        // [spec] §4.4 step 3: encrypted updates are never read as plaintext. No channel of this version
        // can hold a key, so they are dropped (fail closed).
        if (envelope.kind === "encrypted") return;
        // [spec] §4.4 step 4: toOthers().
        if (envelope.socket !== null && envelope.socket === this.ownSocketId) return;
        for (const name of envelope.channels) {
            // [spec] §4.4 step 6: plaintext never reaches an encrypted channel.
            if (name.startsWith("private-encrypted-") || !stream.channels.has(name)) continue;
            const channel = this.registry.get(name);
            if (channel === undefined) continue;
            if (id !== null && !this.ledger.claim(id, name)) continue;
            channel.deliver(envelope.event, envelope.payload);
        }
    }

    /** A stream error: report it; a stream that gave up is replaced with backoff. */
    private handleStreamError(stream: HubStream, event: Event, closed: boolean): void {
        if (this.streams.isDraining(stream)) {
            this.streams.endDrain(); // It was being replaced anyway.
            return;
        }
        if (stream === this.streams.candidate) {
            if (!closed) return; // It retries by itself; the current stream still serves.
            this.streams.retireCandidate();
            this.reportToChannels(stream.channels, "The replacement hub stream was refused; retrying with backoff.", event);
            this.scheduleRetry();
            return;
        }
        if (stream !== this.streams.current) return;
        for (const name of stream.channels) this.registry.get(name)?.markUnsubscribed();
        this.status.set("reconnecting");
        this.reportToChannels(
            stream.channels,
            closed
                ? "The hub refused or closed the event stream; re-authorizing and reconnecting with backoff." + tokenSizeHint(stream.channels)
                : "The hub event stream was interrupted; the EventSource is reconnecting by itself.",
            event,
        );
        if (!closed) return;
        // [spec] laravel-mercure §8: a terminal failure (any non-2xx, e.g. 401 for an expired cookie)
        // needs a new auth and a new stream.
        this.streams.retireCurrent();
        if (this.streams.candidate === null) this.scheduleRetry();
    }

    /** Report a stream error to the given channels. */
    private reportToChannels(names: Iterable<string>, message: string, cause: Event): void {
        for (const name of names) {
            this.registry.get(name)?.reportError(new MercureError("stream_error", `${message} (channel "${name}")`, { channel: name, cause }));
        }
    }

    /** Schedule one full refresh after a jittered exponential backoff (one at a time). */
    private scheduleRetry(): void {
        const generation = this.generation;
        this.reconnect.schedule(() => {
            if (generation === this.generation) this.scheduleRefresh(true);
        });
    }

    /** Renew the cookie before it expires, then reopen make-before-break; a late timer rebuilds instead. */
    private armCookieRefresh(expiresIn: number | null): void {
        const generation = this.generation;
        this.cookieRefresh.arm(expiresIn, (late) => {
            if (generation !== this.generation) return;
            const stale = this.streams.current;
            if (late && stale !== null) {
                // The hub has closed or downgraded the old stream by now: do not rely on it.
                for (const name of stale.channels) this.registry.get(name)?.markUnsubscribed();
                this.streams.closeAll();
            }
            this.scheduleRefresh(true);
        });
    }

    /** Resolve host, EventSource and fetch at first use; on failure report and set `failed`. */
    private ensurePlatform(): Platform | null {
        if (this.platform !== null) return this.platform;
        try {
            this.platform = resolvePlatform({
                host: this.options.host,
                authEndpoint: this.options.authEndpoint,
                eventSource: this.options["eventSource"] as EventSourceConstructor | undefined,
                fetch: this.options["fetch"] as FetchLike | undefined,
            });
            addOnlineListener(this.onOnline);
            return this.platform;
        } catch (error) {
            const failure =
                error instanceof MercureError
                    ? error
                    : new MercureError("invalid_option", "The connector options could not be resolved.", { cause: error });
            for (const [name, channel] of this.registry) {
                channel.reportError(new MercureError(failure.code, failure.message, { channel: name, cause: failure }));
            }
            this.status.set("failed");
            return null;
        }
    }

    /** Evict the channels past the 100th with an explicit error; returns the names to authorize. */
    private enforceChannelLimit(): string[] {
        const names = [...this.registry.keys()];
        for (const name of names.slice(MAX_CHANNELS)) {
            this.evict(
                name,
                new MercureError(
                    "channel_limit",
                    `Mercure broadcasting authorizes at most ${MAX_CHANNELS} channels per connection; channel "${name}" was not joined. Leave channels you no longer need.`,
                    { channel: name },
                ),
            );
        }
        return names.slice(0, MAX_CHANNELS);
    }

    /** Remove a channel from the registry and tell its `error()` callbacks why. */
    private evict(name: string, error: MercureError): void {
        const channel = this.registry.get(name);
        if (channel === undefined) return;
        this.registry.delete(name);
        channel.markUnsubscribed();
        channel.reportError(error);
    }

    /** No channel left: close everything and report `disconnected`. */
    private windDown(): void {
        this.streams.closeAll();
        this.cookieRefresh.cancel();
        this.reconnect.reset();
        this.granted = null;
        this.reopenRequested = false;
        this.status.set("disconnected");
    }
}

/**
 * A hint for a refusal the connector cannot see the reason of (EventSource hides the status): the
 * reference hub rejects tokens with more than 100 topic grants, and Laravel grants each private channel
 * two (its topic and its whisper topic), each presence channel three.
 */
function tokenSizeHint(channels: Iterable<string>): string {
    let grants = 0;
    for (const name of channels) grants += name.startsWith("presence-") ? 3 : name.startsWith("private-") ? 2 : 0;
    return grants > 100
        ? ` With ${grants} topic grants in the cookie, a hub that caps tokens at 100 (the reference hub does) refuses it: join fewer private or presence channels.`
        : "";
}

/** Whether two lists hold the same strings in the same order. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
    return a.length === b.length && a.every((value, index) => value === b[index]);
}

/** A random id for `toOthers()`: a UUID where available. */
function createSocketId(): string {
    const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
    if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
    return Math.random().toString(36).slice(2) + "." + Date.now().toString(36);
}

/** Listen for the browser's `online` event, where there is one. */
function addOnlineListener(listener: () => void): void {
    const target = globalThis as { addEventListener?: (type: string, listener: () => void) => void };
    if (typeof target.addEventListener === "function" && typeof window !== "undefined") target.addEventListener("online", listener);
}

/** Undo {@link addOnlineListener}. */
function removeOnlineListener(listener: () => void): void {
    const target = globalThis as { removeEventListener?: (type: string, listener: () => void) => void };
    if (typeof target.removeEventListener === "function") target.removeEventListener("online", listener);
}

/** A short description of a thrown value. */
function describe(cause: unknown): string {
    return cause instanceof Error ? cause.message : "network error";
}
