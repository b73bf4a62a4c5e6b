import { MercureChannel } from "./mercure-channel";

/**
 * What a joined guarded channel asks of its connector for whispers (client events, laravel-mercure §7).
 *
 * @internal
 */
export interface WhisperLink {
    /** Send a whisper in its turn; nothing when `channel` is no longer the joined channel of its name. */
    whisper(channel: MercurePrivateChannel, event: string, data: unknown): void;
    /** The channel's client-event listeners changed: open or close its whisper stream. */
    listening(channel: MercurePrivateChannel): void;
}

/**
 * The members of {@link MercurePrivateChannel} that Echo's `Channel` implements (each calls `listen()` or
 * `stopListening()` with the `.client-` event name), declared with the Mercure types: no code of ours is
 * needed for them.
 */
export interface MercurePrivateChannel {
    /**
     * Listen for a client event (a whisper) of the other members; `T` is its data's type. The channel's
     * whisper stream opens with its first whisper listener.
     */
    listenForWhisper<T = unknown>(event: string, callback: (data: T) => void): this;

    /**
     * Stop listening for a client event: only `callback` when given, otherwise every callback of that
     * event. The channel's whisper stream closes with its last whisper listener.
     */
    stopListeningForWhisper<T = unknown>(event: string, callback?: (data: T) => void): this;
}

/**
 * A private Mercure channel (`private-…`): authorized by the batch auth request, delivered as private updates.
 * Encrypted private channels (`private-encrypted-…`) are of this class too: the connector decrypts their
 * broadcasts before `deliver()` and reports decryption failures on `error()`, and seals their whispers.
 */
export class MercurePrivateChannel extends MercureChannel {
    /**
     * The connector that joined this channel, set at join; null for a channel created on its own (it
     * whispers nothing).
     *
     * @internal
     */
    whisperLink: WhisperLink | null = null;

    /**
     * Send a client event (`client-<eventName>`) with `data` to the other members of the channel, through
     * the hub (laravel-mercure §7.2); on an encrypted channel it is sealed under the channel's key first.
     *
     * Whispers leave in the order they were made. Failures reach `error()`: `whisper_disabled` when the
     * server's `client_events` is off (nothing is sent), `whisper_failed` with the hub's HTTP status
     * otherwise. On a channel that was left, nothing happens.
     */
    override whisper<T = unknown>(eventName: string, data: T): this {
        this.whisperLink?.whisper(this, eventName, data);
        return this;
    }

    /** Tell the connector, which opens or closes the channel's whisper stream. */
    protected override whisperListenersChanged(): void {
        this.whisperLink?.listening(this);
    }
}
