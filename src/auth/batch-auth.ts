import { ANSWER_STAMP_KEY, readStamp, type Stamped, type StampStorage } from "./auth-stamp";
import { MAX_CHANNELS, resolveAuthTimeout } from "./limits";
import { channelKind } from "../topic/channel-kind";
import { authDenied, authFailed, channelLimit, authRejected, authRejectedNewcomer } from "../error-messages";
import { MercureError } from "../errors";
import type { FetchLike } from "../fetch";
import { requestAuthorization, type AuthResult } from "./auth-client";
import { dynamicCredentials, type CredentialOptions } from "./credential-options";
import { loadCredentials } from "./load-credentials";
import type { AuthResponse } from "./auth-response";
import type { HubTokenSource } from "./hub-token";
import { interpretBatch, type BatchOutcome } from "./batch-outcome";

/** What an auth request reads of the resolved platform (transport's `Platform` is one). */
export interface AuthPlatform {
    /** The auth endpoint, ready for `fetch`. */
    readonly authEndpoint: string;
    /** The `fetch` implementation. */
    readonly fetch: FetchLike;
    /** The hub token source, or null: the hub reads the cookie. */
    readonly hubToken: Pick<HubTokenSource, "get"> | null;
    /** Sends the batch auth request instead of `fetch` (shared across tabs: the leading tab's auth gateway); `probe`: see `request`. */
    readonly authorize?: (names: readonly string[], signal: AbortSignal, probe?: boolean) => Promise<AuthResult>;
}

/** The connector options the batch auth request reads (the credentials: see {@link credentialHeaders}). */
export interface BatchAuthOptions extends CredentialOptions {
    /**
     * The `auth` option: extra headers (Echo writes the CSRF and bearer headers here). Typed as strings for what reads
     * it besides the auth request (tab sharing), which a connector with a function among its credentials never uses.
     */
    readonly auth: { readonly headers: Record<string, string> };
    /** The `authTimeout` option. */
    readonly authTimeout?: unknown;
    /** @internal Tests only: where the requests write their stamp (see `auth-stamp.ts`) instead of the page's `localStorage`. */
    readonly authStamps?: StampStorage;
}

/**
 * A batch answer as the connector acts on it: the {@link BatchOutcome}, the channels to `evict` with their
 * errors (denied ones, or newcomers an older server rejected; none when absent), and for a batch that was
 * `rejected` or `failed` as a whole, the `failure` each of its channels reports before the connector backs off.
 */
export type BatchAnswer = BatchOutcome & {
    readonly evict?: ReadonlyArray<readonly [name: string, error: MercureError]>;
    readonly failure?: (name: string) => MercureError;
};

/**
 * The batch auth of one connector (laravel-mercure §2): the request for the joined channels, what the last
 * successful answer granted (the next answer is read against it), and the error each refusal gives.
 */
export class BatchAuth {
    /** The auth stamps the first two requests of this connector wrote (see `auth-stamp.ts`), in the order they left. */
    readonly stamped: Stamped[] = [];

    /** The channels the last successful auth granted (the cookie covers them), or null. */
    granted: ReadonlySet<string> | null = null;

    /** The last successful auth response (its topic prefix and `client_events`), or null. */
    response: AuthResponse | null = null;

    /** Whether the last successful answer came from the tabs' shared grant, not yet followed by a refused stream. */
    #fromGrant = false;

    /** Channels left out of the batch because their auth fails on its own (issue 30), with the status each got. */
    readonly isolated = new Map<string, number>();

    /** The server refused the page's CSRF token once (419): from then on the `XSRF-TOKEN` cookie is read first. */
    #csrfRefused = false;

    /** 5xx answers in a row to batches of several channels. */
    #serverFailures = 0;

    /** The connector options the request reads. */
    readonly #options: BatchAuthOptions;

    /** Create the batch auth of a connector with these options; sends nothing yet. */
    constructor(options: BatchAuthOptions) {
        this.#options = options;
    }

    /**
     * Ask `platform`'s auth endpoint (or its `authorize` transport: the leading tab's auth gateway when tabs
     * share one connection) to authorize `names` in one request, cancelled by `signal`; with a hub token,
     * obtain a fresh one meanwhile (a stream opened after the answer reads it synchronously), and fail as a
     * transient auth failure when it cannot be had. `probe`: a request of the batch isolation's search (issue 30),
     * whose names are not the connector's channel set (the tabs' auth gateway keeps that set: issue 49).
     */
    async request(names: readonly string[], platform: AuthPlatform, signal: AbortSignal, probe = false): Promise<AuthResult> {
        const result = await this.#send(names, platform, signal, probe);
        if (result.kind !== "rejected" || result.status !== 419) return result;
        // A 419 is Laravel's CSRF token mismatch (a regenerated session): read the token again and retry the batch once.
        this.#csrfRefused = true;
        return this.#send(names, platform, signal, probe);
    }

