import { Channel, EventFormatter } from "laravel-echo";
import { whisperOnPublicChannel } from "../error-messages";
import { describeCause, MercureError } from "../errors";
import { lazyChunk } from "../lazy-chunk";

/** The warning for an event no listener matched, loaded at its first use (see `./unheard-event`). */
const loadUnheardEvent = lazyChunk(() => import("./unheard-event"));

/** The prefix of client events (whispers) on the wire and in listener keys (laravel-mercure §4.6). */
const CLIENT_EVENT_PREFIX = "client-";

/** A listener for one event: receives the broadcast payload. */
export type EventCallback = (payload: unknown) => void;

/** A listener for every event: receives the event name (as `listen()` would take it) and the payload. */
export type AnyEventCallback = (event: string, payload: unknown) => void;

/** A `subscribed()` callback. */
export type SubscribedCallback = () => void;

/** An `error()` callback: receives a {@link MercureError}. */
export type ErrorCallback = (error: MercureError) => void;

/**
 * What `notification()` callbacks receive: the array a Laravel notification's `toBroadcast()` (or
 * `toArray()`) returns, plus the notification's `id` and `type` (its class name).
 */
export interface BroadcastNotification {
    /** The notification's id (a UUID). */
    id: string;
    /** The notification's class name, e.g. `App\\Notifications\\InvoicePaid`. */
    type: string;
    /** The notification's own data. */
    [key: string]: unknown;
}

/**
 * The members of {@link MercureChannel} that Echo's `Channel` implements (each calls `listen()` with the event
 * name Echo gives it), declared with the Mercure types: no code of ours is needed for them.
 */
export interface MercureChannel {
    /**
     * Listen for Laravel notifications broadcast to this channel (usually `private("App.Models.User." + id)`);
     * `T` is the notification's shape.
     */
    notification<T = BroadcastNotification>(callback: (notification: T) => void): this;

    /**
     * Listen for a client event (a whisper) of the other members; `T` is its data's type.
     */
    listenForWhisper<T = unknown>(event: string, callback: (data: T) => void): this;
}

/**
 * A public Mercure channel: listeners keyed by formatted event name, fed by the connector.
 *
 * The connector owns the transport; a channel only keeps callbacks and hands events to them.
 */
export class MercureChannel extends Channel {
    /** The full channel name (`news`, `private-orders.1`, ...). */
    readonly name: string;

    /** Formats event names with the namespace, exactly as Echo does. */
    readonly #formatter: EventFormatter;

    /** The namespace as it prefixes raw event names (`App\\Events`), or `""`; for `listenToAll()` names. */
    readonly #rawNamespace: string;

    /** Formatted event name → callbacks, in registration order. */
    readonly #listeners = new Map<string, EventCallback[]>();

    /** `listenToAll()` callbacks. */
    readonly #anyListeners: AnyEventCallback[] = [];

    /** `subscribed()` callbacks. */
    readonly #subscribedCallbacks: SubscribedCallback[] = [];

    /** `error()` callbacks. */
    readonly #errorCallbacks: ErrorCallback[] = [];

    /** Whether the current connection carries this channel (reset when the connection is lost). */
    private isSubscribed = false;

    /** Event names that arrived with no listener while others had listeners, each warned about once (bounded by the names the app broadcasts). */
    #unheard?: Set<string>;

    /**
     * Create a channel; the connector does this, through `channel()` / `privateChannel()`.
     */
    constructor(name: string, options: Channel["options"]) {
        super();
        this.name = name;
        this.options = options;
        this.#formatter = new EventFormatter(options.namespace);
        this.#rawNamespace = typeof options.namespace === "string" ? options.namespace.replace(/\./g, "\\") : "";
    }

    /**
     * Listen for an event on the channel; `T` is the payload's type (`unknown` unless given or annotated).
     */
    listen<T = unknown>(event: string, callback: (payload: T) => void): this {
        const key = this.#formatter.format(event);
        const callbacks = this.#listeners.get(key) ?? [];
        callbacks.push(callback as EventCallback);
        this.#listeners.set(key, callbacks);
        if (key.startsWith(CLIENT_EVENT_PREFIX)) this.whisperListenersChanged(true);
        return this;
    }

