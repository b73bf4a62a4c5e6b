import type { WhisperLink } from "../channel/mercure-private-channel";
import type { AuthResponse } from "../auth/auth-response";
import type { EncryptedChannels } from "../crypto/encrypted-channels";
import { loadFailed } from "../error-messages";
import type { Platform } from "../transport/platform";
import { loadWhispers, type WhisperModule } from "./load";
import type { WhisperPublisher, WhisperPublisherHost, WhisperTarget } from "./publish";
import type { WhisperDiagnostics } from "./whisper-diagnosis";
import type { WhisperAuth, WhisperStreams, WhisperStreamsHost } from "./whisper-streams";

/**
 * What the whispers need from their connector: the streams' host, and where the channels stand (none of
 * these may throw).
 */
export interface WhispersHost extends WhisperStreamsHost, Pick<WhisperPublisherHost, "report"> {
    /**
     * Where a whisper on `channel` goes now: `null` when it is not joined (or the connector is
     * disconnected), `"pending"` while its auth answer is not known yet.
     */
    locate(channel: string): WhisperTarget | null | "pending";
    /** Ask for a refresh (a batch auth), shared with the connector's own; false when disconnected. */
    refresh(): boolean;
    /** Whether `channel` is the joined channel of its name (a channel object left since is not). */
    joined(channel: { readonly name: string }): boolean;
    /**
     * When the cookie the connector obtained expires, in ms since the epoch, or null when unknown: lets a
     * diagnosis say that an expired cookie was refused. Optional: without it the probe's answer alone decides.
     */
    tokenExpiresAt?(): number | null;
}

/**
 * Where a whisper on the joined channel `name` goes (laravel-mercure §7.2): the hub of `platform`, with the
 * topic prefix and `client_events` of the last successful auth, or `pending` until an auth answer granted it.
 */
export function whisperTarget(
    name: string,
    platform: Platform | null,
    auth: { readonly granted: ReadonlySet<string> | null; readonly response: AuthResponse | null },
): WhisperTarget | "pending" {
    const { response } = auth;
    if (platform === null || response === null || auth.granted?.has(name) !== true) return "pending";
    return { hub: platform.hub, fetch: platform.fetch, topicPrefix: response.topicPrefix, clientEvents: response.clientEvents };
}

/**
 * Options of {@link Whispers}.
 */
export interface WhispersOptions {
    /** This connection's socket id: put in every envelope, and our own whispers are dropped. */
    socketId: () => string;
    /** The connector's encrypted channels: seals outgoing and decrypts incoming whispers of encrypted channels. */
    crypto: Pick<EncryptedChannels, "seal" | "enqueue">;
    /** How many whisper streams may be open at once (the connection budget less the main stream). */
    maxStreams: () => number;
    /** Loads the publisher and the streams (default: the memoised dynamic import {@link loadWhispers}). */
    load?: () => Promise<WhisperModule>;
    /** Loads the diagnostics chunk after a whisper failure (default: `loadDiagnostics()`, in the whisper chunk). */
    loadDiagnostics?: WhisperDiagnostics["load"];
}

/**
 * The whispers of one connector (laravel-mercure §7), as the connector sees them: a
 * {@link WhisperPublisher} and {@link WhisperStreams}, loaded on the first `whisper()` or whisper listener.
 *
 * Until they are loaded, this keeps what they will need: the whispers made (sent in that order once
 * loaded, before any later one), the channels with whisper listeners and the latest auth (replayed into
 * the streams). A failed load is reported on the `error()` of each channel with a waiting whisper or a
 * whisper listener; the next whisper, listener or auth tries again.
 *
 * It is also the publisher's host: a whisper on a channel whose auth is in flight waits for the next auth
 * answer ({@link Whispers.sync} or {@link Whispers.authFailed}), and the re-auth after a 401 is a refresh
 * of the connector's, resolved by that answer.
 */
export class Whispers {
    /** The loaded publisher and streams, or null until the load finished. */
    #loaded: { publisher: WhisperPublisher; streams: WhisperStreams } | null = null;

    /** The load in flight, or null (none started, or the last one failed). */
    #loading: Promise<void> | null = null;

    /** Whispers made before the load finished, in order: channel, event, data. */
    readonly #queued: Array<[channel: string, event: string, data: unknown]> = [];

    /** The guarded channels that have whisper listeners now. */
    readonly #listening = new Set<string>();

    /** The latest auth given to {@link Whispers.sync} (less the channels dropped since), or null. */
    #auth: (Omit<WhisperAuth, "granted"> & { granted: Set<string> }) | null = null;

    /** Who waits for the next auth answer (true: a 200 was applied), in order. */
    readonly #answers: Array<(granted: boolean) => void> = [];

    /** An auth request went out and its answer has not been applied yet. */
    #authPending = false;

    /**
     * What the joined guarded channels call (their `whisperLink`): `whisper()`, and their whisper listeners
     * changing; channel objects left since are ignored.
     */
    readonly link: WhisperLink = {
        whisper: (channel, event, data) => {
            if (this.host.joined(channel)) this.whisper(channel.name, event, data);
        },
        listening: (channel) => {
            if (this.host.joined(channel)) this.listen(channel.name, channel.hasWhisperListeners());
        },
    };

    /** The publisher's view of the connector: targets and the re-auth, with the connector's errors. */
    readonly #publisherHost: WhisperPublisherHost = {
        target: (channel) => this.#target(channel),
        reauthorize: () => {
            const answer = this.#nextAnswer();
            // [spec] laravel-mercure §7.2: a request in flight is answered after the 401, with a fresh cookie: shared.
            if (!this.#authPending && !this.host.refresh()) this.#answered(false);
            return answer;
        },
        report: (channel, error) => this.host.report(channel, error),
        cookieReplaced: () => this.host.cookieReplaced?.() === true,
    };