    /** One auth request with the credentials read now (see {@link BatchAuth.request}). */
    async #send(names: readonly string[], platform: AuthPlatform, signal: AbortSignal, probe: boolean): Promise<AuthResult> {
        let headers = this.#options.auth.headers;
        const timeout = resolveAuthTimeout(this.#options.authTimeout);
        if (dynamicCredentials(this.#options, this.#csrfRefused)) {
            // Within the auth deadline: a credential function that never settles fails the batch like a request that timed out.
            const read = await loadCredentials().then(
                (module) => module.readCredentials(this.#options, this.#csrfRefused, timeout, signal),
                (cause: unknown) => new MercureError("auth_failed", "the code that reads the credentials did not load", { cause }),
            );
            if (read === null || signal.aborted) return { kind: "aborted" };
            if (read instanceof MercureError) return { kind: "error", status: null, cause: read };
            headers = read;
        }
        const [result, tokenFailure] = await Promise.all([
            platform.authorize?.(names, signal, probe) ??
                requestAuthorization({
                    endpoint: platform.authEndpoint,
                    headers,
                    channelNames: names,
                    fetch: platform.fetch,
                    signal,
                    timeout,
                    stamps: this.#options.authStamps,
                    stamped: (stamped) => void (this.stamped.length < 2 && this.stamped.push(stamped)),
                }),
            platform.hubToken?.get().then(
                () => null,
                (error: unknown) => error,
            ) ?? null,
        ]);
        return tokenFailure === null || result.kind !== "ok" ? result : { kind: "error", status: null, cause: tokenFailure };
    }

    /**
     * Whether the browser's one hub cookie is no longer this connector's last granted answer's: a granted answer of
     * another connector of this browser arrived after it, or one of its own auth requests that is not its batch (a probe
     * of its isolation), as the answer stamp tells (see `auth-stamp.ts`). What its streams and whispers present to the
     * hub from now on (a native reconnect, a new stream, a POST) is that cookie, not its grant. It happens to connectors
     * that run alone in several tabs of one browser (a credential function keeps each tab alone: `hasFunction`), for
     * instance when both authorize again after one hub drop. A request in flight replaces nothing until it is answered.
     * False where it cannot tell (no storage, no stamped answer yet), with a hub token (the streams carry no cookie), for
     * `names` that are all public (no grant needed), and on a `platform` whose requests the tabs' engine sends (one
     * cookie for every tab: `authorize`).
     */
    cookieReplaced(platform: AuthPlatform | null, names?: readonly string[]): boolean {
        const own = this.response?.stamp;
        const cookie = own !== undefined && platform !== null && !platform.authorize && !platform.hubToken && names?.every((name) => channelKind(name) === "public") !== true;
        return cookie && (readStamp(this.#options.authStamps, ANSWER_STAMP_KEY) ?? own) !== own;
    }

    /**
     * Read the answer to the batch of `names` sent to `endpoint` (see {@link interpretBatch}; `joined(name)`:
     * whether the channel is still joined), and remember what a successful one granted.
     */
    answer(names: readonly string[], result: AuthResult, endpoint: string, joined: (name: string) => boolean): BatchAnswer {
        const outcome = interpretBatch(names, result, this.granted, joined);
        switch (outcome.kind) {
            case "granted":
                this.granted = new Set(outcome.granted);
                this.response = outcome.response;
                this.#fromGrant = outcome.response.fromGrant === true;
                // A name past the tabs' shared 100-channel limit comes back denied and flagged `limit` (share/auth-gateway.ts).
                return {
                    ...outcome,
                    evict: outcome.denied.map((name) => [name, outcome.response.channels.get(name)?.limit === true ? channelLimit(name, MAX_CHANNELS) : authDenied(name)] as const),
                };
            case "newcomers_rejected":
                return { ...outcome, evict: outcome.newcomers.map((name) => [name, authRejectedNewcomer(name, outcome.status, outcome.newcomers, outcome.detail, outcome.message)] as const) };
            case "rejected":
                return { ...outcome, failure: (name) => authRejected(name, outcome.status, endpoint, outcome.detail, outcome.message) };
            case "failed":
                return { ...outcome, failure: (name) => authFailed(name, endpoint, outcome.status, outcome.cause, outcome.message) };
            case "aborted":
                return outcome;
        }
    }

    /**
     * A stream was refused: whether the last answer came from the tabs' shared grant without a request to Laravel
     * (issue 13), once per such answer. The cookie then did not hold what the grant said: authorize again at once.
     */
    refusedAfterGrant(): boolean {
        const fromGrant = this.#fromGrant;
        this.#fromGrant = false;
        return fromGrant;
    }

    /**
     * Whether to look for the channels that make the batch fail (issue 30): at the second 5xx in a row to a batch of
     * several channels. One failure may be a passing server error; two point at a channel the server cannot authorize.
     */
    shouldIsolate(names: readonly string[], result: AuthResult): boolean {
        if (result.kind === "error" && (result.status ?? 0) >= 500 && names.length > 1) return ++this.#serverFailures >= 2;
        this.#serverFailures = 0;
        return false;
    }

    /** Forget what was granted (no channel left, or `disconnect()`). */
    reset(): void {
        this.isolated.clear();
        this.#serverFailures = 0;
        this.#fromGrant = false;
        this.granted = null;
        this.response = null;
    }
}
