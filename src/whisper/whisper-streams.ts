import type { EncryptedChannels } from "../crypto/encrypted-channels";
import type { MercureError } from "../errors";
import { buildSubscribeUrl } from "../topic/subscribe-url";
import type { StreamMessage } from "../transport/platform";
import { whisperTopic } from "../topic/topics";
import { setClampedTimeout } from "../timers";
import { CLIENT_PREFIX, isGuarded, readWhisper } from "./envelope";
import { diagnoseWhisper, type WhisperDiagnostics } from "./whisper-diagnosis";
import { whisperError } from "./whisper-error";

/**
 * What a whisper stream reports; shaped so that a `HubStreamHandlers` consumer (a `HubStream`) accepts it.
 * The first argument (the stream) is ignored: each handler is bound to the stream it was made for.
 */
export interface WhisperStreamHandlers {
    /** The stream opened. */
    open(stream: unknown): void;
    /** A message arrived (an event without `event:` field). */
    message(stream: unknown, event: StreamMessage): void;
    /** The stream reported an error; `closed` when it will not reconnect by itself (`readyState` CLOSED). */
    error(stream: unknown, event: Event, closed: boolean): void;
}

/**
 * One whisper stream as the module needs it: a `HubStream` fits.
 */
export interface WhisperStream {
    /** Close the stream and silence its handlers. */
    retire(): void;
}

/**
 * Open one stream with credentials (`withCredentials: true`) on `url`, which subscribes to `topic`, the
 * whisper topic of `channel` alone. The connector passes
 * `(url, channel, topic, handlers) => new HubStream(EventSource, url, [channel], [topic], handlers)`.
 * Handlers must not be called before the factory returned.
 */
export type WhisperStreamFactory = (url: string, channel: string, topic: string, handlers: WhisperStreamHandlers) => WhisperStream;

/**
 * What the whisper streams need from their connector; none of these may throw.
 */
export interface WhisperStreamsHost {
    /** Open a stream (see {@link WhisperStreamFactory}). */
    open: WhisperStreamFactory;
    /** Hand an accepted client event (`client-…`) to the channel's listeners. */
    deliver(channel: string, event: string, payload: unknown): void;
    /** Report an error (`stream_error`, `decrypt_failed`, `crypto_unavailable`) on the channel's `error()` callbacks. */
    report(channel: string, error: MercureError): void;
    /**
     * A whisper stream was refused or closed for good: run the connector's shared re-auth with backoff
     * (the main stream, if healthy, need not reopen) and call {@link WhisperStreams.sync} after it.
     * Called once until that `sync()`, however many streams fail.
     */
    failed(): void;
    /**
     * Whether the browser's one hub cookie is another connector's now (its auth request left after this connector's
     * last: see `BatchAuth.cookieReplaced`), so that a native reconnect would present a cookie without this connector's
     * grants; absent: never.
     */
    cookieReplaced?(): boolean;
    /** Ask for the connector's refresh (a batch auth) now, and call {@link WhisperStreams.sync} after it; false when disconnected. */
    refresh?(): boolean;
}

/**
 * Options of {@link WhisperStreams}.
 */
export interface WhisperStreamsOptions {
    /** This connection's socket id: our own whispers are dropped. */
    socketId: () => string;
    /** The connector's encrypted channels (created with the same socket id): decrypts sealed whispers in order. */
    crypto: Pick<EncryptedChannels, "enqueue">;
    /**
     * How many whisper streams may be open at once (asked before each open); default no limit. Over
     * HTTP/1.1 each holds one of the browser's six connections per host, which the main stream and the
     * connector's requests need too.
     */
    maxStreams?: () => number;
    /**
     * Name the cause of a whisper stream's terminal failure, once per failure streak and stream (after
     * its `stream_error`); none when absent.
     */
    diagnostics?: WhisperDiagnostics;
}

/**
 * What the latest successful auth response said, as whisper streams need it.
 */
