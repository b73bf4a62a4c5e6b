import { setClampedTimeout } from "../timers";
import type { HubEngineOptions } from "./engine";
import { loadEngine } from "./load";
import { isClientMessage, newId, type EventMessage, type ToClient, type ToEngine } from "./protocol";
import { ShareClient } from "./virtual-source";

/**
 * How long a client waits for the engine's `pong` (or a new engine's `up` after a `down`) before it takes
 * the lead by stealing the lock: a frozen or discarded leader never answers.
 */
export const PING_TIMEOUT_MS = 3_000;

/** The message types clients send to the engine (the others go to clients). */
const ENGINE_MESSAGES: ReadonlySet<string> = new Set(["hello", "auth", "open", "close", "bye", "ping"]);

/** The part of `navigator.locks` (Web Locks) the election uses. */
export interface LockManagerLike {
    request(name: string, options: { steal?: boolean; signal?: AbortSignal }, callback: () => Promise<void>): Promise<unknown>;
}

/** The part of a `BroadcastChannel` the link uses. */
export interface BroadcastChannelLike {
    postMessage(message: unknown): void;
    onmessage: ((event: MessageEvent) => unknown) | null;
}

/** The browser APIs sharing needs (the page's by default; fakes in tests). */
export interface ShareEnvironment {
    /** `navigator.locks`. */
    readonly locks: LockManagerLike;
    /** The `BroadcastChannel` constructor. */
    readonly BroadcastChannel: new (name: string) => BroadcastChannelLike;
    /** Where `pagehide` and `pageshow` are heard (`window`), or null. */
    readonly page: { addEventListener(type: "pagehide" | "pageshow", listener: (event: { readonly persisted?: boolean }) => void): void } | null;
    /** Where `freeze` and `resume` are heard (`document`), or null. */
    readonly lifecycle?: { addEventListener(type: "freeze" | "resume", listener: () => void): void } | null;
    /**
     * Run `task` soon, in a task of its own that a hidden tab does not throttle (the page's: a `MessageChannel`
     * message, see `share-platform.ts`); default `setTimeout(task, 0)`.
     */
    readonly hop?: (task: () => void) => void;
}

/** The engine as its tab link hosts it (see `engine.ts`). */
interface EngineLike {
    receive(message: ToEngine): void;
    close(): void;
}

/**
 * One tab's link to the other tabs of the same app, per hub and auth endpoint: the leader election, the
 * message bus, the engine when this tab leads, and the clients (connectors) of this tab.
 *
 * Why Web Locks and `BroadcastChannel` rather than a `SharedWorker`: a `SharedWorker` needs its own script
 * URL, which a bundled library cannot emit portably for every app bundler; Android Chrome supports it only
 * since 2026; and a worker cannot run the app's `fetch`/`EventSource` options. A Web Lock held for the tab's
 * life elects exactly one leader per browser profile, is released the moment its tab closes or is discarded
 * (the next waiting tab gets it at once), and can be stolen from a frozen leader; `BroadcastChannel` carries
 * the messages. Web Locks exist only in secure contexts (https, localhost): on a plain-http host (`http://app.test`)
 * each connector connects on its own (see `share-platform.ts`).
 *
 * Timers: none runs in the leader for sharing. Clients ping the engine when they need it (the engine answers
 * from its message handler, which runs even in a throttled hidden tab), and a client that hears nothing within
 * {@link PING_TIMEOUT_MS} steals the lock. The leader runs no renewal timer: the clients' own renewal timers
 * (those of visible tabs run unthrottled) send the auth requests that renew the cookie and reopen the stream.
 */
export class TabLink {
    /** The link's name: the lock's and the bus's. */
    readonly #name: string;

    /** The browser APIs the link uses. */
    readonly #env: ShareEnvironment;

    /** The leading connector's hub and auth options, for the engine. */
    readonly #engineOptions: Omit<HubEngineOptions, "epoch" | "send">;

    /** The bus to the other tabs. */
    readonly #channel: BroadcastChannelLike;

