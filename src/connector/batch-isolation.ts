import type { AuthResult } from "../auth/auth-client";
import type { BatchAuth } from "../auth/batch-auth";
import type { MercureError } from "../errors";
import { failingAlone, isolatedError } from "../auth/isolation";
import { ReconnectTimer } from "../status/reconnect-timer";
import type { Platform } from "../transport/platform";

/** The backoff of retrying such channels alone: 5 s doubling up to 5 minutes. */
const ISOLATED_RETRY = { min: 5_000, max: 300_000 };

/** What the isolation needs of the connector. */
export interface IsolationHost {
    /** The connector's batch auth: its request, and the `isolated` channels it leaves out of every batch. */
    readonly auth: BatchAuth;
    /** Cancels requests on `disconnect()`. */
    signal(): AbortSignal;
    /** Whether `generation` is still the connector's (no `disconnect()` since). */
    current(generation: number): boolean;
    /** Report `error(name)` on each named channel, in a settled state. */
    report(names: Iterable<string>, error: (name: string) => MercureError): void;
    /** Authorize the joined channels (without the isolated ones) and open their stream. */
    refresh(): void;
}

/**
 * Issue 30: one channel whose auth fails on its own (Laravel answers 5xx to every batch holding a
 * `private-encrypted-` channel when `encryption_key` is missing) must not keep the others from their stream. After
 * the second 5xx in a row ({@link BatchAuth.shouldIsolate}), the batch is halved until the failing channels stand
 * alone; they report `auth_failed` and are retried alone with backoff while the others are authorized at once, and
 * they rejoin the batch when their own auth passes. A lazy chunk, with the search: the refresh cycle loads it on the
 * first batch that needs it.
 */
export class BatchIsolation {
    readonly #host: IsolationHost;

    /** The next try of the isolated channels, with its backoff. */
    readonly #retry = new ReconnectTimer(ISOLATED_RETRY);

    /** Isolate for `host`. */
    constructor(host: IsolationHost) {
        this.#host = host;
    }

    /** After a failed batch of `names`: isolate the channels that fail alone; false when none stands out. */
    async isolate(names: readonly string[], platform: Platform, generation: number): Promise<boolean> {
        const host = this.#host;
        const failing = await failingAlone(names, (part) => host.auth.request(part, platform, host.signal()));
        if (!host.current(generation) || failing === null || failing.size === 0 || failing.size === names.length) return false;
        for (const [name, status] of failing) host.auth.isolated.set(name, status);
        host.report(failing.keys(), (name) => isolatedError(name, platform.authEndpoint, failing.get(name)!));
        this.#retryAlone(platform, generation);
        host.refresh();
        return true;
    }

    /** Try the isolated channels alone after a backoff; once their auth passes, they rejoin the batch. */
    #retryAlone(platform: Platform, generation: number): void {
        const host = this.#host;
        this.#retry.schedule(() => {
            void host.auth.request([...host.auth.isolated.keys()], platform, host.signal()).then((result: AuthResult) => {
                if (!host.current(generation)) return;
                if (result.kind !== "ok") return this.#retryAlone(platform, generation);
                host.auth.isolated.clear();
                this.#retry.reset();
                host.refresh();
            });
        });
    }

    /** Stop retrying (no channel left, or `disconnect()`). */
    reset(): void {
        this.#retry.reset();
    }
}