    /**
     * Stop listening to an event: only `callback` when given, otherwise every callback of that event.
     */
    stopListening(event: string, callback?: CallableFunction): this {
        const key = this.#formatter.format(event);
        const remaining = callback === undefined ? [] : (this.#listeners.get(key) ?? []).filter((registered) => registered !== callback);
        if (remaining.length > 0) this.#listeners.set(key, remaining);
        else this.#listeners.delete(key);
        if (key.startsWith(CLIENT_EVENT_PREFIX)) this.whisperListenersChanged(false);
        return this;
    }

    /**
     * Listen for every event on the channel; the callback gets the event name and the payload.
     */
    listenToAll(callback: AnyEventCallback): this {
        this.#anyListeners.push(callback);
        return this;
    }

    /**
     * Stop listening for every event: only `callback` when given, otherwise all such callbacks.
     */
    stopListeningToAll(callback?: AnyEventCallback): this {
        const kept = callback === undefined ? [] : this.#anyListeners.filter((registered) => registered !== callback);
        this.#anyListeners.splice(0, this.#anyListeners.length, ...kept);
        return this;
    }

    /**
     * Register a callback for when the hub stream carrying this channel is open; called at once when it already is.
     */
    subscribed(callback: SubscribedCallback): this {
        this.#subscribedCallbacks.push(callback);
        if (this.isSubscribed) this.invoke("subscribed()", () => callback());
        return this;
    }

    /**
     * Register a callback for errors concerning this channel (auth denials, stream failures, ...).
     */
    error(callback: ErrorCallback): this {
        this.#errorCallbacks.push(callback);
        return this;
    }

    /**
     * Hand a broadcast to the listeners of `event` (a raw envelope event name) and to `listenToAll()` ones; returns
     * whether any listened. When none did though the channel has listeners, warns once per event name with the likely
     * fix ("my listener never fires"), never with the payload.
     *
     * @internal
     */
    deliver(event: string, payload: unknown): boolean {
        const heard = this.#listeners.has(event) || this.#anyListeners.length > 0;
        if (!heard && this.#listeners.size > 0 && !(this.#unheard ??= new Set()).has(event)) {
            this.#unheard.add(event);
            // The text is a lazy chunk; a failed load defers the warning to the event's next delivery.
            loadUnheardEvent().then((module) => module.warnUnheard(this.name, event, this.#rawNamespace), () => this.#unheard?.delete(event));
        }
        for (const callback of this.#listeners.get(event) ?? []) {
            // The hot path of every broadcast: no closure and no label unless the callback throws.
            try {
                callback(payload);
            } catch (cause) {
                this.#callbackFailed(`listen("${event}")`, cause);
            }
        }
        if (this.#anyListeners.length === 0) return heard;
        // The raw event name in the form `listen()` takes, as Echo's Pusher channel does for listenToAll.
        const namespace = this.#rawNamespace;
        const name = namespace !== "" && event.startsWith(namespace + "\\") ? event.slice(namespace.length + 1) : "." + event;
        for (const callback of [...this.#anyListeners]) {
            this.invoke("listenToAll()", () => callback(name, payload));
        }
        return heard;
    }

    /**
     * Mark the channel subscribed and call `subscribed()` callbacks, once per live connection.
     *
     * @internal
     */
    markSubscribed(): void {
        if (this.isSubscribed) return;
        this.isSubscribed = true;
        for (const callback of [...this.#subscribedCallbacks]) this.invoke("subscribed()", () => callback());
    }

    /**
     * Forget the subscription (the connection carrying it was lost), so the next open re-fires `subscribed()`.
     *
     * @internal
     */
    markUnsubscribed(): void {
        this.isSubscribed = false;
    }

    /**
     * Call the `error()` callbacks; logs when nobody listens, so errors are never silent.
     *
     * @internal
     */
    reportError(error: MercureError): void {
        if (this.#errorCallbacks.length === 0) {
            // A throwing callback is logged with its own error, for the stack.
            if (error.code === "callback_failed") console.error(`laravel-echo-mercure: ${error.message}`, error.cause);
            else console.warn(`laravel-echo-mercure: ${error.message}`);
            return;
        }
        for (const callback of [...this.#errorCallbacks]) {
            try {
                callback(error);
            } catch (thrown) {
                // Reported on error() again, a throwing error() callback would loop: logged instead.
                console.error(`laravel-echo-mercure: an error() callback on channel "${this.name}" threw.`, thrown);
            }
        }
    }

    /**
     * Public channels cannot whisper: they have no whisper topic (laravel-mercure §7.1). Throws a
     * {@link MercureError} with code `unsupported`; private, presence and encrypted channels send.
     */
    whisper(_eventName: string, _data: unknown): this {
        throw whisperOnPublicChannel(this.name);
    }

    /**
     * The formatted event names with a listener, in registration order (the testing kit's `listeners()`).
     *
     * @internal
     */
    listenedEvents(): string[] {
        return [...this.#listeners.keys()];
    }

    /**
     * Whether a listener waits for a client event (`listenForWhisper()`, or `listen(".client-…")`).
     *
     * @internal
     */
    hasWhisperListeners(): boolean {
        for (const key of this.#listeners.keys()) if (key.startsWith(CLIENT_EVENT_PREFIX)) return true;
        return false;
    }

    /**
     * A client-event listener was added or removed. A public channel never receives whispers (it has no
     * whisper topic), so adding one only logs a warning (laravel-mercure §7.1); guarded channels tell the connector.
     */
    protected whisperListenersChanged(added: boolean): void {
        if (added) console.warn(`laravel-echo-mercure: public channel "${this.name}" receives no whispers; listen for them on a private or presence channel.`);
    }

    /**
     * Run a user callback (`what` names it, e.g. `subscribed()`) so that a throw cannot break the other
     * callbacks or the connection: the throw goes to `error()` as `callback_failed`.
     */
    protected invoke(what: string, run: () => void): void {
        try {
            run();
        } catch (cause) {
            this.#callbackFailed(what, cause);
        }
    }

    /** Report that a user callback (`what`) threw `cause`, as `callback_failed` on `error()`. */
    #callbackFailed(what: string, cause: unknown): void {
        this.reportError(
            new MercureError(
                "callback_failed",
                `A ${what} callback on channel "${this.name}" threw (${describeCause(cause)}); fix the callback, the other callbacks still ran.`,
                { channel: this.name, cause },
            ),
        );
    }
}
