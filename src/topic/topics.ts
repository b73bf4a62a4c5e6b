import { rawUrlEncode } from "./encode";

/**
 * Build the hub topic that carries a channel's broadcasts: `prefix + "channel/" + enc(name)`.
 *
 * A `null` prefix means a legacy server (its auth response had no `topic_prefix`): the topic is the bare name.
 * An empty string is a configured prefix like any other.
 */
export function channelTopic(prefix: string | null, channel: string): string {
    // [spec] laravel-mercure §3: channel topic, and the legacy fallback.
    return prefix === null ? channel : prefix + "channel/" + rawUrlEncode(channel);
}

/**
 * Build the hub topic that carries a guarded channel's whispers: `prefix + "whisper/" + enc(name)`.
 */
export function whisperTopic(prefix: string | null, channel: string): string {
    // [spec] laravel-mercure §3: whisper topic ("whisper/" + enc(name) in legacy mode).
    return (prefix ?? "") + "whisper/" + rawUrlEncode(channel);
}
