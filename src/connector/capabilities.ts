import type { AuthResponse } from "../auth/auth-response";
import type { MercureChannel } from "../channel/mercure-channel";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";
import type { EncryptedChannels } from "../crypto";
import type { MercureError } from "../errors";
import { MercurePresenceChannel } from "../presence/mercure-presence-channel";
import { seedPresence, type PresenceRooms } from "../presence/presence-rooms";
import type { Platform } from "../transport/platform";
import type { Whispers } from "../whisper/whispers";
import type { DebugLogger } from "./debug-log";

/** What one granted auth answer tells the capabilities. */
export interface Grant {
    /** The joined channels it granted (not denied, not evicted), in batch order. */
    readonly granted: readonly string[];
    /** The parsed answer: keys, topic prefix, `client_events`. */
    readonly response: AuthResponse;
    /** The platform the answer came through. */
    readonly platform: Platform;
    /** Report `error` on the joined channel `name`, once the connector's state is settled. */
    readonly report: (name: string, error: MercureError) => void;
}

/**
 * The one seam between the connector and a capability (presence, encrypted channels, whispers): the connector
 * tells each registered capability what happened to the channels, the auth and the stream, in registration order,
 * and knows nothing else of them. Every hook is optional.
 */
export interface Capability {
    /** A channel was joined (created by its kind). */
    joined?(channel: MercureChannel): void;
    /** A joined channel was left or evicted. */
    dropped?(name: string): void;
    /** `disconnect()`: forget everything kept for the joined channels, which stay joined. */
    cleared?(): void;
    /** An auth request for the batch leaves. */
    authStarted?(): void;
    /** The batch's auth failed, or there was nothing to authorize. */
    authFailed?(): void;
    /** An auth answer granted channels, before the stream for them opens. */
    authorized?(grant: Grant): void;
    /** These channels (every one when undefined) are no longer carried by a stream that serves. */
    streamLost?(channels?: Iterable<string>): void;
    /** The open stream serves `channels`. */
    announced?(channels: ReadonlySet<string>, platform: Platform | null, signal: AbortSignal, log: DebugLogger | null): void;
}

/** The registered capabilities, told in registration order. */
export class Capabilities {
    readonly #list: readonly Capability[];

    constructor(...list: Capability[]) {
        this.#list = list;
    }

    /** Tell every capability through `hook`. */
    tell<K extends keyof Capability>(hook: K, ...args: Parameters<NonNullable<Capability[K]>>): void {
        for (const capability of this.#list) (capability[hook] as ((...given: typeof args) => void) | undefined)?.(...args);
    }
}

/** Presence: a room per joined presence channel, seeded from its snapshot when a stream serves it (laravel-mercure §5). */
export function presenceCapability(rooms: PresenceRooms): Capability {
    return {
        joined: (channel) => channel instanceof MercurePresenceChannel && rooms.add(channel),
        dropped: (name) => rooms.remove(name),
        streamLost: (channels) => rooms.streamLost(channels),
        announced: (channels, platform, signal, log) => seedPresence(rooms, channels, platform, signal, log),
    };
}

/** Encrypted channels: the keys of every auth answer, before the stream opens (laravel-mercure §6.4). */
export function cryptoCapability(encrypted: EncryptedChannels): Capability {
    return {
        dropped: (name) => encrypted.drop(name),
        cleared: () => encrypted.clear(),
        // Without WebCrypto, setKeys() reports crypto_unavailable at once: at join time, through the queue.
        authorized: ({ granted, response, report }) => encrypted.setKeys(granted.map((name) => [name, response.channels.get(name)?.jwk ?? null] as const), report),
    };
}

/** Whispers: the private channels' whisper link, and the whisper streams following every auth (laravel-mercure §7.3). */
export function whisperCapability(whispers: Whispers): Capability {
    return {
        joined: (channel) => {
            if (channel instanceof MercurePrivateChannel) channel.whisperLink = whispers.link;
        },
        dropped: (name) => whispers.drop(name),
        cleared: () => whispers.clear(),
        authStarted: () => whispers.authStarted(),
        authFailed: () => whispers.authFailed(),
        authorized: ({ granted, response: { topicPrefix, clientEvents }, platform }) => whispers.sync({ hub: platform.hub, topicPrefix, clientEvents, granted }),
    };
}
