import { backoff, type BackoffRange } from "../status/backoff";
import { setClampedTimeout } from "../timers";
import type { EngineSeed, HubEngineOptions } from "./engine";
import { loadEngine, markLead, type ClaimedLead, type MarkStorage } from "./load";
import type { Leadership } from "./leadership";
import { inboxName, isBatch, isTabsMessage, newId, type ToClient, type ToEngine, type ToTabs } from "./protocol";
import { ShareClient } from "./virtual-source";

/**
 * How long a client waits for the engine's `pong` (or a new engine's `up` after a `down`) before it takes
 * the lead by stealing the lock: a frozen or discarded leader never answers.
 */
export const PING_TIMEOUT_MS = 3_000;

/** How often, and after how long, the leading tab retries loading the engine chunk before it reports the failure. */
const ENGINE_RETRIES_MS = [1_000, 3_000];

/**
 * The backoff between two tries (a load and its retries) of a tab whose engine chunk failed, once it leads again: 5 s
 * doubling up to a minute, unless a client's request comes first (see `TabLink.#lead`).
 */
const ENGINE_BACKOFF: BackoffRange = { min: 5_000, max: 60_000 };

/** How long past the auth deadline a client waits for the engine's answer before it reports the request failed. */
export const ANSWER_GRACE_MS = PING_TIMEOUT_MS + ENGINE_RETRIES_MS.reduce((sum, ms) => sum + ms, 0) + 2_000;



/** The part of `navigator.locks` (Web Locks) the election uses. */
export interface LockManagerLike {
    /** Request lock `name`: `callback` gets the lock (null when `ifAvailable` found it taken) and holds it until its promise settles. */
    request(name: string, options: { steal?: boolean; signal?: AbortSignal; ifAvailable?: boolean }, callback: (lock: unknown) => Promise<void> | undefined): Promise<unknown>;
}

/**
 * A connector that won the tabs' lead before the share client loaded (`claimLead`) and connected on its own: the link
 * leads with its lock and the engine starts from its last grant; its stream stays its own until another client uses
 * the engine (another tab's, or another connector of this page) or this tab stops leading; then it moves there.
 */
export interface DirectLead {
    /** What its last auth request granted, when it was sent; null before any. */
    readonly seed: EngineSeed | null;
    /** Move its stream to the engine's. */
    upgrade(): void;
}

/** The part of a `BroadcastChannel` the link uses. */
export interface BroadcastChannelLike {
    postMessage(message: unknown): void;
    onmessage: ((event: MessageEvent) => unknown) | null;
    close(): void;
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
    readonly lifecycle?: { addEventListener(type: "freeze" | "resume", listener: () => void): void; removeEventListener?(type: "freeze" | "resume", listener: () => void): void } | null;
    /**
     * Run `task` soon, in a task of its own that a hidden tab does not throttle (the page's: a `MessageChannel`
     * message, see `share-platform.ts`); default `setTimeout(task, 0)`.
     */
    readonly hop?: (task: () => void) => void;
    /** Where the leading tab marks its lead (the page's `localStorage`: see `markLead`), or undefined: nowhere. */
    readonly storage?: MarkStorage;
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
 * each connector connects on its own (see `share-platform.ts`); where a lock request is refused (an opaque origin:
 * a sandboxed iframe; a document that is not fully active) this tab runs its own engine, unshared.
 *
 * Two buses: the link's own, which every tab hears, carries only the clients' messages to the engine and the engine's
 * `up`/`down`/`pong`/`probe` (no channel data); each tab's inbox (see {@link inboxName}) carries the engine's answers,
 * stream states and events for that tab's clients alone, so that a tab never gets the events or keys of channels it
 * did not join.
 *
 * Timers: clients ping the engine when they need it (the engine answers from its message handler, which runs even in
 * a throttled hidden tab), and a client that hears nothing within {@link PING_TIMEOUT_MS} steals the lock. The leader
 * runs one timer, the liveness probe (`PROBE_MS` in `leadership.ts`), while another tab is registered, and no renewal timer: the
 * clients' own renewal timers (those of visible tabs run unthrottled) send the auth requests that renew the cookie and
 * reopen the stream.
 */
export class TabLink {
    /** The link's name: the lock's and the bus's. */
    readonly #name: string;

