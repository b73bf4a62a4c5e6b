import { MercureError } from "../errors";
import { whisperTopic } from "../topic/topics";
import type { EncryptedChannels } from "../crypto/encrypted-channels";
import type { FetchLike, FetchResponseLike } from "../transport/platform";
import { within } from "./deadline";
import { CLIENT_PREFIX, isEncrypted, isGuarded } from "./envelope";
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

/** How one POST ended: the hub's HTTP status, the error that kept it from being answered, or the abort. */
type Posted = number | MercureError | "aborted";

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
    private tail: Promise<unknown> = Promise.resolve();

    /** Aborted and replaced by `clear()`: whispers made before it send nothing more. */
    private controller = new AbortController();

    /** The deadline of one POST or seal. */
    private readonly timeout: number;

    /** The deadline of each wait for the connector. */
    private readonly authWait: number;

    /**
     * Create the (idle) publisher of one connector; sends nothing until `whisper()`.
     */
    constructor(
        /** The connector: where each channel stands, its re-auth, its channels' `error()` callbacks. */
        private readonly host: WhisperPublisherHost,
        /** Socket id, crypto and deadlines. */
        private readonly options: WhisperPublisherOptions,
    ) {
        this.timeout = options.timeout ?? DEFAULT_PUBLISH_TIMEOUT;
        this.authWait = options.authWait ?? DEFAULT_AUTH_WAIT;
    }

    /**
     * Whisper `event` (sent as `client-<event>`) with `data` to the other members of `channel`.
     *
     * Throws at once on a public channel. Otherwise failures go to the channel's `error()` callbacks and
     * come back classified; the promise rejects only if a host callback throws.
     */
    whisper(channel: string, event: string, data: unknown): Promise<WhisperResult> {
        assertCanWhisper(channel);
        const signal = this.controller.signal;
        const result = this.tail.then(() => this.send(channel, CLIENT_PREFIX + event, data, signal));
        this.tail = result.catch(() => undefined); // A throwing host callback must not stall the queue.
        return result;
    }

    /**
     * Cancel the whisper in flight and every queued one (the connector disconnected); later ones send normally.
     */
    clear(): void {
        this.controller.abort();
        this.controller = new AbortController();
    }

    /** Send one whisper in its turn, with one re-auth and retry after a 401. */
    private async send(channel: string, event: string, data: unknown, signal: AbortSignal): Promise<WhisperResult> {
        let posted: Posted = 401;
        for (let attempt = 0; posted === 401 && attempt < 2; attempt++) {
            if (attempt > 0) {
                // [spec] laravel-mercure §7.2: a 401 (expired cookie) re-runs the batch auth once, then retries once.
                const reauth = await within(() => this.host.reauthorize(), this.authWait, signal);
                if (reauth.kind === "aborted") return reauth;
                if (reauth.kind !== "done" || !reauth.value) break;
            }
            const waited = await within(() => this.host.target(channel), this.authWait, signal);
            if (waited.kind === "aborted") return waited;
            // A connector that cannot say where the channel stands in time counts as not joined.
            const target = waited.kind === "done" ? waited.value : null;
            // [spec] §7.2: a channel that is not joined (or was evicted during recovery) is ignored.
            if (target === null) return { kind: "skipped" };
            // [spec] §7.1: refuse to publish, without any request, when client_events is not true.
            if (!target.clientEvents) return this.fail(channel, whisperError(channel, "disabled"));
            posted = await this.post(channel, event, data, target, signal);
        }
        if (posted === "aborted") return { kind: "aborted" };
        if (typeof posted !== "number") return this.fail(channel, posted);
        // [spec] §7.2: success is 200 (any 2xx is taken); everything else is reported with its status.
        return posted >= 200 && posted < 300 ? { kind: "sent" } : this.fail(channel, whisperError(channel, posted));
    }

    /** Build the envelope and POST it once; never rejects. */
    private async post(channel: string, event: string, data: unknown, target: WhisperTarget, signal: AbortSignal): Promise<Posted> {
        const socket = this.options.socketId();
        let envelope: object = { channels: [channel], event, payload: data, socket };
        if (isEncrypted(channel)) {
            // [spec] §7.2: the hub only sees {"channels":[name],"data":<JWE>}; the seal draws a fresh IV.
            const sealed = await within(() => this.options.crypto.seal(channel, { event, payload: data, socket }), this.timeout, signal);
            if (sealed.kind === "aborted") return "aborted";
            if (sealed.kind !== "done") {
                const cause = sealed.kind === "failed" ? sealed.cause : this.late();
                // A crypto error (no WebCrypto here) says best what to do; any other reason is kept as the cause.
                return cause instanceof MercureError ? cause : whisperError(channel, "seal", cause);
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
            this.timeout,
            signal,
        );
        if (answer.kind === "aborted") return "aborted";
        if (answer.kind === "timeout") return whisperError(channel, "timeout", this.late());
        if (answer.kind === "failed") return whisperError(channel, "network", answer.cause);
        const response = answer.value;
        // Read the small body (the event id) so that Node's fetch frees the connection; its content is not needed.
        new Promise((read) => read(response.text())).catch(() => undefined);
        return response.status;
    }

    /** Report a failure on its channel and classify it. */
    private fail(channel: string, error: MercureError): WhisperResult {
        this.host.report(channel, error);
        return { kind: "failed", error };
    }

    /** The cause of a missed deadline. */
    private late(): Error {
        return new Error(`timed out after ${this.timeout} ms`);
    }
}