export interface WhisperAuth {
    /** The hub URL (the `host` option, resolved). */
    hub: URL;
    /** The response's `topic_prefix` (`null` for a legacy server). */
    topicPrefix: string | null;
    /** Whether the response's `client_events` was exactly `true`. */
    clientEvents: boolean;
    /** The joined channels it granted (not denied, not evicted). */
    granted: Iterable<string>;
    /**
     * What the streams open through (the platform's `EventSource` for whispers): another one (a tab's streams moved to
     * its tabs' engine) reopens them there, each from its cursor.
     */
    via?: unknown;
    /**
     * When the cookie this answer set is due for renewal (wall clock, ms), before the hub may end a stream opened on it
     * (mercure-hub §1.5); absent: never (the tabs' engine renews the real streams of a shared tab).
     */
    renewAt?: number;
}

/** One channel that has whisper listeners. */
interface Entry {
    /** The stream carrying its whispers (opening or open), or null while it has none. */
    stream: WhisperStream | null;
    /** The hub URL and topic that stream subscribes to: a stream is reopened only when they change (or its `via`). */
    target: string;
    /** What its stream opened through (see {@link WhisperAuth.via}). */
    via?: unknown;
    /** When the cookie its stream opened on is due for renewal (see {@link WhisperAuth.renewAt}). */
    renewAt: number;
    /** Its replacement on a newer cookie, opening (make-before-break), or null. */
    next: WhisperStream | null;
    /**
     * The ids its stream delivered since the last replacement was opened from the cursor, which that replacement may
     * replay: each is delivered once. Null when none was.
     */
    overlap: Set<string> | null;
    /** A stream it replaced whose whispers still decrypt: they are delivered. */
    replaced: WhisperStream | null;
    /** The last event id its stream saw, sent as `last_event_id` when the stream is reopened. */
    cursor: string | null;
    /** It has no stream because the others hold every connection allowed (reported once, until it gets one). */
    waiting: boolean;
    /**
     * The failure streak in progress: a token made at the first terminal failure since the stream last
     * opened (that failure is told and diagnosed, the later ones are not), null once a stream opens. A diagnosis
     * whose token is no longer this one is history and is not reported.
     */
    streak: object | null;
    /**
     * A diagnosis said retrying cannot help (a configuration to change first): no stream reopens until the
     * channel stops listening for whispers, loses its grant or the connector disconnects.
     */
    stopped: boolean;
}

/**
 * The whisper streams of one connector (laravel-mercure §7.3): one `EventSource` per guarded channel
 * with whisper listeners, subscribed to that channel's whisper topic alone.
 *
 * Native EventSource does not say which topic a message came on, and anyone holding a channel's
 * whisper grant can publish any envelope there; one stream per channel binds every message to its
 * channel, so a member of channel A cannot inject into channel B. The main stream never subscribes to
 * whisper topics, so a member can never forge a server event either.
 *
 * A stream is opened lazily (first whisper listener, once the channel is granted and `client_events`
 * is on) and closed when its last listener goes, its channel is left, evicted or denied, or
 * `client_events` turns off; it is not reopened when unrelated channels change. Each keeps its own
 * cursor across reopens. A stream the hub refused or closed for good asks the connector for its shared
 * re-auth and backoff, and reopens at the next {@link WhisperStreams.sync}; the first such failure of a
 * streak is diagnosed (see {@link WhisperStreamsOptions.diagnostics}), and a cause that retrying cannot fix
 * keeps that stream closed (the main stream is left alone). Beyond
 * {@link WhisperStreamsOptions.maxStreams} open streams, a channel is told so on `error()` and waits for a
 * stream to close.
 */
export class WhisperStreams {
    /** Guarded channels with whisper listeners, by full name. */
    readonly #entries = new Map<string, Entry>();

    /** The latest auth, or null before the first one (or after `close()`): nothing opens without it. */
    #auth: (Omit<WhisperAuth, "granted"> & { granted: Set<string> }) | null = null;

    /** A terminal failure asked the host for a re-auth that has not come yet (one request for all streams). */
    #failing = false;

