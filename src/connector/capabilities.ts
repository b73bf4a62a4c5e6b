import type { AuthResponse } from "../auth/auth-response";
import type { MercureChannel } from "../channel/mercure-channel";
import { loadFailed } from "../error-messages";
import type { MercureError } from "../errors";
import type { LazyChunk } from "../lazy-chunk";
import type { Platform } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";
import type { DebugLogger } from "./debug-log";

/** What one granted auth answer tells the capabilities. */
export interface Grant {
    /** The joined channels it granted (not denied, not evicted), in batch order. */
    readonly granted: readonly string[];
    /** The parsed answer: keys, topic prefix, `client_events`. */
    readonly response: AuthResponse;
    /** The platform the answer came through. */
    readonly platform: Platform;
    /** Report `error` on the joined channel `name`, once the connector's state is settled. */
    readonly report: (name: string, error: MercureError) => void;
}

/**
 * The one seam between the connector and a capability (presence, encrypted channels, whispers): the connector
 * tells each loaded capability what happened to the channels, the auth and the stream, in load order, and asks
 * them what the stream needs; it knows nothing else of them. Every hook is optional.
 */
export interface Capability {
    /** A channel was joined (created by its kind); a capability loaded later hears every joined channel first. */
    joined?(channel: MercureChannel): void;
    /** A joined channel was left or evicted. */
    dropped?(name: string): void;
    /** `disconnect()`: forget everything kept for the joined channels, which stay joined. */
    cleared?(): void;
    /** An auth request for the batch leaves. */
    authStarted?(): void;
    /** The batch's auth failed, or there was nothing to authorize. */
    authFailed?(): void;
    /** An auth answer granted channels, before the stream for them opens; a capability loaded later hears the last one. */
    authorized?(grant: Grant): void;
    /** These channels (every one when undefined) are no longer carried by a stream that serves. */
    streamLost?(channels?: Iterable<string>): void;
    /** The open stream serves `channels`. */
    announced?(channels: ReadonlySet<string>, platform: Platform | null, signal: AbortSignal, log: DebugLogger | null): void;
    /** The `match_urlpattern` values a stream about to open with `names` on `topics` (same order) needs. */
    patterns?(hub: URL, names: readonly string[], topics: readonly string[]): string[];
    /** An `event: mercure` subscription event of the main stream: its `data` and id (`""` when none). */
    subscription?(data: unknown, id: string): void;
    /** How many hub connections of the connection budget it holds besides the main stream (whisper streams). */
    connections?(): number;
}

/**
 * A capability loaded on first use: its chunk (a module whose `create` builds it for a connector), and which joined
 * channels need it, so that its download starts at the join, beside the auth request, instead of after it.
 */
export interface CapabilitySlot<T extends Capability = Capability> {
    /** Whether the joined channel `name` needs it (false for one loaded only on a call, such as whispers). */
    readonly needs: (name: string) => boolean;
    /** What it is called in a `load_failed` message: "presence", "encrypted channel", "whisper". */
    readonly part: string;
    /** Its chunk. */
    readonly chunk: LazyChunk<{ create(host: ConnectorHost): T }>;
    /**
     * Ask for what the chunk loads next (the chunks and libraries it imports), in the tick its own download starts, so
     * that none waits for it to arrive (issue 53: no waterfall on the first event's path); idempotent.
     */
    readonly alongside?: () => void;
}

/**
 * The connector's capabilities: loaded on first use through their slots, told in load order. A slot's download starts
 * when a joined channel needs it; the refresh waits for the downloads in flight ({@link Capabilities.ready}) before it
 * acts on an auth answer, so that a capability hears the answer and the stream that follow. A download that fails
 * leaves the channels that need it, each with `load_failed`; joining one again downloads it again.
 */
export class Capabilities {
    /** Each loaded slot's capability, in load order. */
    readonly #built = new Map<CapabilitySlot, Capability>();

    /** The downloads in flight, settled (never rejecting) once the failure is handled. */
    readonly #loading = new Map<CapabilitySlot, Promise<void>>();

    /** The last granted auth answer since the last `cleared`: told to a capability that loads later. */
    #grant: Grant | null = null;

    /** The connector whose capabilities these are. */
    readonly #host: () => ConnectorHost;

    /** The slots that joined channels may need. */
    readonly #slots: readonly CapabilitySlot[];

    /** The capabilities of the connector `host` (read at first use); `slots`: those that joined channels may need. */
    constructor(host: () => ConnectorHost, slots: readonly CapabilitySlot[]) {
        this.#host = host;
        this.#slots = slots;
    }

