import { rawUrlEncode } from "../../index";

// The Laravel side's own topics (laravel-mercure §3), written here as the server writes them rather than imported
// from the connector's src/topic/: the dev stack reaches the browser code through the package's public entries only,
// and a stand-in that shares the client's code could not catch the client getting the spec wrong.

/** The topic of a channel's broadcasts: `prefix + "channel/" + rawurlencode(name)`, the bare name for a legacy server (null prefix). */
export function channelTopic(prefix: string | null, channel: string): string {
    return prefix === null ? channel : `${prefix}channel/${rawUrlEncode(channel)}`;
}

/** The topic of a guarded channel's whispers: `prefix + "whisper/" + rawurlencode(name)` ("whisper/…" for a legacy server). */
export function whisperTopic(prefix: string | null, channel: string): string {
    return `${prefix ?? ""}whisper/${rawUrlEncode(channel)}`;
}

/**
 * The URL pattern granting a presence member the channel's subscription events and snapshot:
 * `<hubPath>/subscriptions/:match_type/<enc(channel topic)>{/:subscriber}?`, where `hubPath` is the public
 * URL's path exactly as configured: a trailing `/` is kept, as Laravel keeps it.
 */
export function presencePattern(hubPath: string, prefix: string | null, name: string): string {
    // [spec] laravel-mercure §3: the optional group covers both the snapshot and per-subscriber topics.
    return `${hubPath}/subscriptions/:match_type/${rawUrlEncode(channelTopic(prefix, name))}{/:subscriber}?`;
}
