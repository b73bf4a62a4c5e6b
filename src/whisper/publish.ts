import { MercureError } from "../errors";
import { whisperTopic } from "../topic/topics";
import type { EncryptedChannels } from "../crypto/encrypted-channels";
import type { DiagnosedFailure } from "../discovery/classify";
import { readHeader } from "../discovery/response";
import type { FetchLike, FetchResponseLike } from "../transport/platform";
import { within } from "../transport/deadline";
import { CLIENT_PREFIX, isEncrypted, isGuarded } from "./envelope";
import { diagnoseWhisper, type WhisperDiagnostics } from "./whisper-diagnosis";
import { whisperError } from "./whisper-error";

/** Default deadline of one whisper POST (and of sealing one), in milliseconds. */
export const DEFAULT_PUBLISH_TIMEOUT = 10_000;

/** Default deadline of waiting for the connector (a channel's first auth, a re-auth), in milliseconds. */
export const DEFAULT_AUTH_WAIT = 35_000;

/**
 * Where and how a whisper on one channel goes out, as the connector knows it when the whisper's turn comes.
 */
export interface WhisperTarget {
    /** The hub URL (the `host` option, resolved); its query and fragment are dropped. */
    hub: URL;
    /** The fetch implementation (the `fetch` option, or the global one). */
    fetch: FetchLike;
    /** The last auth response's `topic_prefix` (`null` for a legacy server). */
    topicPrefix: string | null;
    /** Whether the last auth response's `client_events` was exactly `true`. */
    clientEvents: boolean;
}

/**
 * What the publisher needs from its connector. Every call may come at any time; none may throw.
 */
export interface WhisperPublisherHost {
    /**
     * The target for a whisper on `channel`, or `null` when the channel is not joined (or was left,
     * evicted, denied): the whisper is then dropped silently. May return a promise while the channel's
     * first auth is in flight, resolved once it settled.
     */
    target(channel: string): WhisperTarget | null | PromiseLike<WhisperTarget | null>;
    /**
     * Re-authorize every joined channel once (the hub answered 401: the cookie expired); resolves after
     * the new auth response was applied (denied channels evicted, keys set), true when it succeeded.
     * Concurrent calls should share one run with the connector's own refreshes.
     */
    reauthorize(): PromiseLike<boolean>;
    /** Report a whisper failure on that channel's `error()` callbacks. */
    report(channel: string, error: MercureError): void;
    /**
     * Whether the browser's one hub cookie is another connector's now (see `BatchAuth.cookieReplaced`): a 403 then
     * comes from that cookie's grants, and is re-authorized and retried once like a 401. Absent: never.
     */
    cookieReplaced?(): boolean;
}

/**
 * Options of {@link WhisperPublisher}.
 */
export interface WhisperPublisherOptions {
    /** This connection's socket id, put in every envelope so the sender drops its own whisper. */
    socketId: () => string;
    /** The connector's encrypted channels: seal the plaintext of an encrypted whisper under the channel's key. */
    crypto: Pick<EncryptedChannels, "seal">;
    /** Deadline of one POST and of one seal. Default {@link DEFAULT_PUBLISH_TIMEOUT}. */
    timeout?: number;
    /** Deadline of each wait for the connector (target, re-auth). Default {@link DEFAULT_AUTH_WAIT}. */
    authWait?: number;
    /**
     * Name the cause of a POST the hub refused or that got no answer (after its `whisper_failed`); none
     * when absent.
     */
    diagnostics?: WhisperDiagnostics;
}

/**
 * The outcome of one whisper, classified; failures were also reported on the channel.
 *
 * - `sent`: the hub accepted the POST (2xx).
 * - `skipped`: the channel is not joined (any more); nothing was sent or reported.
 * - `failed`: nothing (more) will be sent; `error` went to the channel's `error()` callbacks.
 * - `aborted`: the connector disconnected first; nothing reported.
 */
export type WhisperResult =
    | { kind: "sent" }
    | { kind: "skipped" }
    | { kind: "failed"; error: MercureError }
    | { kind: "aborted" };

/**
 * How one POST ended: the hub's HTTP status (with its `WWW-Authenticate` when readable), the error that
 * kept it from being answered (`network`: no answer at all, which is also how a CORS refusal looks), or
 * the abort.
 */
type Posted =
    | { readonly kind: "answered"; readonly status: number; readonly challenge: string | null }
    | { readonly kind: "unanswered"; readonly error: MercureError; readonly network: boolean }
    | { readonly kind: "aborted" };