    /**
     * Create the (idle) whispers of one connector; loads nothing.
     */
    constructor(
        /** The connector: targets, re-auth, stream factory, delivery, errors, shared backoff. */
        private readonly host: WhispersHost,
        /** Socket id, crypto, stream cap and loader. */
        private readonly options: WhispersOptions,
    ) {}

    /**
     * The whisper streams open or opening now; each holds (or waits for) one HTTP/1.1 connection.
     */
    get size(): number {
        return this.#loaded?.streams.size ?? 0;
    }

    /**
     * Send `client-<event>` with `data` on the guarded `channel`, after every whisper made before (see
     * {@link WhisperPublisher.whisper}); failures go to the channel's `error()`.
     */
    whisper(channel: string, event: string, data: unknown): void {
        const loaded = this.#loaded;
        if (loaded === null) {
            this.#queued.push([channel, event, data]);
            this.#load();
            return;
        }
        // Its failures are reported on the channel; it rejects only if a host callback throws, which ours do not.
        loaded.publisher.whisper(channel, event, data).catch(() => undefined);
    }

    /**
     * Say whether the guarded `channel` has whisper listeners now: its stream opens with the first and
     * closes with the last (see {@link WhisperStreams.listening}).
     */
    listen(channel: string, on: boolean): void {
        if (on) this.#listening.add(channel);
        else this.#listening.delete(channel);
        if (this.#loaded !== null) this.#loaded.streams.listening(channel, on);
        else if (on) this.#load();
    }

    /**
     * Apply a successful auth response (see {@link WhisperStreams.sync}; after a failed load, tries again
     * when channels listen for whispers), then wake the whispers waiting for it.
     */
    sync(auth: WhisperAuth): void {
        this.#auth = { ...auth, granted: new Set(auth.granted) };
        if (this.#loaded !== null) this.#loaded.streams.sync(auth);
        else if (this.#listening.size > 0) this.#load();
        this.#answered(true);
    }

    /**
     * An auth request failed, or none is coming (nothing to authorize): the whispers waiting for an answer
     * look again (a 401's re-auth gives up).
     */
    authFailed(): void {
        this.#answered(false);
    }

    /**
     * The connector sent an auth request: a re-auth asked for before its answer waits for that answer
     * ({@link Whispers.sync} or {@link Whispers.authFailed}) instead of asking for another.
     */
    authStarted(): void {
        this.#authPending = true;
    }

    /**
     * Forget a channel that was left or evicted: its stream, listeners and cursor.
     */
    drop(channel: string): void {
        this.#listening.delete(channel);
        this.#auth?.granted.delete(channel);
        this.#loaded?.streams.drop(channel);
    }

    /**
     * Cancel every whisper not sent yet and close every stream (the connector disconnected); channels keep
     * their listeners, and the next `sync()` reopens their streams.
     */
    clear(): void {
        this.#queued.length = 0;
        this.#auth = null;
        this.#loaded?.publisher.clear();
        this.#loaded?.streams.close();
        this.#answered(false);
    }

    /** [spec] laravel-mercure §7.2: a channel not joined gets nothing; one whose first auth is in flight waits for it. */
    #target(channel: string): WhisperTarget | null | Promise<WhisperTarget | null> {
        const target = this.host.locate(channel);
        return target === "pending" ? this.#nextAnswer().then(() => this.#target(channel)) : target;
    }

    /** Resolves with the next auth answer (see {@link Whispers.sync}, {@link Whispers.authFailed}). */
    #nextAnswer(): Promise<boolean> {
        return new Promise((resolve) => this.#answers.push(resolve));
    }

    /** Resolve everyone waiting for an auth answer. */
    #answered(granted: boolean): void {
        this.#authPending = false;
        for (const resolve of this.#answers.splice(0)) resolve(granted);
    }

    /** Start loading the publisher and streams, unless a load is in flight. */
    #load(): void {
        if (this.#loading !== null) return;
        const { socketId, crypto, maxStreams } = this.options;
        // [spec] issue 10: whisper failures are diagnosed on the channel, while it is joined and the connector connected.
        const diagnostics: WhisperDiagnostics = {
            probe: (channel) => {
                const target = this.host.locate(channel);
                return target === "pending" ? null : target;
            },
            tokenExpiresAt: () => this.host.tokenExpiresAt?.() ?? null,
            load: this.options.loadDiagnostics,
        };
        this.#loading = (this.options.load ?? loadWhispers)().then(
            (module) => {
                const streams = new module.WhisperStreams(this.host, { socketId, crypto, maxStreams, diagnostics });
                this.#loaded = { publisher: new module.WhisperPublisher(this.#publisherHost, { socketId, crypto, diagnostics }), streams };
                for (const channel of this.#listening) streams.listening(channel, true);
                if (this.#auth !== null) streams.sync(this.#auth);
                // In the order they were made, before any later whisper (which goes straight to the publisher).
                for (const [channel, event, data] of this.#queued.splice(0)) this.whisper(channel, event, data);
            },
            (cause: unknown) => {
                this.#loading = null;
                const channels = new Set([...this.#queued.splice(0).map(([channel]) => channel), ...this.#listening]);
                for (const channel of channels) this.host.report(channel, loadFailed(channel, "whisper", cause, "its whispers were not sent nor received, and the next whisper, whisper listener or re-authorization downloads it again"));
            },
        );
    }
}