    /** This tab's id on the link: its inbox's name ends with it. */
    readonly #tab = newId();

    /** The browser APIs the link uses. */
    readonly #env: ShareEnvironment;

    /** The leading connector's hub and auth options, for the engine. */
    readonly #engineOptions: Omit<HubEngineOptions, "send" | "room">;

    /** The bus every tab of the link hears. */
    readonly #channel: BroadcastChannelLike;

    /** This tab's inbox: the engine's messages for this tab's clients. */
    readonly #inbox: BroadcastChannelLike;

    /** This tab's clients, by id. */
    readonly #clients = new Map<string, ShareClient>();

    /** The engine's messages to this tab's own clients, waiting for the microtask that hands them over. */
    #outbox: Array<{ message: ToClient | ToTabs; client: ShareClient | null }> = [];

    /** The leading tab's side (the engine, the other tabs), while this tab leads and the engine chunk has loaded. */
    #leader: Leadership | null = null;

    /** Whether this tab holds the lock (the engine may still be loading). */
    #leading = false;

    /** Web Locks refused this tab: it runs its own engine, off the buses. */
    #alone = false;

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

    /** The connector that leads on its own stream until it moves to the engine's (see {@link DirectLead}), with its client's id; or null. */
    #direct: (DirectLead & { readonly client: string }) | null = null;

    /** The pending watchdog: no `pong`/`up` by then, and the lock is stolen. */
    #watchdog: ReturnType<typeof setTimeout> | null = null;

    /** How many tries in a row failed to load the engine chunk (see {@link ENGINE_BACKOFF}). */
    #engineFailures = 0;

    /** This tab queued again right after its engine chunk failed, and has followed no engine since: it waits a backoff. */
    #retrying = false;

    /** Ends the backoff before the next try to load the engine chunk at once (a client's request), while it runs. */
    #kick: (() => void) | null = null;

    /** Set once the link let its lock and buses go (see {@link TabLink.vacate}): a connector that needs it again makes a new one. */
    #closed = false;

    /** This tab's clients all moved to another link while it leads this one for other tabs: it lets go once none is left. */
    #vacated = false;

    /** The epoch of this tab's engine while its chunk loads (retries included), or null: pings get a `wait` meanwhile. */
    #loading: string | null = null;

    /** Frozen while leading for no other tab: it keeps its stream until another tab speaks (see {@link TabLink.#thaw}). */
    #frozen = false;

