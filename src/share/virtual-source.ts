import type { AuthResult } from "../auth/auth-client";
import type { EventSourceConstructor, EventSourceInitLike, EventSourceLike } from "../transport/platform";
import { setClampedTimeout } from "../timers";
import { newId, topicNames, whisperKey, type EventMessage, type ToClient, type ToEngine } from "./protocol";

/**
 * How long after a handover (the engine this tab followed went away, or the tab's link changed) a virtual stream may
 * stay connecting before it reports an error: the next engine's stream opened within 14 to 55 ms of a leading tab's
 * close in Chromium, and about 3 s more after one that stopped answering (docs/tabs-and-connections.md).
 */
export const HANDOVER_GRACE_MS = 5_000;

/** What a {@link ShareClient} needs from its tab's link: send to the engine (and note that an answer is expected). */
export interface ClientPort {
    /** Send `client`'s `message` to the engine of the current epoch (in-process in the leading tab). */
    post(client: ShareClient, message: ToEngine): void;
    /** How long an auth request waits for the engine's answer before it fails (the engine may be gone, or fail to load). */
    deadline(): number;
}

/**
 * One connector's side of the sharing ("client"): its virtual `EventSource`s and its auth requests, sent
 * to the leading tab's engine. A virtual stream behaves as an `EventSource`: CONNECTING until the engine's
 * real stream carries its parameters and is open, CONNECTING again (an `error`) while the real stream
 * reconnects or the engine changes hands, CLOSED (an `error`) when the hub refused the real stream.
 */
export class ShareClient {
    /** This client's id, unique across tabs. */
    readonly id = newId();

    /** Where messages to the engine go: the link of this client's credentials. */
    #port: ClientPort;

    /** The virtual streams not closed yet, by id. */
    readonly #sources = new Map<string, VirtualSource>();

    /** The auth requests waiting for their answer, by number: re-sent to a new engine. */
    readonly #pending = new Map<number, { names: readonly string[]; fresh: boolean; probe: boolean; resolve: (result: AuthResult) => void }>();

    /**
     * The channel set of the last auth request, narrowed as this client's main stream narrows (its leaves): announced to
     * the engine (`hello`) when it changes, and to a new engine, so that the union covers this tab's channels, no more.
     */
    #names: readonly string[] = [];

    /**
     * The main streams that say what the connector left of {@link ShareClient.#names} (see `#set`): those opened since it
     * was set, or carrying all of it; null when none was. Another predates the channels the set added (found by the
     * simulation, seed 1179).
     */
    #current: Set<VirtualSource> | null = null;

    /** The hub refused the cookie: the next auth request asks the server, not the last grant. */
    #fresh = false;

    /** How many more whisper streams the engine's connection budget leaves (its `room` message), or undefined before it tells. */
    room: number | undefined = undefined;

    /** The number of the next auth request. */
    #nextRequest = 1;

    /** The virtual main-stream `EventSource` of this client. */
    readonly EventSource: EventSourceConstructor;

    /** The virtual whisper-stream `EventSource` of this client. */
    readonly whisperEventSource: EventSourceConstructor;

    /** Create a client that talks to the engine through `port` (its link then adopts it). */
    constructor(port: ClientPort) {
        this.#port = port;
        const source = (whisper: boolean): EventSourceConstructor => {
            const open = (url: string) => this.#open(url, whisper);
            return class {
                static readonly CLOSED = 2;
                constructor(url: string, _init?: EventSourceInitLike) {
                    return open(url);
                }
            } as unknown as EventSourceConstructor;
        };
        this.EventSource = source(false);
        this.whisperEventSource = source(true);
    }

