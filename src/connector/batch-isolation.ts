import type { BatchAuth } from "../auth/batch-auth";
import { interpretBatch } from "../auth/batch-outcome";
import { authDenied, authRejected, authRejectedNewcomer } from "../error-messages";
import { failingAlone, isolatedError } from "../auth/isolation";
import { ReconnectTimer } from "../status/reconnect-timer";
import type { Platform } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";

/** The backoff of retrying such channels alone: 5 s doubling up to 5 minutes. */
const ISOLATED_RETRY = { min: 5_000, max: 300_000 };

/**
 * Issue 30: one channel whose auth fails on its own (Laravel answers 5xx to every batch holding a
 * `private-encrypted-` channel when `encryption_key` is missing) must not keep the others from their stream. After
 * the second 5xx in a row ({@link BatchAuth.shouldIsolate}), the batch is halved until the failing channels stand
 * alone; they report `auth_failed` and are retried alone with backoff while the others are authorized at once, and
 * they rejoin the batch when their own auth passes. A lazy chunk, with the search: the refresh cycle loads it on the
 * first batch that needs it.
 *
 * Issue 49: each isolated channel is retried in a request of its own, only while it is joined (leaving it cancels its
 * retry; no request ever goes out without a channel), and its answer is read as a batch's would be for a channel
 * joined anew: a 5xx or a network error keeps it isolated (it was reported once, when isolated), a 4xx other than a
 * 419 or a denial leaves it with its error once, a 419 (the session's, not the channel's) is reported on it at each
 * try, and a grant brings it back into the batch.
 */
export class BatchIsolation {
    /** The connector: its batch auth (with the `isolated` channels it leaves out of every batch), registry and state changes. */
    readonly #host: ConnectorHost;

    /** The next try of the isolated channels, with its backoff. */
    readonly #retry = new ReconnectTimer(ISOLATED_RETRY);

    /** The last granted answer when a failed batch whose parts all passed was last asked for again (see `isolate`). */
    #retriedAfter: object | null | undefined = undefined;

    /** Set while a try runs: a timer that fires meanwhile leaves the next try to its end (one request per channel at a time). */
    #trying = false;

    /** Isolate for `host`. */
    constructor(host: ConnectorHost) {
        this.#host = host;
    }

    /**
     * After a failed batch of `names`: isolate the channels that fail alone; false when none stands out. When every part
     * passed alone (the server's bad moment, simulation seed 14097), the batch is asked for again at once (true), once
     * per granted answer (a batch that fails again waits for its backoff): the parts' answers left the hub cookie with
     * the last part's grant, and a stream that reconnected on it would be deaf to the others while saying subscribed.
     */
    async isolate(names: readonly string[], platform: Platform, generation: number): Promise<boolean> {
        const host = this.#host;
        const failing = await failingAlone(names, (part) => host.auth.request(part, platform, host.signal(), true));
        if (generation !== host.generation() || failing === null || failing.size === names.length) return false;
        if (failing.size === 0) {
            if (this.#retriedAfter === host.auth.response) return false;
            this.#retriedAfter = host.auth.response;
            host.scheduleRefresh();
            return true;
        }
        for (const [name, status] of failing) host.auth.isolated.set(name, status);
        host.settle(() => host.reportEach(failing.keys(), (name) => isolatedError(name, platform.authEndpoint, failing.get(name)!)));
        this.#retryAlone(platform, generation);
        host.scheduleRefresh();
        return true;
    }

    /** Try the isolated channels alone after a backoff, while any is left. */
    #retryAlone(platform: Platform, generation: number): void {
        this.#retry.schedule(() => void this.#tryAlone(platform, generation));
    }

    /**
     * Try each isolated channel still joined in a request of its own, and act on its answer (see the class); after a
     * 2xx answer (its grant, or its denial: the answer set the cookie either way), the batch is authorized again.
     */
    async #tryAlone(platform: Platform, generation: number): Promise<void> {
        const host = this.#host;
        const { isolated } = host.auth;
        if (this.#trying) return;
        this.#trying = true;
        let answered = false;
        try {
            for (const name of [...isolated.keys()]) {
                if (!host.registry.has(name)) isolated.delete(name);
                if (!isolated.has(name)) continue;
                const result = await host.auth.request([name], platform, host.signal(), true);
                // Left (or disconnected) while it was asked: its answer is no one's.
                if (generation !== host.generation()) return;
                if (!isolated.has(name) || !host.registry.has(name)) continue;
                const outcome = interpretBatch([name], result, null, () => true);
                if (outcome.kind === "failed" || outcome.kind === "aborted") continue;
                if (outcome.kind === "rejected") {
                    host.settle(() => host.reportEach([name], () => authRejected(name, outcome.status, platform.authEndpoint, outcome.detail)));
                    continue;
                }
                isolated.delete(name);
                if (outcome.kind === "newcomers_rejected") {
                    host.settle(() => host.evict(name, authRejectedNewcomer(name, outcome.status, [name], outcome.detail)));
                    continue;
                }
                if (outcome.denied.length > 0) host.settle(() => host.evict(name, authDenied(name)));
                // Granted or denied, the 2xx answer set the browser's hub cookie to this request's grant alone: the batch
                // authorizes the others again (the simulation's seed 12294: a denial left the whispers of the others
                // refused with 403 on that cookie, and a native reconnect of the stream deaf).
                answered = true;
            }
        } finally {
            this.#trying = false;
        }
        if (answered) host.scheduleRefresh();
        if (isolated.size > 0) this.#retryAlone(platform, generation);
        else this.#retry.reset();
    }

    /** Stop retrying (no channel left, or `disconnect()`). */
    reset(): void {
        this.#retry.reset();
    }
}
