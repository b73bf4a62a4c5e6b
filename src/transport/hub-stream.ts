import type { EventSourceConstructor, EventSourceLike, StreamMessage } from "./platform";

/**
 * What a {@link HubStream} reports to its owner. Callbacks never fire once the stream is retired.
 */
export interface HubStreamHandlers {
    /** The stream opened (first time or after a native reconnect). */
    open(stream: HubStream): void;
    /** A broadcast update arrived (an event without `event:` field). */
    message(stream: HubStream, event: StreamMessage): void;
    /** A subscription event arrived (`event: mercure`, laravel-mercure §4.2): presence. Streams without it ignore them. */
    subscription?(stream: HubStream, event: StreamMessage): void;
    /** The stream reported an error; `closed` is true when it will not reconnect by itself. */
    error(stream: HubStream, event: Event, closed: boolean): void;
}

let nextStreamId = 1;

/**
 * One `EventSource` to the hub, bound to the set of channels it was opened for.
 *
 * Retiring a stream closes it and silences its callbacks, so a replaced stream can never act on
 * current state (the generation check of the connector happens here).
 */
export class HubStream {
    /** A process-unique id, for logs and tests. */
    readonly id = nextStreamId++;

    /** Set once the stream is closed by us; every later callback is ignored. */
    #retired = false;

    /** Set when the stream first opens: a later refusal came on a native reconnect, with the cookie it opened with. */
    #opened = false;

    /** Whether the last open was the EventSource's own reconnect's (an error came before it). */
    #reconnected = false;

    /** Errors since the stream last opened (or since it was created): a second one is a failed native reconnect. */
    #errors = 0;

    /** The underlying EventSource. */
    readonly #source: EventSourceLike;

    /** The `readyState` of a closed EventSource (the implementation's `CLOSED`, 2 by the SSE spec). */
    readonly #closed: number;

    /** The full channel names whose topics this stream subscribes to. */
    readonly channels: ReadonlySet<string>;

    /**
     * Open `url` with credentials, for the given channels and their topics.
     */
    constructor(
        /** The `EventSource` it was opened with: its platform's (a connector moved to the tabs' engine has another since). */
        readonly via: EventSourceConstructor,
        /** The subscribe URL this stream was opened with. */
        readonly url: string,
        channels: readonly string[],
        /** The topics `url` subscribes to, in order. */
        readonly topics: readonly string[],
        handlers: HubStreamHandlers,
    ) {
        this.channels = new Set(channels);
        this.#closed = via.CLOSED ?? 2;
        // [spec] laravel-mercure §4.1: withCredentials so the hub cookie travels.
        this.#source = new via(url, { withCredentials: true });
        this.#source.onopen = () => {
            this.#reconnected = this.#errors > 0;
            this.#opened = true;
            this.#errors = 0;
            if (!this.#retired) handlers.open(this);
        };
        this.#source.onmessage = (event: MessageEvent) => {
            if (!this.#retired) handlers.message(this, event);
        };
        this.#source.onerror = (event: Event) => {
            this.#errors++;
            if (!this.#retired) handlers.error(this, event, this.isClosed());
        };
        // [spec] laravel-mercure §4.2: subscription events never reach onmessage.
        const subscription = handlers.subscription;
        if (subscription !== undefined) {
            this.#source.addEventListener("mercure", (event) => {
                if (!this.#retired) subscription(this, event);
            });
        }
    }

    /**
     * Whether the EventSource gave up (it does after any non-2xx answer, per the SSE spec).
     */
    isClosed(): boolean {
        return this.#source.readyState === this.#closed;
    }

    /**
     * Whether the stream opened at least once (a failure since came on a native reconnect).
     */
    hasOpened(): boolean {
        return this.#opened;
    }

    /**
     * Whether its last open came from the EventSource's own reconnect after an error (of an open stream, or of a first
     * connection that failed), sent some time after the stream was created.
     */
    reconnected(): boolean {
        return this.#reconnected;
    }

    /**
     * Whether the stream failed to (re)connect: an error before it ever opened, or a second one since it last opened
     * (its native reconnect failed too).
     */
    failedToConnect(): boolean {
        return this.#errors > (this.#opened ? 1 : 0);
    }

    /**
     * Whether the stream is open right now.
     */
    isOpen(): boolean {
        return !this.#retired && this.#source.readyState === 1;
    }

    /**
     * Close the stream and ignore anything it still reports.
     */
    retire(): void {
        if (this.#retired) return;
        this.#retired = true;
        this.#source.onopen = null;
        this.#source.onmessage = null;
        this.#source.onerror = null;
        this.#source.close();
    }

    /**
     * Whether {@link HubStream.retire} was called.
     */
    isRetired(): boolean {
        return this.#retired;
    }
}