    /** This tab's clients, by id. */
    readonly #clients = new Map<string, ShareClient>();

    /** While this tab leads: the other tabs' clients the engine heard from over the bus (until their `bye`). */
    readonly #remote = new Set<string>();

    /** The engine's messages to this tab's own clients, waiting for the microtask that hands them over. */
    #outbox: ToClient[] = [];

    /** The engine's events for the other tabs, waiting for the task hop that posts them in one bus message. */
    #batch: EventMessage[] = [];

    /** The engine, while this tab leads and the engine chunk has loaded. */
    #engine: EngineLike | null = null;

    /** Whether this tab holds the lock (the engine may still be loading). */
    #leading = false;

    /** The epoch of the engine the clients follow, or null before the first `up`. */
    #epoch: string | null = null;

    /** A `down` was heard from the engine the clients follow: its own `pong` after that proves the `down` false. */
    #downHeard = false;

    /** Ends the lock callback of this tab's leadership (never, while the tab lives, unless stolen). */
    #stepDown: (() => void) | null = null;

    /** Whether this tab's lock request waits in the queue. */
    #inQueue = false;

    /** Cancels this tab's queued lock request when it steals the lock instead. */
    #queued: AbortController | null = null;

    /** The pending watchdog: no `pong`/`up` by then, and the lock is stolen. */
    #watchdog: ReturnType<typeof setTimeout> | null = null;

