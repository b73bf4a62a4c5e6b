import type { AuthResult } from "../auth/auth-client";
import type { MercureError } from "../errors";
import * as failures from "../error-messages";
import type { Platform } from "../transport/platform";
import { lazyChunk } from "../lazy-chunk";
import type { BatchIsolation } from "./batch-isolation";
import type { ConnectorHost } from "./connector-host";
import { RefreshScheduler } from "./refresh-scheduler";
import { MAX_CHANNELS } from "./options";
import { RESUME } from "./capability-slots";

/**
 * The connector's refresh: locate the hub, resolve its platform, authorize the joined channels in one batch, then act
 * on the answer (evictions, the cookie's renewal, the capabilities, the stream). Joins and leaves coalesce into one
 * refresh at a time plus one trailing run ({@link RefreshScheduler}); channels whose auth fails alone are found and
 * retried alone ({@link BatchIsolation}). A refresh that throws where nothing should (a broken EventSource polyfill, a
 * fetch wrapper that throws synchronously) is reported on every channel and retried with backoff, never an unhandled
 * rejection.
 */
/** Loads the search for channels whose auth fails alone on first need (issue 30): a lazy chunk. */
const loadIsolation = /* @__PURE__ */ lazyChunk(() => import("./batch-isolation"));

export class RefreshCycle {
    /** The connector this refresh works for. */
    readonly #host: ConnectorHost;

    /** Coalesces the requests into one running refresh plus one trailing run. */
    readonly #scheduler: RefreshScheduler;

    /** Channels whose auth fails alone (issue 30): found, reported, left out of the batch and retried alone; loaded at first need. */
    #isolation: BatchIsolation | null = null;

    /** The topic prefix of the last granted batch (the streams' topics are named with it). */
    #topicPrefix: string | null = null;

