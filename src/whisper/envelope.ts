/** The prefix every client event carries on the wire (laravel-mercure §4.6). */
export const CLIENT_PREFIX = "client-";

/**
 * Whether a channel has a whisper topic: private, encrypted private and presence channels do, public ones not.
 */
export function isGuarded(channel: string): boolean {
    // [spec] laravel-mercure §7.1: only guarded channels have whisper topics.
    return channel.startsWith("private-") || channel.startsWith("presence-");
}

/**
 * Whether a channel's whispers are sealed under its key (`private-encrypted-…`).
 */
export function isEncrypted(channel: string): boolean {
    return channel.startsWith("private-encrypted-");
}

/**
 * What a message on a channel's whisper stream may be delivered as.
 *
 * - `plain`: a client event to dispatch as is.
 * - `sealed`: a JWE to decrypt under the channel's key; deliver only `client-` events from inside.
 */
export type Whisper = { kind: "plain"; event: string; payload: unknown } | { kind: "sealed"; jwe: string };

/**
 * Read one message of `channel`'s whisper stream, or `null` when it must be dropped (laravel-mercure §7.3).
 *
 * Anyone holding the channel's whisper grant can publish anything there, so only this is accepted:
 * `channels` exactly `[channel]` (so a member of another channel cannot inject here), then on an
 * encrypted channel only a string `data` (plaintext is dropped, fail closed), elsewhere only a
 * `client-…` event whose `socket` is not `ownSocket` (a server event name like `App\Events\OrderShipped`
 * is never accepted from a peer).
 */
export function readWhisper(data: unknown, channel: string, ownSocket: string): Whisper | null {
    let message: Record<string, unknown> | null;
    try {
        message = JSON.parse(data as string) as Record<string, unknown> | null;
    } catch {
        return null; // Not JSON: not addressable.
    }
    const channels = message?.["channels"];
    // [spec] §7.3: `channels` must be an array of length 1 equal to the stream's own channel.
    if (!Array.isArray(channels) || channels.length !== 1 || channels[0] !== channel) return null;
    const { data: sealed, event, socket, payload } = message!;
    // [spec] §7.3: a string `data` is a JWE, read only on encrypted channels; plaintext never reaches them.
    if (isEncrypted(channel)) return typeof sealed === "string" ? { kind: "sealed", jwe: sealed } : null;
    if (typeof sealed === "string") return null;
    // [spec] §7.3: drop our own whispers, and anything that is not a client event.
    if (socket === ownSocket || typeof event !== "string" || !event.startsWith(CLIENT_PREFIX)) return null;
    return { kind: "plain", event, payload };
}