    /** Aborted and replaced by `close()`: diagnoses started before it report nothing. */
    #controller = new AbortController();

    /** The timer of the next stream due for renewal on a newer cookie (see {@link WhisperStreams.#renewDue}). */
    #renewal: ReturnType<typeof setTimeout> | undefined;

    /**
     * Create the (empty) whisper streams of one connector; opens nothing.
     */
    constructor(
        /** The connector: opens streams, delivers, reports, runs the shared re-auth. */
        private readonly host: WhisperStreamsHost,
        /** Socket id and crypto. */
        private readonly options: WhisperStreamsOptions,
    ) {}

    /**
     * The whisper streams that exist now, opening or open; each holds (or waits for) one HTTP/1.1 connection.
     */
    get size(): number {
        let count = 0;
        for (const entry of this.#entries.values()) count += Number(entry.stream !== null) + Number(entry.next !== null);
        return count;
    }

    /**
     * Say whether `channel` has whisper listeners now (after every `listenForWhisper()` and
     * `stopListeningForWhisper()`): the first opens its stream if it is granted, none closes it and
     * forgets its cursor. Public channels are ignored (they have no whisper topic).
     */
    listening(channel: string, on: boolean): void {
        if (!isGuarded(channel)) return;
        if (!on) return this.#forget(channel);
        let entry = this.#entries.get(channel);
        if (entry === undefined) this.#entries.set(channel, (entry = { stream: null, target: "", renewAt: Infinity, next: null, overlap: null, replaced: null, cursor: null, waiting: false, streak: null, stopped: false }));
        this.#ensure(channel, entry);
    }

    /**
     * Apply a successful auth response (after every one, including the re-auth after {@link WhisperStreamsHost.failed}):
     * opens the missing streams of granted channels with their cursors, closes those of channels not
     * granted, closes all and forgets every cursor when `client_events` is off, and leaves healthy
     * streams alone.
     */
    sync(auth: WhisperAuth): void {
        this.#failing = false;
        this.#auth = { ...auth, granted: new Set(auth.granted) };
        for (const [channel, entry] of this.#entries) this.#ensure(channel, entry);
        this.#renewDue();
    }

    /**
     * Forget a channel that was left, evicted or denied: close its stream, forget its listeners and cursor.
     */
    drop(channel: string): void {
        this.#auth?.granted.delete(channel);
        this.#forget(channel);
    }

    /**
     * Close every stream and forget every cursor (the connector disconnected); channels keep their
     * listeners, and the next `sync()` reopens their streams.
     */
    close(): void {
        this.#auth = null;
        this.#failing = false;
        this.#controller.abort();
        this.#controller = new AbortController();
        clearTimeout(this.#renewal);
        for (const entry of this.#entries.values()) this.#reset(entry);
    }

    /** Open, keep or close one channel's stream according to the latest auth. */
    #ensure(channel: string, entry: Entry): void {
        const auth = this.#auth;
        if (auth === null) return;
        // [spec] laravel-mercure §7.3: only while client_events is on and the channel is authorized;
        // client_events turning off forgets the cursors.
        if (!auth.clientEvents || !auth.granted.has(channel)) return this.#reset(entry);
        const topic = whisperTopic(auth.topicPrefix, channel);
        const target = auth.hub.href + " " + topic;
        // [spec] §7.3: a healthy stream is not reopened when unrelated channels change.
        if (entry.stream !== null && entry.target === target && entry.via === auth.via) return;
        this.#shut(entry);
        // Its diagnosis said retrying cannot help: its error() has the fix; nothing reopens until then.
        if (entry.stopped) return;
        // The most streams allowed are open: this channel waits for one of them to close (or the next sync).
        if (this.size >= (this.options.maxStreams?.() ?? Infinity)) {
            if (entry.waiting) return;
            entry.waiting = true;
            return this.host.report(channel, whisperError(channel, "limit"));
        }
        entry.waiting = false;
        entry.target = target;
        entry.via = auth.via;
        entry.renewAt = auth.renewAt ?? Infinity;
        entry.stream = this.#open(channel, topic, entry);
    }

    /**
     * Renew make-before-break each stream whose cookie is due for renewal and older than the last answer's (laravel-mercure
     * §8, as the main stream): the hub ends a stream at its cookie's expiry, and a whisper published before the browser's
     * reconnect would be lost (a hub without history, or a stream that had no cursor yet). Then wait for the next one due.
     */
    #renewDue(): void {
        clearTimeout(this.#renewal);
        const auth = this.#auth;
        if (auth === null) return;
        const latest = auth.renewAt ?? Infinity;
        const now = Date.now();
        let next = Infinity;
        for (const [channel, entry] of this.#entries) {
            if (entry.stream === null || entry.next !== null || entry.renewAt >= latest) continue;
            // Over HTTP/1.1 the replacement needs a connection of its own for a moment; without one, the hub's end and the
            // browser's reconnect it is.
            if (entry.renewAt <= now) {
                if (this.size >= (this.options.maxStreams?.() ?? Infinity)) continue;
                // The browser's cookie is another connector's now (tabs alone): a replacement would present it, without this
                // channel's grant, and hear nothing (the simulation's seed 13141). Authorize again: its answer's sync renews.
                if (this.host.cookieReplaced?.() === true) return this.#authorizeAgain();
                entry.overlap = new Set();
                entry.next = this.#open(channel, whisperTopic(auth.topicPrefix, channel), entry);
            } else next = Math.min(next, entry.renewAt);
        }
        if (next !== Infinity) this.#renewal = setClampedTimeout(() => this.#renewDue(), next - now);
    }

    /** Open `channel`'s stream on `topic` from its cursor: its current one, or its replacement ({@link Entry.next}), which takes over at its open. */
    #open(channel: string, topic: string, entry: Entry): WhisperStream {
        // [spec] §7.3: match=<this channel's whisper topic> alone, last_event_id=<this stream's cursor>.
        const url = buildSubscribeUrl(this.#auth!.hub, { topics: [topic], lastEventId: entry.cursor });
        /** Whether an error came since it last opened (or was created): its next open is the EventSource's own reconnect. */
        let errored = false;
        /** When the cookie it opens on is due for renewal. */
        const renewAt = this.#auth!.renewAt ?? Infinity;
        const stream: WhisperStream = this.host.open(url, channel, topic, {
            open: () => {
                if (entry.next === stream) {
                    // The replacement carries the channel now: the stream it replaces goes (its ids stay, for the replay).
                    entry.stream?.retire();
                    entry.replaced = entry.stream;
                    entry.stream = stream;
                    entry.next = null;
                    entry.renewAt = renewAt;
                    return;
                }
                if (entry.stream !== stream) return;
                entry.streak = null; // The failure streak, if any, is over.
                const reconnected = errored;
                errored = false;
                // Reconnected by itself on the hub cookie of another connector of this browser: it would hear nothing of this
                // channel, without an error. Authorize again; the next sync reopens it from its cursor (nothing failed).
                if (!reconnected || this.host.cookieReplaced?.() !== true) return;
                this.#shut(entry);
                this.#authorizeAgain();
            },
            message: (_, event) => {
                if (entry.stream === stream) this.#receive(channel, entry, stream, event);
            },
            error: (_, __, closed) => {
                errored = true;
                // A replacement that fails before it opened goes: the stream it was to replace serves on, to the hub's end.
                if (entry.next === stream) {
                    stream.retire();
                    entry.next = entry.overlap = null;
                    return;
                }
                // A transient error: the EventSource reconnects by itself, with its Last-Event-ID.
                if (!closed || entry.stream !== stream) return;
                // [spec] §7.3: a CLOSED whisper stream triggers the shared re-auth; it reopens with its cursor.
                this.#shut(entry);
                if (!this.#failing) {
                    this.#failing = true;
                    this.host.failed();
                }
                // One failure streak, one error: its first close is told (and diagnosed), a retry refused again is not.
                if (entry.streak !== null) return;
                const streak = (entry.streak = {});
                this.host.report(channel, whisperError(channel, "closed"));
                void this.#diagnose(channel, entry, url, streak);
            },
        });
        return stream;
    }

    /** Ask the connector for a refresh (else its shared re-auth with backoff), once until the next `sync()`. */
    #authorizeAgain(): void {
        if (this.#failing) return;
        this.#failing = true;
        if (this.host.refresh?.() === undefined) this.host.failed();
    }

    /**
     * Name the cause of the first terminal failure of `channel`'s failure streak (issue 10) and report it
     * after the `stream_error`, while the entry is still this channel's, no stream of it opened since and
     * the connector did not disconnect; a cause retrying cannot fix stops this stream (not the main one).
     */
    async #diagnose(channel: string, entry: Entry, url: string, streak: object): Promise<void> {
        const diagnostics = this.options.diagnostics;
        if (diagnostics === undefined) return;
        const current = () => this.#entries.get(channel) === entry && entry.streak === streak;
        const { signal } = this.#controller;
        // [spec] issue 10: the probe reproduces this stream's matchers (one), never its topic.
        const cause = await diagnoseWhisper(diagnostics, { channel, failure: { kind: "whisper_stream" }, subscribeUrl: url, signal, current });
        if (cause === null) return;
        this.host.report(channel, cause.error);
        if (cause.diagnosis.retry) return;
        entry.stopped = true;
        this.#shut(entry); // A retry already under way is dropped too.
    }

    /** Route one message of `channel`'s stream (laravel-mercure §7.3). */
    #receive(channel: string, entry: Entry, stream: WhisperStream, event: StreamMessage): void {
        // A renewal's overlap: what the replaced stream delivered after the replacement's cursor is delivered once.
        const id = event.lastEventId;
        if (entry.overlap !== null && id !== "") {
            if (entry.next !== null) entry.overlap.add(id);
            else if (entry.overlap.delete(id)) return;
        }
        // [spec] §7.3: every message moves this stream's own cursor, even one that is then dropped.
        if (id !== "") entry.cursor = id;
        const whisper = readWhisper(event.data, channel, this.options.socketId());
        if (whisper === null) return;
        if (whisper.kind === "plain") return this.host.deliver(channel, whisper.event, whisper.payload);
        // [spec] §6.4, §7.3: only what decrypts under this channel's key, in order; the queue drops our own
        // socket's; whisper mode drops anything but client events. A failure is reported like any other
        // decryption failure (§6.4 makes no exception for whispers).
        this.options.crypto.enqueue(
            channel,
            whisper.jwe,
            (name, payload) => {
                if (this.#carries(entry, stream) && name.startsWith(CLIENT_PREFIX)) this.host.deliver(channel, name, payload);
            },
            (error) => {
                if (this.#carries(entry, stream)) this.host.report(channel, error);
            },
        );
    }

    /** Whether what `stream` received is still the channel's: its stream, or the one its replacement took over from. */
    #carries(entry: Entry, stream: WhisperStream): boolean {
        return entry.stream !== null && (entry.stream === stream || entry.replaced === stream);
    }

    /** Close a channel's stream and forget the channel; the connection it frees goes to a waiting channel. */
    #forget(channel: string): void {
        const entry = this.#entries.get(channel);
        if (entry === undefined) return;
        this.#shut(entry);
        this.#entries.delete(channel);
        for (const [name, other] of this.#entries) if (other.waiting) this.#ensure(name, other);
    }

    /** Close a channel's stream and forget its cursor (and that it was waiting: it is not granted now). */
    #reset(entry: Entry): void {
        this.#shut(entry);
        entry.cursor = null;
        entry.waiting = false;
        entry.streak = null;
        entry.stopped = false;
    }

    /** Close a channel's stream (and its replacement), keeping its cursor. */
    #shut(entry: Entry): void {
        entry.stream?.retire();
        entry.next?.retire();
        entry.stream = entry.next = entry.overlap = entry.replaced = null;
    }
}