    /** Create the link named `name` and queue for the lead; `engineOptions` are the leading connector's (hub, auth). */
    constructor(name: string, env: ShareEnvironment, engineOptions: Omit<HubEngineOptions, "epoch" | "send">) {
        this.#name = name;
        this.#env = env;
        this.#engineOptions = engineOptions;
        this.#channel = new env.BroadcastChannel(name);
        // [spec] Only well-formed messages are heard (`isClientMessage` here, the engine checks its own); and a leading tab
        // hears only clients from the bus: its own engine reaches its clients in-process, so an engine's message on the bus
        // (a stray or forged `up`, a stolen lead's last words) cannot make it follow another epoch and go deaf to its engine.
        this.#channel.onmessage = (event) => {
            const message = event.data as { t?: unknown; c?: unknown } | null;
            if (ENGINE_MESSAGES.has(message?.t as string) ? typeof message!.c === "string" : !this.#leading && isClientMessage(message)) this.#heard(message as ToEngine | ToClient);
        };
        env.page?.addEventListener("pagehide", (event) => this.#hidden(event.persisted === true));
        env.page?.addEventListener("pageshow", (event) => {
            if (event.persisted === true) this.#shown(true);
        });
        // A frozen tab gets no stream events, yet its BroadcastChannel handlers still run (bench/hidden-tab.mjs): a
        // frozen leader would answer every ping and starve every tab. It steps down as on `pagehide`, keeping its
        // clients, and queues again on `resume`.
        env.lifecycle?.addEventListener("freeze", () => this.#hidden(true));
        env.lifecycle?.addEventListener("resume", () => this.#shown(false));
        this.#queue();
    }

    /** A new client (a connector of this tab). */
    client(): ShareClient {
        const client = new ShareClient(this.#port);
        this.adopt(client);
        return client;
    }

    /**
     * Take `client` over from its link (its connector's credentials changed): it says `bye` there, then registers
     * here with its streams and pending requests, at once if this link follows an engine, else at the engine's `up`.
     */
    adopt(client: ShareClient): void {
        this.#clients.set(client.id, client);
        if (client.move(this.#port) && this.#epoch !== null) client.resync();
    }

    /** How this link's clients reach the engine. */
    readonly #port = {
        post: (client: ShareClient, message: ToEngine): void => {
            if (message.t === "bye") this.#clients.delete(client.id);
            this.#toEngine(message);
        },
    };

    /** Queue for the lock; granted at once when no tab leads. */
    #queue(): void {
        const queued = (this.#queued = new AbortController());
        this.#inQueue = true;
        this.#env.locks.request(this.#name, { signal: queued.signal }, () => this.#lead()).catch(() => this.#lost(queued));
    }

    /** Steal the lock from a leader that did not answer (frozen, or discarded without releasing). */
    #steal(): void {
        this.#queued?.abort();
        this.#queued = null;
        const stealing = new AbortController();
        this.#env.locks.request(this.#name, { steal: true }, () => this.#lead()).catch(() => this.#lost(stealing));
    }

    /** This tab got the lock: start the engine (the lazy chunk) and announce it; hold the lock while the tab lives. */
    async #lead(): Promise<void> {
        this.#leading = true;
        this.#inQueue = false;
        this.#clearWatchdog();
        const held = new Promise<void>((resolve) => (this.#stepDown = resolve));
        const epoch = newId();
        try {
            const { HubEngine } = await loadEngine();
            if (!this.#leading || this.#stepDown === null) return;
            this.#engine = new HubEngine({ ...this.#engineOptions, epoch, send: (message) => this.#toClients(message) });
            this.#toClients({ t: "up", e: epoch });
        } catch {
            // The engine chunk did not load (offline, a deploy in between): let another tab lead.
            this.#leading = false;
            this.#stepDown = null;
            return;
        }
        return held;
    }

    /** The lock request ended without leading, or the lead was stolen: close the engine, become a client, queue again. */
    #lost(request: AbortController): void {
        if (request.signal.aborted) return; // This tab cancelled a queued request itself (it stole instead).
        this.#inQueue = false;
        this.#resign();
        this.#queue();
    }

    /** Stop leading: close the real streams; the clients follow the next engine's `up`. */
    #resign(): void {
        this.#flush();
        this.#leading = false;
        this.#stepDown?.();
        this.#stepDown = null;
        this.#engine?.close();
        this.#engine = null;
        this.#remote.clear();
    }

    /**
     * `pagehide` (or `freeze`: `persisted`): clients say bye; a leader announces that it leaves, closes its real streams and releases the
     * lock at once (not when the tab is torn down), so that the next tab takes over as early as possible.
     */
    #hidden(persisted: boolean): void {
        // A page kept in the back/forward cache may come back: its clients stay (their names in the union are harmless).
        if (!persisted) for (const client of this.#clients.values()) client.release();
        if (!this.#leading) return;
        if (this.#epoch !== null && this.#engine !== null) this.#post({ t: "down", e: this.#epoch });
        this.#resign();
    }

    /**
     * The page came back from the back/forward cache (`refollow`: its clients follow whichever engine answers the ping,
     * the one they followed may be gone) or resumed from a freeze (its bus handler ran while frozen, so its clients
     * still follow the current engine, and re-following it would resubscribe them for nothing: an event forwarded
     * meanwhile would find their streams reconnecting). Either way: queue for the lead again, and ping.
     */
    #shown(refollow: boolean): void {
        if (refollow) this.#epoch = null;
        if (!this.#leading && !this.#inQueue) this.#queue();
        this.#channel.postMessage({ t: "ping", c: "" } satisfies ToEngine);
    }

    /** Send a client's message to the engine: in-process in the leading tab, else over the bus (with a ping when one waits for it). */
    #toEngine(message: ToEngine): void {
        if (this.#leading) {
            const engine = this.#engine;
            // An engine still loading misses nothing: clients re-send everything on its `up`.
            if (engine !== null) queueMicrotask(() => this.#engine === engine && engine.receive(message));
            return;
        }
        this.#channel.postMessage(message);
        if (message.t !== "bye" && message.t !== "close") this.#expectEngine();
    }

    /**
     * Send the engine's message to every tab's clients (this tab's in-process: events at once, answers to a client's
     * request after the current task). Events, the bulk of the traffic, cross the bus only while another tab's client
     * is registered: a single tab pays no structured clone per event. (Another tab's client opens its stream with a
     * message first, so it is known before any event is meant for it.) They cross it in batches: the events of one
     * task (the browser parses a network chunk of a stream in one task) wait for a task hop and go in one message,
     * one structured clone and one delivery per chunk instead of per event. A microtask would not batch them: the
     * browser runs the microtasks after each event's handler.
     */
    #toClients(message: ToClient): void {
        if (message.t !== "event") this.#post(message);
        else if (this.#remote.size > 0 && this.#batch.push(message) === 1) (this.#env.hop ?? later)(() => this.#flush());
        // An event comes from a stream's own task (the hub's), not from inside a client's call: heard at once, unless
        // messages wait in the outbox, which it must not overtake (a stream's `open` state before its first event).
        if (message.t === "event" && this.#outbox.length === 0) return this.#heard(message);
        // The other messages answer a client's request: one microtask for every message of this task, heard in order.
        if (this.#outbox.push(message) > 1) return;
        queueMicrotask(() => {
            const outbox = this.#outbox;
            this.#outbox = [];
            for (const queued of outbox) this.#heard(queued);
        });
    }

    /** Post the engine's message on the bus, after the events waiting for their hop (it must not overtake them). */
    #post(message: ToClient): void {
        this.#flush();
        this.#channel.postMessage(message);
    }

    /** Post the waiting events in one bus message. */
    #flush(): void {
        const events = this.#batch;
        if (events.length === 0) return;
        this.#batch = [];
        this.#channel.postMessage({ t: "events", e: events[0]!.e, events } satisfies ToClient);
    }

    /** A message on the bus (or this tab's own engine's). */
    #heard(message: ToClient | ToEngine): void {
        if (ENGINE_MESSAGES.has(message.t)) {
            const engine = this.#engine;
            if (engine === null) return;
            const { c } = message as ToEngine;
            if (message.t === "bye") this.#remote.delete(c);
            else if (c !== "") this.#remote.add(c);
            // [spec] Answered here, not by a timer: a throttled hidden leader still answers at once.
            if (message.t === "ping") this.#post({ t: "pong", e: this.#epoch ?? "" });
            else engine.receive(message as ToEngine);
            return;
        }
        const update = message as ToClient;
        // An `up`, or a `pong` from an engine this tab has not followed yet (it opened after the `up`): follow it.
        // A `pong` after a `down` of the same engine: the `down` was not its own (a stray message), re-register with it.
        const refollow = update.t === "pong" && update.e === this.#epoch && this.#downHeard;
        if (update.t === "up" || (update.t === "pong" && update.e !== this.#epoch) || refollow) {
            if (update.e === this.#epoch && !refollow) return;
            this.#epoch = update.e;
            this.#downHeard = false;
            this.#clearWatchdog();
            for (const client of this.#clients.values()) client.resync();
            return;
        }
        // Another engine's traffic: the one followed may be a stray `up`'s; the real engine answers the ping with its epoch.
        if (update.e !== this.#epoch) return this.#expectEngine();
        this.#clearWatchdog();
        if (update.t === "down") {
            this.#downHeard = true;
            // [spec] A leaving engine no longer answers: silence until the watchdog means take the lead; a `pong`, a false `down`.
            this.#expectEngine();
        }
        if (update.t !== "events") for (const client of this.#clients.values()) client.receive(update);
        else for (const event of update.events) for (const client of this.#clients.values()) client.receive(event);
    }

    /** Start the watchdog unless one runs: `ping` the engine; silence (no `pong`, no new engine's `up`) steals the lock. */
    #expectEngine(): void {
        if (this.#watchdog !== null || this.#leading) return;
        this.#channel.postMessage({ t: "ping", c: "" } satisfies ToEngine);
        this.#watchdog = setClampedTimeout(() => {
            this.#watchdog = null;
            if (!this.#leading && [...this.#clients.values()].some((client) => client.waiting())) this.#steal();
        }, PING_TIMEOUT_MS);
    }

    /** The engine answered. */
    #clearWatchdog(): void {
        if (this.#watchdog !== null) clearTimeout(this.#watchdog);
        this.#watchdog = null;
    }
}

/** The default task hop (outside the page's environment: tests' fakes). */
function later(task: () => void): void {
    setTimeout(task, 0);
}
