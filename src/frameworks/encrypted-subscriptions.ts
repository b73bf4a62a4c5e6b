import { encryptedPrivate, type MercurePrivateChannel } from "../index";

/** The Echo instance of a framework package, as far as this module needs it. */
export interface EchoLike {
    /** Its connector; a `MercureConnector` when configured by this package. */
    readonly connector: object;
}

/**
 * Encrypted private channels joined by components (`useEchoEncrypted`), counted per connector so that the
 * channel is left when the last component using it goes away, as the framework packages do for their own
 * hooks (which have no encrypted visibility). Bound: one counter per joined encrypted channel of a live
 * connector; a retired connector's counters go with it (weakly held).
 */
export class EncryptedSubscriptions {
    /** Components using each encrypted channel (name without `private-encrypted-`), by connector. */
    private readonly counts = new WeakMap<object, Map<string, number>>();

    /**
     * Join the encrypted private channel `name` (without the `private-encrypted-` prefix) on `echo`'s connector
     * for one more user; throws a `MercureError` (`invalid_option`) when that connector is not a Mercure one.
     */
    acquire(echo: EchoLike, name: string): MercurePrivateChannel {
        const channel = encryptedPrivate(echo, name);
        let counts = this.counts.get(echo.connector);
        if (counts === undefined) this.counts.set(echo.connector, (counts = new Map()));
        counts.set(name, (counts.get(name) ?? 0) + 1);
        return channel;
    }

    /** One user of `name` on `echo` is gone; the last one leaves the channel. */
    release(echo: EchoLike, name: string): void {
        const counts = this.counts.get(echo.connector);
        const count = counts?.get(name);
        if (counts === undefined || count === undefined) return;
        if (count > 1) {
            counts.set(name, count - 1);
            return;
        }
        counts.delete(name);
        (echo.connector as { leaveChannel(name: string): void }).leaveChannel("private-encrypted-" + name);
    }
}