    /**
     * The batch auth transport: the engine answers for this client's `names` only (see `auth-gateway.ts`). `probe`: a
     * request of the connector's batch isolation, which leaves the client's channel set as it is (issue 49).
     */
    authorize(names: readonly string[], signal: AbortSignal, probe = false): Promise<AuthResult> {
        if (signal.aborted) return Promise.resolve({ kind: "aborted" });
        const r = this.#nextRequest++;
        if (!probe) this.#set(names);
        return new Promise<AuthResult>((resolve) => {
            const abort = () => this.#pending.get(r)?.resolve({ kind: "aborted" });
            signal.addEventListener("abort", abort, { once: true });
            // [spec] Every request has a deadline: an engine that never answers (gone, or its chunk failed) is a failure.
            const timer = setClampedTimeout(() => this.#pending.get(r)?.resolve({ kind: "error", status: null, cause: new Error("The leading tab's engine did not answer in time") }), this.#port.deadline());
            const fresh = this.#fresh;
            this.#pending.set(r, {
                names,
                fresh,
                probe,
                resolve: (result) => {
                    this.#pending.delete(r);
                    clearTimeout(timer);
                    signal.removeEventListener("abort", abort);
                    resolve(result);
                },
            });
            this.#post({ t: "auth", c: this.id, r, names: [...names], fresh, ...(probe ? { p: true } : {}) });
            this.#fresh = false;
        });
    }

    /**
     * The channels of a connector that authorized on its own before it joined the link (it led the tabs before the share
     * client loaded): announced, so that the engine's union covers them from its first request.
     */
    announce(names: readonly string[]): void {
        this.#set(names);
        if (names.length > 0) this.#hello();
    }

    /**
     * Talk through `port` from now on (another link: the credentials changed): say `bye` on the old one, so that its
     * engine forgets this client's channels and streams, and interrupt the streams until the new engine opens them
     * (the caller resyncs). Nothing when `port` is the current one; returns whether it changed.
     */
    move(port: ClientPort): boolean {
        if (port === this.#port) return false;
        this.#post({ t: "bye", c: this.id });
        this.#port = port;
        this.#fresh = true;
        for (const source of this.#sources.values()) source.interrupt(false, true);
        return true;
    }

    /** The hub refused the cookie (a whisper POST): the next auth request must reach the server. */
    stale(): void {
        this.#fresh = true;
    }

    /** Whether this client has anything the engine should know (a channel set, a request, a stream). */
    registered(): boolean {
        return this.#names.length > 0 || this.#pending.size > 0 || this.#sources.size > 0;
    }

    /** Whether this client waits for the engine (an auth answer, a stream to open). */
    waiting(): boolean {
        return this.#pending.size > 0 || [...this.#sources.values()].some((source) => source.readyState === 0);
    }

    /** The connector forgot its platform (`disconnect()`): leave the union; its streams are closed already. */
    release(): void {
        for (const source of [...this.#sources.values()]) source.close();
        this.#names = [];
        this.#post({ t: "bye", c: this.id });
    }

    /** A message from the engine this client's link follows. */
    receive(message: ToClient): void {
        switch (message.t) {
            case "granted":
                if (message.c === this.id) this.#pending.get(message.r)?.resolve(message.result);
                return;
            case "dropped":
                // The engine dropped this client (it was silent too long): register again.
                return message.c === this.id || message.c === "" ? this.resync() : undefined;
            case "state":
                return this.#sources.get(message.s)?.state(message.state, message.id);
            case "event":
                // A replay is for its one stream (`s`); a live event for every stream of its kind.
                if (message.s !== undefined) return this.#sources.get(message.s)?.deliver(message);
                for (const source of this.#sources.values()) source.deliver(message);
                return;
        }
    }

    /** The engine forwarded everything up to event `id` (see the `probe` message): the open main streams resume from there. */
    advance(id: string): void {
        for (const source of this.#sources.values()) source.advance(id);
    }

    /** The engine the link follows goes away: the streams wait for the next one. */
    down(): void {
        for (const source of this.#sources.values()) source.interrupt(false, true);
    }

    /** The engine cannot serve (its chunk did not load): every waiting auth request fails with `reason`. */
    fail(reason: string): void {
        for (const { resolve } of [...this.#pending.values()]) resolve({ kind: "error", status: null, cause: new Error(reason) });
    }

    /**
     * Narrow the announced set to the channels this client's newest main stream carries (the connector opens a narrower
     * one, or closes its last, when it leaves channels without an auth request): a tab's set follows its leaves, so that
     * no channel it left stays in the union every renewal authorizes, nor counts against the 100-channel limit. Not while
     * an auth request waits: that request carries the set.
     */
    #narrow(): void {
        if (this.#pending.size > 0) return;
        let newest: VirtualSource | undefined;
        for (const source of this.#sources.values()) if (!source.whisper) newest = source;
        // Between an answer and the stream it opens: the newest stream is older than the set (a whisper stream closing
        // then would drop the channels just granted), or none is open yet.
        if (newest === undefined ? this.#current === null : !this.#current?.has(newest)) return;
        const carried = newest?.names;
        const names = carried === undefined ? [] : this.#names.filter((name) => carried.has(name));
        if (names.length === this.#names.length) return;
        this.#names = names;
        this.#hello();
    }

    /** A new engine is up: announce this client's set, re-send pending auth requests, resubscribe from each stream's cursor. */
    resync(): void {
        // A request re-sent keeps its `fresh` (the hub refused the cookie, or this tab's own auth replaced it), on the
        // `hello` that comes first: the engine then answers no other tab's request from its last grant either.
        if (this.#names.length > 0 || this.#pending.size > 0) this.#hello([...this.#pending.values()].some((request) => request.fresh), this.#pending.size === 0);
        for (const [r, { names, probe }] of this.#pending) this.#post({ t: "auth", c: this.id, r, names: [...names], ...(probe ? { p: true } : {}) });
        for (const source of this.#sources.values()) {
            source.interrupt(false, true);
            this.#post({ t: "open", c: this.id, s: source.id, url: source.resumeUrl(), w: source.whisper });
        }
    }

    /**
     * A new channel set: announced by the request that carries it (or `hello`). A stream opened before it is current only
     * when it carries every name of it (a renewal keeps its stream); the others predate what the set added.
     */
    #set(names: readonly string[]): void {
        this.#names = [...names];
        const carrying = [...this.#sources.values()].filter((source) => !source.whisper && names.every((name) => source.names.has(name)));
        this.#current = carrying.length > 0 ? new Set(carrying) : null;
    }

    /** Tell the engine this client's channel set (`hello`): its union covers them, no more; `resync`: see `protocol.ts`. */
    #hello(fresh?: boolean, resync = false): void {
        this.#post({ t: "hello", c: this.id, names: [...this.#names], fresh, ...(resync ? { resync } : {}) });
    }

    /** Send `message` to the engine through this client's port. */
    #post(message: ToEngine): void {
        this.#port.post(this, message);
    }

    /** Open a virtual stream. */
    #open(url: string, whisper: boolean): VirtualSource {
        const source = new VirtualSource(`${this.id}/${this.#nextRequest++}`, url, whisper, (closed) => {
            this.#sources.delete(closed.id);
            this.#current?.delete(closed);
            // Freed at once, as an open is counted at once: a channel waiting for a whisper stream takes it now, before
            // the engine's next `room` (which tells the truth if another tab still listens on that channel).
            if (closed.whisper && this.room !== undefined) this.room++;
            this.#post({ t: "close", c: this.id, s: closed.id });
            this.#narrow();
        }, (gone) => {
            this.#sources.delete(gone.id);
            this.#current?.delete(gone);
            this.#narrow();
        });
        this.#sources.set(source.id, source);
        if (!whisper) (this.#current ??= new Set()).add(source);
        // Counted at once: the engine's next `room` comes after it opened this one.
        if (whisper && this.room !== undefined) this.room = Math.max(this.room - 1, 0);
        this.#post({ t: "open", c: this.id, s: source.id, url, w: whisper });
        if (!whisper) this.#narrow();
        return source;
    }
}

/** A virtual `EventSource` fed by the engine's real stream. */
class VirtualSource implements EventSourceLike {
    /** 0 connecting, 1 open, 2 closed. */
    readyState = 0;
    /** Called when the engine's real stream carries this one and is open. */
    onopen: ((event: Event) => unknown) | null = null;
    /** Called for each main-stream (or whisper-stream) message the engine forwards. */
    onmessage: ((event: MessageEvent) => unknown) | null = null;
    /** Called when the real stream reconnects (readyState CONNECTING) or was refused (CLOSED). */
    onerror: ((event: Event) => unknown) | null = null;

    /** `addEventListener("mercure")` listeners. */
    readonly #listeners: Array<(event: MessageEvent) => unknown> = [];

    /** Tells the client this stream was closed here. */
    readonly #closed: (source: VirtualSource) => void;

    /** Tells the client the engine closed this stream for good. */
    readonly #gone: (source: VirtualSource) => void;

    /** The whisper stream key, or null for a main stream. */
    readonly #key: string | null;

    /** The channel names a main stream's topics carry (see `topicNames`). */
    readonly names: ReadonlySet<string>;

    /** The last event id delivered (resumes this stream after a handover), initially the URL's `last_event_id`. */
    #cursor: string | null;

    /** The deadline of a handover (see {@link VirtualSource.interrupt}): the stream fails then if it is still connecting. */
    #handover?: ReturnType<typeof setTimeout>;

    /** Create a virtual stream; `closed` tells the client it was closed here, `gone` that the engine closed it. */
    constructor(
        /** The stream's id, unique across tabs. */
        readonly id: string,
        /** The subscribe URL the connector built. */
        readonly url: string,
        /** Whether this is a whisper stream. */
        readonly whisper: boolean,
        closed: (source: VirtualSource) => void,
        gone: (source: VirtualSource) => void,
    ) {
        this.#closed = closed;
        this.#gone = gone;
        this.#key = whisper ? whisperKey(url) : null;
        const params = new URL(url).searchParams;
        this.#cursor = params.get("last_event_id");
        this.names = whisper ? new Set() : topicNames(params.getAll("match"));
    }

    /** Listen for `mercure` subscription events (the only named events the hub sends). */
    addEventListener(type: string, listener: (event: MessageEvent) => unknown): void {
        if (type === "mercure") this.#listeners.push(listener);
    }

    /** Close this virtual stream (the engine narrows its union or drops a whisper reference). */
    close(): void {
        if (this.readyState === 2) return;
        this.readyState = 2;
        this.#closed(this);
    }

    /**
     * The engine says this stream is connecting (0), open (1), or closed for good (2: the hub refused it). `cursor`, with
     * 0: the engine's cursor as it said so, up to which this stream, open until then, had every event of its channels.
     */
    state(state: 0 | 1 | 2, cursor?: string): void {
        if (this.readyState === 2) return;
        if (state === 0 && cursor !== undefined) this.advance(cursor);
        if (state === 1) {
            if (this.readyState === 1) return;
            this.readyState = 1;
            this.onopen?.(new Event("open"));
            return;
        }
        if (state === 0) return this.interrupt(true);
        this.readyState = 2;
        this.#gone(this);
        this.onerror?.(new Event("error"));
    }

    /**
     * The real stream reconnects or the engine changes hands: an open stream reports a transient error; `attempt`
     * (the engine's word that the real stream failed to connect): a connecting one too, as a native EventSource does.
     * A `handover` (the engine goes away, or the tab's link changes) reports an event of type "handover": no failure of
     * the hub, which the connector does not tell its channels (`connector/stream-events.ts`); this stream reports an
     * error of its own if the next engine has not opened it within {@link HANDOVER_GRACE_MS}.
     */
    interrupt(attempt = false, handover = false): void {
        if (this.readyState === 2 || (this.readyState === 0 && !attempt)) return;
        this.readyState = 0;
        clearTimeout(this.#handover);
        if (handover) this.#handover = setClampedTimeout(() => this.readyState === 0 && this.onerror?.(new Event("error")), HANDOVER_GRACE_MS);
        this.onerror?.(new Event(handover ? "handover" : "error"));
    }

    /** Deliver an engine event if it is for this stream and the stream is open. */
    deliver(message: EventMessage): void {
        if (this.readyState !== 1 || message.w !== this.#key) return;
        if (message.id !== "") this.#cursor = message.id;
        // What HubStream reads of an event (StreamMessage), without the cost of constructing a DOM MessageEvent per
        // message: the only listeners of a virtual stream are the connector's HubStream handlers.
        const event = { type: message.type, data: message.data, lastEventId: message.id } as MessageEvent;
        if (message.type === "message") this.onmessage?.(event);
        else for (const listener of [...this.#listeners]) listener(event);
    }

    /** An open main stream has every event of its channels up to `id`: it resumes from there. */
    advance(id: string): void {
        if (this.readyState === 1 && !this.whisper) this.#cursor = id;
    }

    /** The URL to resubscribe with after a handover: resuming from this stream's own cursor. */
    resumeUrl(): string {
        const url = new URL(this.url);
        if (this.#cursor !== null) url.searchParams.set("last_event_id", this.#cursor);
        return url.href;
    }
}