/** The answer `send()` starts from: a 401 makes the first attempt look like a retry after an expiry. */
const UNSENT: Posted = { kind: "answered", status: 401, challenge: null };

/**
 * Throw the error `whisper()` on a public channel throws (laravel-mercure §7.1); returns for guarded channels.
 */
export function assertCanWhisper(channel: string): void {
    if (!isGuarded(channel)) throw whisperError(channel, "public");
}

/**
 * The whisper publisher of one connector: client events POSTed to the hub's whisper topic of their
 * channel (laravel-mercure §7.2), one at a time in the order `whisper()` was called.
 *
 * Each whisper waits for the previous one to settle (POST answered, 401 recovery done, or a deadline
 * passed), so a slow seal of an encrypted whisper never lets a later plain one overtake it. Every wait
 * has a deadline, and `clear()` (on `disconnect()`) cancels the one in flight and every queued whisper.
 */
export class WhisperPublisher {
    /** The last whisper in the queue; every new one starts after it settled. */
    #tail: Promise<unknown> = Promise.resolve();

    /** Aborted and replaced by `clear()`: whispers made before it send nothing more. */
    #controller = new AbortController();

    /** The deadline of one POST or seal. */
    readonly #timeout: number;

    /** The deadline of each wait for the connector. */
    readonly #authWait: number;

    /**
     * The channels whose whisper failures were diagnosed since their last whisper went through: one probe
     * per failure streak and channel, not one per whisper (someone typing whispers every second).
     */
    readonly #diagnosed = new Set<string>();

    /**
     * Create the (idle) publisher of one connector; sends nothing until `whisper()`.
     */
    constructor(
        /** The connector: where each channel stands, its re-auth, its channels' `error()` callbacks. */
        private readonly host: WhisperPublisherHost,
        /** Socket id, crypto and deadlines. */
        private readonly options: WhisperPublisherOptions,
    ) {
        this.#timeout = options.timeout ?? DEFAULT_PUBLISH_TIMEOUT;
        this.#authWait = options.authWait ?? DEFAULT_AUTH_WAIT;
    }

    /**
     * Whisper `event` (sent as `client-<event>`) with `data` to the other members of `channel`.
     *
     * Throws at once on a public channel. Otherwise failures go to the channel's `error()` callbacks and
     * come back classified; the promise rejects only if a host callback throws.
     */
    whisper(channel: string, event: string, data: unknown): Promise<WhisperResult> {
        assertCanWhisper(channel);
        const signal = this.#controller.signal;
        const result = this.#tail.then(() => this.#send(channel, CLIENT_PREFIX + event, data, signal));
        this.#tail = result.catch(() => undefined); // A throwing host callback must not stall the queue.
        return result;
    }

    /**
     * Cancel the whisper in flight and every queued one (the connector disconnected); later ones send normally.
     */
    clear(): void {
        this.#controller.abort();
        this.#controller = new AbortController();
        this.#diagnosed.clear();
    }

