import type { Channel } from "laravel-echo";
import { unsupported } from "../errors";
import { channelKind } from "./channel-kind";
import { MercureChannel } from "./mercure-channel";
import { MercurePresenceChannel } from "./mercure-presence-channel";
import { MercurePrivateChannel } from "./mercure-private-channel";

/**
 * Create the channel object for a full channel name, of the class its kind needs; every way of joining
 * a channel ends here. Throws a `MercureError` (`unsupported`) for kinds this version cannot carry.
 */
export function createChannel(fullName: string, options: Channel["options"]): MercureChannel {
    switch (channelKind(fullName)) {
        case "public":
            return new MercureChannel(fullName, options);
        case "private":
            return new MercurePrivateChannel(fullName, options);
        case "encrypted":
            throw unsupported("An encrypted private channel", fullName);
        case "presence":
            return new MercurePresenceChannel(fullName, options);
    }
}