    /** Tell every loaded capability through `hook` (and remember a grant or its clearing for the ones to come). */
    tell<K extends keyof Capability>(hook: K, ...args: Parameters<NonNullable<Capability[K]>>): void {
        if (hook === "authorized") this.#grant = args[0] as Grant;
        if (hook === "cleared") this.#grant = null;
        for (const capability of this.#built.values()) (capability[hook] as ((...given: typeof args) => void) | undefined)?.(...args);
    }

    /**
     * The connector holds no grant any more (it wound down: no channel left to carry, and nothing renews the cookie of
     * the last answer): a capability loaded later hears none, and waits for the next answer. Told the old one, it would
     * act on a cookie about to expire (the simulation's seed 7084: a whisper stream opened on it 76 ms before its end,
     * which the hub closed, reported as `stream_error`).
     */
    forgetGrant(): void {
        this.#grant = null;
    }

    /** A channel was joined: tell the loaded capabilities, and start the download of each one it needs. */
    joined(channel: MercureChannel): void {
        this.tell("joined", channel);
        for (const slot of this.#slots) if (!this.#built.has(slot) && slot.needs(channel.name)) this.start(slot);
    }

    /** The capability of `slot` if it is loaded, else null. */
    get<T extends Capability>(slot: CapabilitySlot<T>): T | null {
        return (this.#built.get(slot) as T | undefined) ?? null;
    }

    /**
     * The capability of `slot`: at once when its chunk has arrived, else once it has (built then inside the connector's
     * settle); rejects with the download's error.
     */
    use<T extends Capability>(slot: CapabilitySlot<T>): T | Promise<T> {
        const built = this.get(slot);
        if (built !== null) return built;
        const module = slot.chunk.loaded();
        if (module !== undefined) return this.#host().settle(() => this.#build(slot, module));
        slot.alongside?.();
        return slot.chunk().then((module) => this.get(slot) ?? this.#host().settle(() => this.#build(slot, module)));
    }

    /** The downloads in flight, settled once each is built or its failure handled; null when none is. */
    ready(): Promise<unknown> | null {
        return this.#loading.size === 0 ? null : Promise.all(this.#loading.values());
    }

    /** The `match_urlpattern` values of every loaded capability for a stream about to open (see {@link Capability.patterns}). */
    patterns(hub: URL, names: readonly string[], topics: readonly string[]): string[] {
        return [...this.#built.values()].flatMap((capability) => capability.patterns?.(hub, names, topics) ?? []);
    }

    /** The hub connections the loaded capabilities hold besides the main stream. */
    connections(): number {
        let sum = 0;
        for (const capability of this.#built.values()) sum += capability.connections?.() ?? 0;
        return sum;
    }

    /**
     * Start the download of `slot` (once at a time), awaited by {@link Capabilities.ready}; a failure leaves the channels
     * that need it. The download is no longer in flight once it failed, before the channels hear it: a channel their
     * `error()` callback joins again downloads anew instead of waiting for a download that is over.
     */
    start(slot: CapabilitySlot): void {
        if (this.#loading.has(slot)) return;
        const result = this.use(slot);
        if (!(result instanceof Promise)) return;
        const over = (): void => {
            if (this.#loading.get(slot) === settled) this.#loading.delete(slot);
        };
        const settled: Promise<void> = result.then(over, (cause: unknown) => {
            over();
            this.#host().settle(() => this.#failed(slot, cause));
        });
        this.#loading.set(slot, settled);
    }

    /** Build `slot`'s capability from its module, once, and tell it the joined channels and the last grant. */
    #build<T extends Capability>(slot: CapabilitySlot<T>, module: { create(host: ConnectorHost): T }): T {
        const existing = this.get(slot);
        if (existing !== null) return existing;
        const capability = module.create(this.#host());
        this.#built.set(slot, capability);
        for (const name of this.#host().registry.names()) {
            const channel = this.#host().registry.get(name);
            if (channel !== undefined) capability.joined?.(channel);
        }
        if (this.#grant !== null) capability.authorized?.(this.#grant);
        return capability;
    }

    /** [spec] issue 32: `slot`'s download failed: the joined channels that need it leave, each with `load_failed`. */
    #failed(slot: CapabilitySlot, cause: unknown): void {
        const needing = this.#host().registry.names().filter(slot.needs);
        for (const name of needing) {
            this.#host().evict(name, loadFailed(name, slot.part, cause, "the channel was left, and joining it again downloads the code again"));
        }
        if (needing.length > 0) this.#host().scheduleRefresh();
    }
}
