import type { EventSourceLike } from "../transport/platform";

/** What a {@link MemoryEventSource} hands to `onmessage` and `addEventListener` listeners: the parts the connector reads. */
export interface MemoryMessage {
    /** The event type (`message`, or `mercure` for subscription events). */
    readonly type: string;
    /** The event's `data` field. */
    readonly data: string;
    /** The event's `id` field. */
    readonly lastEventId: string;
}

/** What a {@link MemoryEventSource} reports to the in-memory hub that serves it. */
export interface MemoryStreamHost {
    /** A stream was created: the hub opens it in a later microtask. */
    connect(source: MemoryEventSource): void;
    /** The client closed the stream. */
    closed(source: MemoryEventSource): void;
}

/**
 * An `EventSource` served by the in-memory hub of the testing kit instead of the network: the hub opens it in a
 * microtask after construction (as a real one opens in a later task), writes events into it, interrupts it
 * (`readyState` back to connecting, an `error`) and reopens it, or refuses it with an HTTP status (closed, an
 * `error` carrying `status`). The connector drives it as it drives the browser's.
 */
export class MemoryEventSource implements EventSourceLike {
    /** `readyState` while connecting or reconnecting. */
    static readonly CONNECTING = 0;
    /** `readyState` while open. */
    static readonly OPEN = 1;
    /** `readyState` once closed for good. */
    static readonly CLOSED = 2;

    /** 0 connecting, 1 open, 2 closed. */
    readyState = MemoryEventSource.CONNECTING;

    /** Called when the stream opens. */
    onopen: ((event: Event) => unknown) | null = null;

    /** Called for events without an `event:` field. */
    onmessage: ((event: MessageEvent) => unknown) | null = null;

    /** Called on every error, transient or terminal. */
    onerror: ((event: Event) => unknown) | null = null;

    /** Listeners of named event types. */
    readonly #listeners = new Map<string, Array<(event: MessageEvent) => unknown>>();

    /** The subscribe URL the stream was opened with. */
    readonly url: URL;

    /** The hub serving this stream. */
    readonly #host: MemoryStreamHost;

    /** Create a stream on `url`, served by `host`. */
    constructor(host: MemoryStreamHost, url: string) {
        this.#host = host;
        this.url = new URL(url);
        host.connect(this);
    }

    /** Listen for events of a named type (`mercure` subscription events). */
    addEventListener(type: string, listener: (event: MessageEvent) => unknown): void {
        this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
    }

    /** Close the stream for good. */
    close(): void {
        if (this.readyState === MemoryEventSource.CLOSED) return;
        this.readyState = MemoryEventSource.CLOSED;
        this.#host.closed(this);
    }

    /** Hub side: the stream is open (first time, or after {@link MemoryEventSource.interrupt}). */
    open(): void {
        this.readyState = MemoryEventSource.OPEN;
        this.onopen?.({ type: "open" } as Event);
    }

    /** Hub side: write one event; `type` `message` goes to `onmessage`, others to their listeners. */
    write(message: MemoryMessage): void {
        const event = message as unknown as MessageEvent;
        if (message.type === "message") this.onmessage?.(event);
        for (const listener of this.#listeners.get(message.type) ?? []) listener(event);
    }

    /** Hub side: the connection dropped; the stream reconnects by itself (until {@link MemoryEventSource.open}). */
    interrupt(): void {
        this.readyState = MemoryEventSource.CONNECTING;
        this.onerror?.({ type: "error" } as Event);
    }

    /** Hub side: the hub answered `status` (a reconnect refused): the stream is closed for good. */
    refuse(status: number): void {
        this.readyState = MemoryEventSource.CLOSED;
        this.onerror?.({ type: "error", status } as unknown as Event);
    }
}
