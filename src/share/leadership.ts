import { setClampedTimeout } from "../timers";
import { HubEngine, type HubEngineOptions } from "./engine";
import { clientOf, inboxName, type ToClient, type ToEngine, type ToTabs } from "./protocol";
import type { BroadcastChannelLike, ShareEnvironment } from "./tab-link";

/**
 * How often the leading tab asks the other tabs whether they are alive (`probe`); a tab that answered neither that
 * probe nor anything else by the next one is dropped (its clients' channels and streams, as on their `bye`). A live tab
 * answers from its message handler, which a hidden or frozen tab still runs; a discarded tab or a page evicted from
 * the back/forward cache never does. Bound: dropped within two periods of its last message (20 s), or, when the
 * browser throttles a hidden leader's timers to once a minute, within about two minutes.
 */
export const PROBE_MS = 10_000;

/** The message types clients send to the engine. */
const ENGINE_MESSAGES: ReadonlySet<string> = new Set(["hello", "auth", "open", "close", "bye", "ping", "here"]);

/** Another tab, as the leading tab knows it: its inbox, when it was last heard, what waits for the next hop. */
interface RemoteTab {
    readonly inbox: BroadcastChannelLike;
    heard: number;
    pending: ToClient[];
}

/** What the leadership needs from its tab's link. */
export interface LeadershipHost {
    /** The link's name. */
    readonly name: string;
    /** The browser APIs. */
    readonly env: ShareEnvironment;
    /** This engine's epoch. */
    readonly epoch: string;
    /** The leading connector's hub and auth options. */
    readonly engine: Omit<HubEngineOptions, "send" | "room">;
    /** Post on the link's bus (every tab hears it). */
    post(message: ToTabs): void;
    /** Hand a message to this tab's client `id`; false when it is not one of this tab's. */
    own(message: ToClient, id: string): boolean;
    /** Hand the engine's message for every tab to this tab's clients too. */
    tabs(message: ToTabs): void;
    /** Client `client` sent the engine a message (a connector of this tab that leads on its own then moves to the engine). */
    used(client: string): void;
    /** No other tab's client is registered any more (its `bye`, or dropped by the probe). */
    idle(): void;
    /** Another tab's client registers with the engine (its first message). */
    joined(): void;
}

/**
 * The leading tab's side of the link (lazy chunk, with the {@link HubEngine}): the engine, the other tabs' clients and
 * their inboxes, the batching of what goes to each tab, and the liveness probe.
 */
export class Leadership {
    /** The engine. */
    readonly #engine: HubEngine;

    /** The engine's inbox, where the other tabs' clients post to it. */
    readonly #inbox: BroadcastChannelLike;

    /** The other tabs' clients the engine heard from (until their `bye`), with their tab. */
    readonly #remote = new Map<string, string>();

    /** The other tabs with a registered client, by tab id. */
    readonly #tabs = new Map<string, RemoteTab>();

    /** Whether a hop is queued to post the other tabs' pending messages. */
    #hopQueued = false;

    /** The room the engine told last (see the `room` message), or null. */
    #room: number | null = null;

    /** The liveness probe's timer, while another tab is registered. */
    #prober: ReturnType<typeof setTimeout> | null = null;

    /** When the last probe was posted: a tab not heard since is dropped at the next. */
    #probedAt = 0;

    /** Set by {@link Leadership.close}. */
    #closed = false;

