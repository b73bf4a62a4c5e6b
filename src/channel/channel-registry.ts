import type { Channel } from "laravel-echo";
import type { MercureChannel } from "./mercure-channel";

/**
 * The joined channels by full name, in join order (the order of the auth batch). A `Map`, so names such
 * as `__proto__` or `constructor` are ordinary names and hub-supplied names never reach the prototype.
 */
export class ChannelRegistry {
    /**
     * @param create Makes the channel object for a full name, of the class its kind needs (the connector's
     *   `createChannel`: the presence class lives with the presence capability, above this layer).
     */
    constructor(readonly create: (fullName: string, options: Channel["options"]) => MercureChannel) {}

    /** Full name → channel, in join order. */
    readonly #byName = new Map<string, MercureChannel>();

    /**
     * The channel with this full name, if joined.
     */
    get(name: string): MercureChannel | undefined {
        return this.#byName.get(name);
    }

    /**
     * Whether a channel with this full name is joined.
     */
    has(name: string): boolean {
        return this.#byName.has(name);
    }

    /**
     * The joined names, in join order.
     */
    names(): string[] {
        return [...this.#byName.keys()];
    }

    /**
     * The joined channels by full name, in join order, as a prototype-less record (Echo's `channels`).
     */
    snapshot(): Record<string, MercureChannel> {
        const snapshot: Record<string, MercureChannel> = Object.create(null);
        for (const [name, channel] of this.#byName) snapshot[name] = channel;
        return snapshot;
    }

    /**
     * Add the channel for `name`, of the class its kind needs (see `createChannel`).
     */
    add(name: string, options: Channel["options"]): MercureChannel {
        const channel = this.create(name, options);
        this.#byName.set(name, channel);
        return channel;
    }

    /**
     * Remove a channel and mark it unsubscribed; returns it, or undefined when it was not joined.
     */
    remove(name: string): MercureChannel | undefined {
        const channel = this.#byName.get(name);
        if (channel === undefined) return undefined;
        this.#byName.delete(name);
        channel.markUnsubscribed();
        return channel;
    }

    /**
     * Mark the named joined channels subscribed, in order, while `carried()` holds: an earlier
     * `subscribed()` callback may disconnect or replace the stream that carries them.
     */
    markSubscribed(names: Iterable<string>, carried: () => boolean): void {
        for (const name of names) {
            if (!carried()) return;
            this.#byName.get(name)?.markSubscribed();
        }
    }

    /**
     * Mark the named channels unsubscribed (every channel when no names are given): the connection
     * carrying them was lost or is no longer relied on.
     */
    markUnsubscribed(names?: Iterable<string>): void {
        for (const name of names ?? this.#byName.keys()) this.#byName.get(name)?.markUnsubscribed();
    }
}
