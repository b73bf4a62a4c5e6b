import { rawUrlEncode } from "../../topic/encode";

/**
 * The hub topic of a channel: `P + "channel/" + enc(name)`, or the bare name for a legacy server
 * (`prefix` `null`).
 */
export function channelTopic(prefix: string | null, name: string): string {
    // [spec] laravel-mercure §3: channel topic; legacy mode uses the bare channel name.
    return prefix === null ? name : `${prefix}channel/${rawUrlEncode(name)}`;
}

/** The whisper topic of a guarded channel: `P + "whisper/" + enc(name)` (legacy: `"whisper/" + enc(name)`). */
export function whisperTopic(prefix: string | null, name: string): string {
    // [spec] laravel-mercure §3: whisper topic.
    return `${prefix ?? ""}whisper/${rawUrlEncode(name)}`;
}

/**
 * The URL pattern granting a presence member the channel's subscription events and snapshot:
 * `<hubPath>/subscriptions/:match_type/<enc(channel topic)>{/:subscriber}?`, where `hubPath` is the public
 * URL's path without its trailing `/`.
 */
export function presencePattern(hubPath: string, prefix: string | null, name: string): string {
    // [spec] laravel-mercure §3: the optional group covers both the snapshot and per-subscriber topics.
    const path = hubPath.endsWith("/") ? hubPath.slice(0, -1) : hubPath;
    return `${path}/subscriptions/:match_type/${rawUrlEncode(channelTopic(prefix, name))}{/:subscriber}?`;
}