    /** Refresh for `host`. */
    constructor(host: ConnectorHost) {
        this.#host = host;
        this.#scheduler = new RefreshScheduler(
            () => this.#run(host.generation()),
            (error) =>
                host.settle(() => {
                    host.reportEach(host.registry.names(), (name) => failures.unexpectedFailure(name, error));
                    host.capabilities.tell("authFailed");
                    host.backOff();
                }),
        );
    }

    /** Stop retrying the channels whose auth fails alone (no channel left, or `disconnect()`). */
    resetIsolation(): void {
        this.#isolation?.reset();
    }

    /** After a failed batch of `names`: isolate the channels that fail alone (see {@link BatchIsolation}); false when none stands out. */
    async #isolate(names: readonly string[], platform: Platform, generation: number): Promise<boolean> {
        const host = this.#host;
        const { BatchIsolation } = await loadIsolation();
        this.#isolation ??= new BatchIsolation(host);
        return this.#isolation.isolate(names, platform, generation);
    }

    /** Ask for a refresh: in the next microtask, or one trailing run when one is running. */
    request(): void {
        this.#scheduler.request();
    }

    /** Null when no refresh is queued or running; else a promise that resolves once none is. */
    running(): Promise<void> | null {
        return this.#scheduler.running();
    }

    /** Forget queued and running refreshes (`disconnect()`). */
    reset(): void {
        this.#scheduler.reset();
    }

    /** Authorize the current channel set, then open (or keep) the stream that carries it. */
    async #run(generation: number): Promise<void> {
        const host = this.#host;
        const found = host.hub.locate(host.hubOptions) || (await host.hub.prepare(host.hubOptions, host.signal(), host.log));
        if (found !== true && found !== false) {
            host.settle(() => {
                host.reportEach(host.registry.names(), (name) => (found instanceof Error ? failures.platformFailure(name, found) : found(name)));
                if (found instanceof Error && found.status !== undefined) host.status.set("failed");
                else host.backOff();
            });
        }
        if (found !== true) return;
        // Issue 53: a tab that leads alone and whose channels change first hands over to its share client (see
        // `HubLocator.handover`); this refresh runs again once it has.
        const handover = host.hub.handover(host.registry.names());
        if (handover !== null) return void handover.then(() => generation === host.generation() && this.#scheduler.request());
        this.#scheduler.captured(); // The joins made while locating are in this batch.
        const batch = host.settle(() => this.#prepareBatch());
        if (batch === null) host.capabilities.tell("authFailed");
        if (batch === null || generation !== host.generation()) return;
        host.log?.("auth", { channels: batch.names });
        const requestedAt = Date.now();
        host.capabilities.tell("authStarted");
        const request = host.auth.request(batch.names, batch.platform, host.signal());
        // Issue 53's navigation: the page's first batch may open its stream beside the request (see `ResumeCapability.early`).
        if ((host.hubOptions as { resumeAcrossPages?: unknown }).resumeAcrossPages && host.auth.granted === null) {
            void Promise.resolve(host.capabilities.use(RESUME)).then((resume) => resume.early(batch.names, batch.platform, generation, request), () => undefined);
        }
        const result = await request;
        if (generation !== host.generation()) return;
        if (host.auth.shouldIsolate(batch.names, result) && (await this.#isolate(batch.names, batch.platform, generation))) return;
        // Issue 31: an auth request sent before the tabs' election answered opens no stream before it has, and none
        // where another tab leads after all: the refresh runs again, through the share client (see `HubLocator.election`).
        const election = host.hub.election();
        if (election !== null && (await election, generation !== host.generation())) return;
        if (host.hub.platform !== batch.platform) return this.#scheduler.request();
        // Issue 32: the capabilities the batch's channels need (presence, encrypted) downloaded beside the auth request.
        const loading = host.capabilities.ready();
        if (loading !== null && (await loading, generation !== host.generation())) return;
        host.settle(() => this.#applyAuthResult(batch.names, result, batch.platform, requestedAt));
    }

    /**
     * Resolve the platform at first use (on failure report and set `failed`), evict the channels past the
     * 100th with an explicit error, and report `connecting`; the names to authorize, or null for nothing to do.
     */
    #prepareBatch(): { names: string[]; platform: Platform } | null {
        const host = this.#host;
        let platform = host.hub.platform;
        try {
            platform ??= host.hub.resolve(host.hubOptions, host.dispatcher, host.log);
        } catch (error) {
            host.reportEach(host.registry.names(), (name) => failures.platformFailure(name, error));
            host.status.set("failed");
            return null;
        }
        host.wake.start();
        host.reconnect.cancel();
        const joined = host.registry.names();
        for (const name of joined.splice(MAX_CHANNELS)) host.evict(name, failures.channelLimit(name, MAX_CHANNELS));
        for (const name of host.auth.isolated.keys()) if (!host.registry.has(name)) host.auth.isolated.delete(name);
        if (host.auth.isolated.size === 0) this.resetIsolation(); // The last isolated channel was left: its retry goes with it.
        const names = joined.filter((name) => !host.auth.isolated.has(name));
        if (names.length === 0) {
            // Only channels whose auth fails alone are left: their retry brings them back; the stream of the others goes.
            if (host.auth.isolated.size === 0) host.windDown();
            else this.#carryNothing();
            return null;
        }
        if (host.streams.latest() === null) host.status.set(host.everConnected() ? "reconnecting" : "connecting");
        return { names, platform };
    }

    /**
     * Nothing granted is left to carry (the others were denied, or left), but channels whose auth fails alone wait for
     * their retry (issue 30): close the streams and report `reconnecting`, and leave the retries running. (Winding down
     * would stop them, and leave those channels joined and unconnected for good; keeping the stream would keep the
     * channels left subscribed on the hub, a presence member who left: issue 49, both found by the simulation.)
     */
    #carryNothing(): void {
        const host = this.#host;
        const carried = host.streams.latest()?.channels ?? [];
        host.streams.closeAll();
        host.lose(carried);
    }

    /** Act on what the auth answer means for the batch (see `BatchAuth.answer`): evictions first. */
    #applyAuthResult(names: string[], result: AuthResult, platform: Platform, requestedAt: number): void {
        const host = this.#host;
        const outcome = host.auth.answer(names, result, platform.authEndpoint, (name) => host.registry.has(name));
        host.log?.("auth result", outcome.kind === "granted" ? { granted: outcome.granted, denied: outcome.denied } : { outcome: outcome.kind });
        for (const [name, error] of outcome.evict ?? []) host.evict(name, error);
        if (outcome.kind === "granted") {
            // With `hubToken`, the token's `exp` may come before the cookie's: the renewal follows the earlier.
            host.cookieRefresh.authorized(requestedAt, platform.hubToken?.lifetime(requestedAt, outcome.response.expiresIn) ?? outcome.response.expiresIn);
            // [spec] laravel-mercure §6.4, §7.3: keys and whisper streams follow every auth, before the stream opens and counts them.
            this.#topicPrefix = outcome.response.topicPrefix;
            const report = (name: string, error: MercureError) => host.reportEach([name], () => error);
            host.capabilities.tell("authorized", { granted: outcome.granted, response: outcome.response, platform, report });
            if (outcome.granted.length > 0) host.openStream(outcome.granted, outcome.response.topicPrefix, platform);
            else if (host.auth.isolated.size === 0) host.windDown();
            else this.#carryNothing();
            return;
        }
        if (outcome.kind === "newcomers_rejected") return this.#scheduler.request(); // A trailing run authorizes the others again.
        if (outcome.failure !== undefined) {
            host.reportEach(names, outcome.failure);
            host.backOff();
        }
        this.#narrow(platform);
        host.capabilities.tell("authFailed");
    }

    /**
     * After a failed batch: a stream that still carries channels left since (the batch was the leave's) is replaced by
     * one without them, on the cookie it has, which grants more than it then carries: until the retry's auth passes, a
     * presence channel left must not keep its member on the hub (issue 49's simulation: the last channel of a tab failing
     * alone, its presence channel left meanwhile). The channels still joined stay carried as they were.
     */
    #narrow(platform: Platform): void {
        const host = this.#host;
        const latest = host.streams.latest();
        if (latest === null) return;
        // A stream the connector opened on its own before it moved to the tabs' engine is a second one beside the
        // engine's, whose stream for a tab whose auth fails ends: it ends as that one would (the seed-210 simulation).
        if (latest.via !== platform.EventSource) return this.#carryNothing();
        const kept = [...latest.channels].filter((name) => host.registry.has(name));
        if (kept.length === latest.channels.size) return;
        if (kept.length === 0) return host.streams.closeAll();
        // A new stream would present the hub cookie of another connector of this browser, whose auth request left after
        // this one's (see `BatchAuth.cookieReplaced`), without this one's grants: it carries nothing until the retry's auth.
        if (host.auth.cookieReplaced(platform)) return this.#carryNothing();
        host.openStream(kept, this.#topicPrefix, platform);
    }
}
