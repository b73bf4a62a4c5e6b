import { rawUrlEncode } from "../../topic/encode";
import { channelTopic } from "../../topic/topics";

// Channel and whisper topics are built by the same functions the connector uses (src/topic/topics.ts):
// one implementation of laravel-mercure §3 for both sides of the wire.
export { channelTopic, whisperTopic } from "../../topic/topics";

/**
 * The URL pattern granting a presence member the channel's subscription events and snapshot:
 * `<hubPath>/subscriptions/:match_type/<enc(channel topic)>{/:subscriber}?`, where `hubPath` is the public
 * URL's path exactly as configured: a trailing `/` is kept, as Laravel keeps it.
 */
export function presencePattern(hubPath: string, prefix: string | null, name: string): string {
    // [spec] laravel-mercure §3: the optional group covers both the snapshot and per-subscriber topics.
    return `${hubPath}/subscriptions/:match_type/${rawUrlEncode(channelTopic(prefix, name))}{/:subscriber}?`;
}