    /** Create the link named `name` and queue for the lead; `engineOptions` are the leading connector's (hub, auth). */
    constructor(name: string, env: ShareEnvironment, engineOptions: Omit<HubEngineOptions, "send" | "room">) {
        this.#name = name;
        this.#env = env;
        this.#engineOptions = engineOptions;
        this.#channel = new env.BroadcastChannel(name);
        this.#inbox = new env.BroadcastChannel(inboxName(name, this.#tab));
        // [spec] Only well-formed messages are heard (`isTabsMessage`, `isBatch` here, the engine checks its own); and a leading
        // tab hears only clients from the bus: its own engine reaches its clients in-process, so an engine's message on the bus
        // (a stray or forged `up`, a stolen lead's last words) cannot make it follow another epoch and go deaf to its engine.
        this.#channel.onmessage = (event) => {
            if (this.#alone) return;
            const message = event.data as { t?: unknown } | null;
            if ((message?.t === "ping" || message?.t === "here") && this.#frozen) this.#thaw();
            else if (message?.t === "ping" && this.#leading && this.#leader === null && this.#loading !== null) this.#channel.postMessage({ t: "wait", e: this.#loading } satisfies ToTabs);
            else if (message?.t === "ping" || message?.t === "here") this.#leader?.heard(message);
            else if (!this.#leading && isTabsMessage(message)) this.#heardEngine(message);
        };
        this.#inbox.onmessage = (event) => {
            const batch: unknown = event.data;
            if (this.#leading || this.#alone || !isBatch(batch) || batch.e !== this.#epoch) return;
            this.#clearWatchdog();
            for (const message of batch.m) this.#deliver(message);
        };
        env.page?.addEventListener("pagehide", (event) => this.#hidden(event.persisted === true));
        env.page?.addEventListener("pageshow", (event) => {
            if (event.persisted === true) this.#shown(true);
        });
        // A frozen tab gets no stream events until it resumes, yet its BroadcastChannel handlers still run
        // (bench/hidden-tab.mjs): a frozen leader would answer every ping and starve every tab. It steps down as on
        // `pagehide`, keeping its clients, and queues again on `resume`; but while it serves no other tab it keeps its
        // stream (what the hub writes meanwhile waits for the resume, even on a hub without history) and steps down
        // only once another tab speaks (see #thaw).
        env.lifecycle?.addEventListener("freeze", () => {
            if (this.#leading && !this.#leader?.serving()) this.#frozen = true;
            else this.#hidden(true);
        });
        env.lifecycle?.addEventListener("resume", () => {
            this.#frozen = false;
            this.#shown(false);
        });
        this.#queue();
    }

    /** Whether the link let its lock and buses go (see {@link TabLink.vacate}). */
    get closed(): boolean {
        return this.#closed;
    }

    /**
     * This tab's clients moved to another link (their connectors' identifying credentials changed): unless a client of
     * this tab came back, let the lock, the buses and the engine go, so that a change of credentials leaves no link behind
     * (issue 49). A tab that leads the link serves its other tabs on until none is left, with no hand-over (their stream
     * goes on: see {@link Leadership}), then lets go; a tab that follows, or waits for the lock, lets go at once.
     */
    vacate(): void {
        if (this.#clients.size > 0 || this.#closed) return;
        this.#vacated = true;
        if (!this.#leader?.serving()) this.#close();
    }

    /** Let the lock and the buses go for good (see {@link TabLink.vacate}). */
    #close(): void {
        this.#closed = true;
        this.#queued?.abort();
        this.#queued = null;
        this.#inQueue = false;
        this.#clearWatchdog();
        // A tab that registered meanwhile follows the next engine at once (as after `pagehide`).
        if (this.#leading) this.#hidden(true);
        this.#channel.close();
        this.#inbox.close();
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
        this.#vacated = false;
        this.#clients.set(client.id, client);
        if (client.move(this.#port) && this.#epoch !== null) client.resync();
    }

    /** How this link's clients reach the engine. */
    readonly #port = {
        post: (client: ShareClient, message: ToEngine): void => {
            if (message.t === "bye") this.#clients.delete(client.id);
            this.#toEngine(message);
        },
        deadline: (): number => this.#engineOptions.timeout() + ANSWER_GRACE_MS,
    };

    /**
     * Lead with the lock the core claimed for this link (`claimLead`) instead of queueing for it; `direct`: the connector
     * that won it and connects on its own meanwhile. False when the lock is another link's (the credentials changed).
     */
    takeLead(lead: ClaimedLead, direct?: DirectLead & { readonly client: string }): boolean {
        if (lead.name !== this.#name) return false;
        this.#queued?.abort();
        this.#queued = null;
        this.#direct = direct ?? null;
        const request = new AbortController();
        // Stolen (this tab did not answer): as a lead of the link's own request that ends.
        lead.ended.catch(() => this.#lost(request));
        void this.#lead(lead);
        return true;
    }

    /** Queue for the lock; granted at once when no tab leads. */
    #queue(): void {
        const queued = (this.#queued = new AbortController());
        this.#inQueue = true;
        this.#request({ signal: queued.signal }, queued);
    }

    /** Steal the lock from a leader that did not answer (frozen, or discarded without releasing). */
    #steal(): void {
        this.#queued?.abort();
        this.#queued = null;
        this.#request({ steal: true }, new AbortController());
    }

    /**
     * Request the lock. A request that ends after its callback ran lost the lead (stolen) and queues again; one that
     * ends before, not by its own abort, was refused (an opaque origin, a document not fully active): re-requesting
     * would be refused again at once, in a loop of microtasks, so this tab runs its own engine instead.
     */
    #request(options: { steal?: boolean; signal?: AbortSignal }, request: AbortController): void {
        let granted = false;
        const lead = (): Promise<void> => {
            granted = true;
            return this.#lead();
        };
        let pending: Promise<unknown>;
        try {
            pending = this.#env.locks.request(this.#name, options, lead);
        } catch {
            pending = Promise.reject(new Error("refused"));
        }
        pending.catch(() => {
            if (granted || request.signal.aborted) this.#lost(request);
            else this.#goAlone();
        });
    }

    /** Web Locks refused this tab: lead its own clients, off the buses (an unshared connection, as without sharing). */
    #goAlone(): void {
        if (this.#alone) return;
        this.#alone = true;
        this.#inQueue = false;
        this.#clearWatchdog();
        this.#epoch = null;
        void this.#lead();
    }

    /**
     * This tab got the lock (`claimed`: the core's, see {@link TabLink.takeLead}): start the engine (the lazy chunk) and
     * announce it; hold the lock while the tab lives.
     *
     * Issue 49: this tab's streams no longer hear anything (the engine they followed is gone, or was never theirs): they
     * report it (the connector is `reconnecting`) until this tab's engine is up and they open again, never connected
     * and deaf. An engine chunk that does not load is retried (see {@link ENGINE_RETRIES_MS}), then reported to the
     * waiting clients, and the tab releases the lock and queues for it again at once: another waiting tab leads, and
     * this one stays electable (when the next leader goes, it leads, and tries at once). Granted again before it
     * followed another tab's engine, it waits a backoff ({@link ENGINE_BACKOFF}) before its next try, or less when a
     * client's request comes (its connector's backoff paces those): never a loop of loads.
     */
    async #lead(claimed?: ClaimedLead): Promise<void> {
        this.#leading = true;
        this.#inQueue = false;
        this.#clearWatchdog();
        for (const client of this.#clients.values()) client.down();
        const held = new Promise<void>((resolve) => (this.#stepDown = resolve));
        const stepDown = this.#stepDown;
        // The core's lock is released when this tab steps down, as a lock of its own would be (it marks the lead itself).
        if (claimed !== undefined) void held.then(claimed.release);
        else if (!this.#alone) {
            markLead(this.#env, this.#name, true);
            void held.then(() => markLead(this.#env, this.#name, false));
        }
        const epoch = newId();
        if (this.#retrying) {
            await new Promise<void>((resolve) => {
                const timer = setClampedTimeout(resolve, backoff(this.#engineFailures - 1, ENGINE_BACKOFF));
                this.#kick = () => (clearTimeout(timer), resolve());
            });
            this.#kick = null;
            if (this.#stepDown !== stepDown) return;
        }
        // The engine chunk may fail to load (offline, a deploy removed it): retried, then reported to this tab's waiting
        // clients, and the lead released for another tab.
        // A tab that pings meanwhile is told to wait: the retries take longer than its watchdog (PING_TIMEOUT_MS), and a
        // lock stolen from a tab whose engine then comes up made two leading tabs, each with a main stream.
        this.#loading = epoch;
        const { Leadership } = (await this.#loadEngine(() => this.#stepDown === stepDown)) ?? {};
        if (this.#loading === epoch) this.#loading = null;
        if (this.#stepDown !== stepDown) return;
        if (Leadership === undefined) {
            for (const client of this.#clients.values()) client.fail("the engine chunk of tab sharing did not load");
            this.#engineFailures++;
            this.#retrying = true;
            this.#leading = false;
            this.#stepDown = null;
            this.#epoch = null;
            stepDown?.();
            this.#upgradeDirect();
            // Web Locks refused (`#alone`): the next client's request leads again (see `#toEngine`).
            if (!this.#alone && !this.#closed) this.#queue();
            return;
        }
        this.#engineFailures = 0;
        this.#retrying = false;
        this.#leader = new Leadership({
            name: this.#name,
            env: this.#env,
            epoch,
            // The engine starts from the grant of a connector that led on its own: the cookie holds it.
            engine: { ...this.#engineOptions, seed: this.#direct?.seed && { ...this.#direct.seed, client: this.#direct.client } },
            post: (message) => {
                if (!this.#alone) this.#channel.postMessage(message);
            },
            own: (message, id) => {
                const client = this.#clients.get(id);
                if (client !== undefined) this.#toOwn(message, client);
                return client !== undefined;
            },
            tabs: (message) => this.#toOwn(message, null),
            used: (client) => {
                if (client !== this.#direct?.client) this.#upgradeDirect();
            },
            idle: () => {
                if (this.#vacated && this.#clients.size === 0) this.#close();
            },
            joined: () => {
                if (this.#frozen) queueMicrotask(() => this.#thaw());
            },
        });
        this.#toTabs({ t: "up", e: epoch });
        return held;
    }

    /** Load the engine chunk, retrying (see {@link ENGINE_RETRIES_MS}) while `current()`; undefined when it did not load. */
    async #loadEngine(current: () => boolean): Promise<Awaited<ReturnType<typeof loadEngine>> | undefined> {
        for (let attempt = 0; ; attempt++) {
            try {
                return await loadEngine();
            } catch {
                const wait = ENGINE_RETRIES_MS[attempt];
                if (wait === undefined || !current()) return undefined;
                await new Promise((resolve) => setClampedTimeout(() => resolve(null), wait));
            }
        }
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
        this.#leading = false;
        this.#stepDown?.();
        this.#stepDown = null;
        this.#leader?.close();
        this.#leader = null;
        this.#upgradeDirect();
    }

    /** The connector that led on its own moves to the engine (once): another client uses it, or this tab no longer leads. */
    #upgradeDirect(): void {
        const direct = this.#direct;
        this.#direct = null;
        if (direct !== null) queueMicrotask(() => direct.upgrade());
    }

    /** Another tab speaks to a frozen leader that kept its stream for itself: it steps down now, as on `freeze`. */
    #thaw(): void {
        if (!this.#frozen) return;
        this.#frozen = false;
        this.#hidden(true);
    }

    /**
     * `pagehide` (or `freeze`: `persisted`): clients say bye; a leader announces that it leaves, closes its real streams and releases the
     * lock at once (not when the tab is torn down), so that the next tab takes over as early as possible.
     */
    #hidden(persisted: boolean): void {
        if (this.#closed && this.#stepDown === null) return;
        // A page kept in the back/forward cache may come back: its clients stay (the leader drops them if it is evicted).
        if (!persisted) for (const client of this.#clients.values()) client.release();
        if (!this.#leading) return;
        if (this.#epoch !== null && this.#leader !== null) this.#post({ t: "down", e: this.#epoch, id: this.#leader.cursor() });
        this.#resign();
    }

    /**
     * The page came back from the back/forward cache (`refollow`: its clients follow whichever engine answers the ping,
     * the one they followed may be gone or have dropped them) or resumed from a freeze (its bus handler ran while frozen,
     * so its clients still follow the current engine, and re-following it would resubscribe them for nothing: an event
     * forwarded meanwhile would find their streams reconnecting). Either way: queue for the lead again, and ping.
     */
    #shown(refollow: boolean): void {
        if (this.#closed) return;
        if (refollow && !this.#leading) this.#epoch = null;
        if (this.#alone) {
            if (!this.#leading) void this.#lead();
            return;
        }
        if (!this.#leading && !this.#inQueue) this.#queue();
        this.#channel.postMessage({ t: "ping", c: "", k: this.#tab } satisfies ToEngine);
    }

    /** Send a client's message to the engine: in-process in the leading tab, else over the bus (with a ping when one waits for it). */
    #toEngine(message: ToEngine): void {
        if (this.#leading) {
            const leader = this.#leader;
            // An engine still loading misses nothing: clients re-send everything on its `up`. One that failed to load
            // tries again now (the connector's own backoff paces its requests).
            if (leader !== null) queueMicrotask(() => this.#leader === leader && leader.receive(message));
            else this.#kick?.();
            return;
        }
        if (this.#alone) {
            // Its own engine failed to load: try again (the clients re-send everything on its `up`).
            if (!this.#leading) void this.#lead();
            return;
        }
        // [spec] On the engine's inbox, which no other tab listens to: a tab's channel names never reach the others. Opened for
        // the message and closed (a post is delivered all the same), so that this tab hears no other tab's messages there.
        // Before this tab follows an engine there is none to post to: its `up` (or `pong`) makes the clients re-send.
        if (this.#epoch !== null) {
            const inbox = new this.#env.BroadcastChannel(inboxName(this.#name, "engine " + this.#epoch));
            inbox.postMessage({ ...message, k: this.#tab });
            inbox.close();
        }
        if (message.t !== "bye" && message.t !== "close") this.#expectEngine();
    }

    /** Hand the engine's message to this tab's `client` (null: to every one, an engine's `up`). */
    #toOwn(message: ToClient | ToTabs, client: ShareClient | null): void {
        // An event comes from a stream's own task (the hub's), not from inside a client's call: heard at once, unless
        // messages wait in the outbox, which it must not overtake (a stream's `open` state before its first event).
        if (message.t === "event" && this.#outbox.length === 0) return client?.receive(message);
        // The other messages answer a client's request: one microtask for every message of this task, heard in order.
        if (this.#outbox.push({ message, client }) > 1) return;
        queueMicrotask(() => {
            const outbox = this.#outbox;
            this.#outbox = [];
            for (const queued of outbox) {
                if (queued.client !== null) queued.client.receive(queued.message as ToClient);
                else this.#heardEngine(queued.message as ToTabs);
            }
        });
    }

    /** Post the engine's message to every tab: on the bus, after what waits for the hop (it must not overtake it), and to this tab's clients. */
    #toTabs(message: ToTabs): void {
        this.#post(message);
        this.#toOwn(message, null);
    }

    /** Post the engine's message on the bus, after what waits for the hop. */
    #post(message: ToTabs): void {
        this.#leader?.flush();
        if (!this.#alone) this.#channel.postMessage(message);
    }

    /** An engine's message to every tab (on the bus, or this tab's own engine's `up`). */
    #heardEngine(update: ToTabs): void {
        // An `up`, or a `pong` from an engine this tab has not followed yet (it opened after the `up`): follow it.
        // A `pong` after a `down` of the same engine: the `down` was not its own (a stray message), re-register with it.
        const refollow = update.t === "pong" && update.e === this.#epoch && this.#downHeard;
        if (update.t === "up" || (update.t === "pong" && update.e !== this.#epoch) || refollow) {
            if (update.e === this.#epoch && !refollow) return;
            this.#epoch = update.e;
            this.#retrying = false; // Another tab's engine serves: when it goes, this tab tries its own at once.
            this.#downHeard = false;
            this.#clearWatchdog();
            for (const client of this.#clients.values()) client.resync();
            return;
        }
        // The leading tab's engine is loading: ping again later instead of stealing (it releases the lock if it fails).
        if (update.t === "wait") {
            if (this.#watchdog === null) return;
            clearTimeout(this.#watchdog);
            this.#watchdog = setClampedTimeout(() => {
                this.#watchdog = null;
                this.#expectEngine();
            }, PING_TIMEOUT_MS);
            return;
        }
        // Another engine's traffic: the one followed may be a stray `up`'s; the real engine answers the ping with its epoch.
        if (update.e !== this.#epoch) return this.#expectEngine();
        this.#clearWatchdog();
        if (update.t === "room") {
            for (const client of this.#clients.values()) client.room = update.n;
            return;
        }
        if ((update.t === "probe" || update.t === "down") && typeof update.id === "string") for (const client of this.#clients.values()) client.advance(update.id);
        if (update.t === "probe") {
            if ([...this.#clients.values()].some((client) => client.registered())) this.#channel.postMessage({ t: "here", c: "", k: this.#tab } satisfies ToEngine);
            return;
        }
        if (update.t === "down") {
            this.#downHeard = true;
            // [spec] A leaving engine no longer answers: silence until the watchdog means take the lead; a `pong`, a false `down`.
            this.#expectEngine();
            for (const client of this.#clients.values()) client.down();
        }
    }

    /** One message of a batch on this tab's inbox: for the client it names, or every client it is for (an event). */
    #deliver(message: ToClient): void {
        if (message.t === "granted" || (message.t === "dropped" && message.c !== "")) return this.#clients.get(message.c)?.receive(message);
        for (const client of this.#clients.values()) client.receive(message);
    }

    /** Start the watchdog unless one runs: `ping` the engine; silence (no `pong`, no new engine's `up`) steals the lock. */
    #expectEngine(): void {
        if (this.#watchdog !== null || this.#leading || this.#alone) return;
        this.#channel.postMessage({ t: "ping", c: "", k: this.#tab } satisfies ToEngine);
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
