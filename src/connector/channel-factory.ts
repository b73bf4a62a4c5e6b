import type { Channel } from "laravel-echo";
import { channelKind } from "../topic/channel-kind";
import { MercureChannel } from "../channel/mercure-channel";
import { MercurePresenceChannel } from "../presence/mercure-presence-channel";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";

/**
 * Create the channel object for a full channel name, of the class its kind needs; every way of joining
 * a channel ends here. An encrypted channel is a private channel whose broadcasts the connector decrypts
 * before delivering them.
 */
export function createChannel(fullName: string, options: Channel["options"]): MercureChannel {
    const kind = channelKind(fullName);
    const ChannelClass = kind === "public" ? MercureChannel : kind === "presence" ? MercurePresenceChannel : MercurePrivateChannel;
    return new ChannelClass(fullName, options);
}