    /**
     * Send one whisper in its turn, with one re-auth and retry after a 401, or after a 403 on a cookie another
     * connector of this browser replaced (see {@link WhisperPublisherHost.cookieReplaced}).
     */
    async #send(channel: string, event: string, data: unknown, signal: AbortSignal): Promise<WhisperResult> {
        let posted: Posted = UNSENT;
        let retried = false;
        const renewable = (answered: Posted): boolean =>
            answered.kind === "answered" && (answered.status === 401 || (answered.status === 403 && this.host.cookieReplaced?.() === true));
        for (let attempt = 0; renewable(posted) && attempt < 2; attempt++) {
            if (attempt > 0) {
                // [spec] laravel-mercure §7.2: a 401 (expired cookie) re-runs the batch auth once, then retries once.
                const reauth = await within(() => this.host.reauthorize(), this.#authWait, signal);
                if (reauth.kind === "aborted") return reauth;
                if (reauth.kind !== "done" || !reauth.value) break;
            }
            const waited = await within(() => this.host.target(channel), this.#authWait, signal);
            if (waited.kind === "aborted") return waited;
            // A connector that cannot say where the channel stands in time counts as not joined.
            const target = waited.kind === "done" ? waited.value : null;
            // [spec] §7.2: a channel that is not joined (or was evicted during recovery) is ignored.
            if (target === null) return { kind: "skipped" };
            // [spec] §7.1: refuse to publish, without any request, when client_events is not true.
            if (!target.clientEvents) return this.#fail(channel, whisperError(channel, "disabled"));
            posted = await this.#post(channel, event, data, target, signal);
            retried = attempt > 0;
        }
        if (posted.kind === "aborted") return posted;
        if (posted.kind === "unanswered") {
            const failed = this.#fail(channel, posted.error);
            // No answer at all (the hub is down, or CORS refused the page): the probe can tell which.
            if (posted.network) this.#diagnose(channel, { kind: "whisper_post", status: "network" }, signal);
            return failed;
        }
        const { status, challenge } = posted;
        // [spec] §7.2: success is 200 (any 2xx is taken); everything else is reported with its status.
        if (status >= 200 && status < 300) {
            this.#diagnosed.delete(channel); // The failure streak, if any, is over.
            return { kind: "sent" };
        }
        // The whisper_failed first, at once; the cause it names follows once the probe has run. A 401 that
        // was not retried (the re-auth failed or timed out) is not the hub's doing: say so.
        const failed = this.#fail(channel, whisperError(channel, status === 401 && !retried ? "unrenewed" : status));
        // A 401 is diagnosed only when it came again with a fresh cookie: after a re-auth that failed or
        // timed out, the auth error the connector reported is the cause.
        if (status !== 401 || retried) this.#diagnose(channel, { kind: "whisper_post", status, challenge }, signal);
        return failed;
    }

    /**
     * Name the cause of the first failed whisper of a streak on `channel` (issue 10) and report it on the
     * channel after its `whisper_failed`, unless the connector disconnected or the channel was left in
     * between. Runs beside the queue: the next whisper does not wait for the probe.
     */
    #diagnose(channel: string, failure: Extract<DiagnosedFailure, { kind: "whisper_post" }>, signal: AbortSignal): void {
        const diagnostics = this.options.diagnostics;
        if (diagnostics === undefined || this.#diagnosed.has(channel)) return;
        this.#diagnosed.add(channel);
        void diagnoseWhisper(diagnostics, { channel, failure, signal }).then((cause) => {
            if (cause !== null) this.host.report(channel, cause.error);
        });
    }

    /** Build the envelope and POST it once; never rejects. */
    async #post(channel: string, event: string, data: unknown, target: WhisperTarget, signal: AbortSignal): Promise<Posted> {
        const socket = this.options.socketId();
        let envelope: object = { channels: [channel], event, payload: data, socket };
        if (isEncrypted(channel)) {
            // [spec] §7.2: the hub only sees {"channels":[name],"data":<JWE>}; the seal draws a fresh IV.
            const sealed = await within(() => this.options.crypto.seal(channel, { event, payload: data, socket }), this.#timeout, signal);
            if (sealed.kind === "aborted") return sealed;
            if (sealed.kind !== "done") {
                const cause = sealed.kind === "failed" ? sealed.cause : this.#late();
                // A crypto error (no WebCrypto here) says best what to do; any other reason is kept as the cause.
                return { kind: "unanswered", error: cause instanceof MercureError ? cause : whisperError(channel, "seal", cause), network: false };
            }
            envelope = { channels: [channel], data: sealed.value };
        }
        // [spec] §7.2: the hub URL without query or fragment.
        const url = new URL(target.hub.href);
        url.search = url.hash = "";
        // [spec] §7.2: form fields topic, data, private=on, in this order; no custom header, so no
        // CORS preflight; the cookie is the publisher credential.
        const body = new URLSearchParams([
            ["topic", whisperTopic(target.topicPrefix, channel)],
            ["data", JSON.stringify(envelope)],
            ["private", "on"],
        ]);
        const answer = await within<FetchResponseLike>(
            (inner) => target.fetch(url.href, { method: "POST", body, credentials: "include", signal: inner }),
            this.#timeout,
            signal,
        );
        if (answer.kind === "aborted") return answer;
        if (answer.kind === "timeout") return { kind: "unanswered", error: whisperError(channel, "timeout", this.#late()), network: false };
        if (answer.kind === "failed") return { kind: "unanswered", error: whisperError(channel, "network", answer.cause), network: true };
        const response = answer.value;
        // Read the small body (the event id) so that Node's fetch frees the connection; its content is not needed.
        new Promise((read) => read(response.text())).catch(() => undefined);
        return { kind: "answered", status: response.status, challenge: readHeader(response, "www-authenticate") };
    }

    /** Report a failure on its channel and classify it. */
    #fail(channel: string, error: MercureError): WhisperResult {
        this.host.report(channel, error);
        return { kind: "failed", error };
    }

    /** The cause of a missed deadline. */
    #late(): Error {
        return new Error(`timed out after ${this.#timeout} ms`);
    }
}