    /** Start the engine and listen on its inbox. */
    constructor(private readonly host: LeadershipHost) {
        this.#engine = new HubEngine({
            ...host.engine,
            send: (message, to) => this.#send(message, to),
            room: (n) => this.#toTabs({ t: "room", e: host.epoch, n: (this.#room = n) }),
        });
        this.#inbox = new host.env.BroadcastChannel(inboxName(host.name, "engine " + host.epoch));
        this.#inbox.onmessage = (event) => this.heard(event.data);
    }

    /** A message of this tab's own client. */
    receive(message: ToEngine): void {
        this.#hear(message);
    }

    /** A client's message for the engine. */
    #hear(message: ToEngine): void {
        if (message.t !== "bye" && message.t !== "ping") this.host.used(message.c);
        this.#engine.receive(message);
    }

    /** Whether another tab's client is registered with the engine. */
    serving(): boolean {
        return this.#remote.size > 0;
    }

    /** The engine's cursor. */
    cursor(): string | null {
        return this.#engine.cursor();
    }

    /** Stop: post what waits, close the engine, the inboxes and the probe. */
    close(): void {
        this.flush();
        this.#closed = true;
        this.#engine.close();
        this.#inbox.close();
        for (const tab of this.#tabs.values()) tab.inbox.close();
        this.#tabs.clear();
        this.#remote.clear();
        if (this.#prober !== null) clearTimeout(this.#prober);
    }

    /**
     * Send the engine's message to the clients it is for (`to`, or the one it names): this tab's in-process, another
     * tab's on its inbox. What goes to another tab waits for a task hop and goes in one message per tab: the events of
     * one task (the browser parses a network chunk of a stream in one task) cost one structured clone and one delivery
     * per tab that wants them; a tab that wants none of them gets nothing, and a single tab pays no clone at all. A
     * microtask would not batch them: the browser runs the microtasks after each event's handler.
     */
    #send(message: ToClient, to?: readonly string[]): void {
        const single = message.t === "granted" || message.t === "dropped" ? message.c : message.t === "state" || message.s !== undefined ? clientOf(message.s!) : null;
        for (const id of single === null ? (to ?? []) : [single]) if (!this.host.own(message, id)) this.#toRemote(message, id);
    }

    /** Queue the engine's message for client `id` of another tab, for the next hop; nothing for a client not registered. */
    #toRemote(message: ToClient, id: string): void {
        const tab = this.#tabs.get(this.#remote.get(id) ?? "");
        if (tab === undefined || tab.pending.at(-1) === message) return;
        tab.pending.push(message);
        if (this.#hopQueued) return;
        this.#hopQueued = true;
        (this.host.env.hop ?? ((task: () => void) => setTimeout(task, 0)))(() => this.flush());
    }

    /** Post a message to every tab (on the bus, after what waits for the hop) and to this tab's clients. */
    #toTabs(message: ToTabs): void {
        this.#post(message);
        this.host.tabs(message);
    }

    /** Post on the bus, after what waits for the hop (it must not overtake it). */
    #post(message: ToTabs): void {
        this.flush();
        this.host.post(message);
    }

    /** Post each other tab's waiting messages in one message on its inbox. */
    flush(): void {
        this.#hopQueued = false;
        for (const tab of this.#tabs.values()) {
            if (tab.pending.length === 0) continue;
            const m = tab.pending;
            tab.pending = [];
            tab.inbox.postMessage({ t: "batch", e: this.host.epoch, m });
        }
    }

    /** Another tab's client's message (`k`: its tab), on the engine's inbox (`ping` and `here`: on the bus). */
    heard(data: unknown): void {
        const raw = data as { t?: unknown; c?: unknown; k?: unknown } | null;
        if (this.#closed || !ENGINE_MESSAGES.has(raw?.t as string) || typeof raw!.c !== "string" || typeof raw!.k !== "string") return;
        const message = raw as ToEngine & { k: string };
        const { c, k } = message;
        const { env, name, epoch } = this.host;
        let tab = this.#tabs.get(k);
        if (c !== "" && message.t !== "bye" && this.#remote.get(c) !== k) {
            if (tab === undefined) {
                this.#tabs.set(k, (tab = { inbox: new env.BroadcastChannel(inboxName(name, k)), heard: 0, pending: [] }));
                // A new tab learns the room before its first whisper stream (its connector reports `limit` past it).
                if (this.#room !== null) this.#post({ t: "room", e: epoch, n: this.#room });
            }
            this.#remote.set(c, k);
            this.#probe(false);
            this.host.joined();
        }
        if (tab !== undefined) tab.heard = Date.now();
        else if (message.t === "here") {
            // A tab this engine dropped (or never knew) says it is alive: its clients register again.
            const inbox = new env.BroadcastChannel(inboxName(name, k));
            inbox.postMessage({ t: "batch", e: epoch, m: [{ t: "dropped", c: "" }] });
            inbox.close();
        }
        if (message.t === "bye" && this.#remote.delete(c) && this.#remote.size === 0) queueMicrotask(() => this.host.idle());
        // [spec] Answered here, not by a timer: a throttled hidden leader still answers at once.
        if (message.t === "ping") return this.#post({ t: "pong", e: epoch });
        if (message.t !== "here") this.#hear(message);
    }

    /**
     * The liveness probe (see {@link PROBE_MS}); `now`: the timer fired. Drops each other tab not heard since the last
     * probe: the engine forgets its clients (as on their `bye`), and the tab is told, should it still be alive but slow,
     * to register again. Runs while another tab is registered.
     */
    #probe(now: boolean): void {
        if (!now) {
            if (this.#prober === null) this.#prober = setClampedTimeout(() => this.#probe(true), PROBE_MS);
            return;
        }
        this.#prober = null;
        if (this.#closed) return;
        for (const [id, tab] of this.#tabs) {
            if (tab.heard >= this.#probedAt) continue;
            for (const [c, k] of [...this.#remote]) {
                if (k !== id) continue;
                this.#remote.delete(c);
                this.#engine.receive({ t: "bye", c });
                tab.pending.push({ t: "dropped", c });
            }
            this.flush();
            tab.inbox.close();
            this.#tabs.delete(id);
        }
        if (this.#remote.size === 0) this.host.idle();
        if (this.#tabs.size === 0) return;
        this.#probedAt = Date.now();
        this.#post({ t: "probe", e: this.host.epoch, id: this.#engine.cursor() });
        this.#probe(false);
    }
}
