import { Connector } from "laravel-echo";
import { CHANNEL_PREFIXES } from "../topic/channel-kind";
import type { MercureChannel } from "../channel/mercure-channel";
import type { MercurePrivateChannel } from "../channel/mercure-private-channel";
import type { MercurePresenceChannel } from "../presence/mercure-presence-channel";

/**
 * Echo's channel methods in Mercure terms: each names a channel by its full name (the kind's prefix added) and joins
 * it through {@link EchoChannelMethods.join}; `leave` leaves every kind of a name. The connector
 * (`MercureConnector`) supplies the joining and leaving, and orchestrates everything else.
 */
export abstract class EchoChannelMethods extends Connector<"null", MercureChannel, MercurePrivateChannel, MercurePresenceChannel> {
    /** Return the joined channel with this full name, joining it when needed. */
    protected abstract join(name: string): MercureChannel;

    /** Listen for an event on a public channel; `T` is the payload's type. */
    listen<T = unknown>(name: string, event: string, callback: (payload: T) => void): MercureChannel {
        return this.channel(name).listen(event, callback);
    }

    /** Get a channel by its full name, joining it if needed; `private-…` names give a private channel. */
    channel(name: string): MercureChannel {
        return this.join(name);
    }

    /** Get a private channel by name (without the `private-` prefix), joining it if needed. */
    privateChannel(name: string): MercurePrivateChannel {
        return this.join("private-" + name) as MercurePrivateChannel;
    }

    /**
     * Get an end-to-end encrypted private channel by name (without the `private-encrypted-` prefix), joining it
     * if needed; its broadcasts are decrypted with the key the auth response grants (laravel-mercure §6).
     */
    encryptedPrivateChannel(name: string): MercurePrivateChannel {
        return this.join("private-encrypted-" + name) as MercurePrivateChannel;
    }

    /** Get a presence channel by name (without the `presence-` prefix), joining it if needed. */
    presenceChannel<TMember = unknown>(name: string): MercurePresenceChannel<TMember> {
        return this.join("presence-" + name) as MercurePresenceChannel<TMember>;
    }

    /** Leave a channel and its private, encrypted and presence variants. */
    leave(name: string): void {
        for (const prefix of CHANNEL_PREFIXES) this.leaveChannel(prefix + name);
    }
}
