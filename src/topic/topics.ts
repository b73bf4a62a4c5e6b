import { rawUrlDecode, rawUrlEncode } from "./encode";

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

/**
 * Map a channel topic back to its full channel name; `null` for topics outside the prefix's namespace
 * or that do not decode.
 */
export function channelNameFromTopic(prefix: string | null, topic: string): string | null {
    if (prefix === null) return topic;
    const namespace = prefix + "channel/";
    if (!topic.startsWith(namespace)) return null;
    const encoded = topic.slice(namespace.length);
    const name = rawUrlDecode(encoded);
    // [spec] §3: only topics the server could have produced map back (exact round trip).
    return name !== null && rawUrlEncode(name) === encoded ? name : null;
}
