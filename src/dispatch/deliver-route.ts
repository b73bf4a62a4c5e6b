import type { MercureError } from "../errors";
import type { Route } from "./router";

/** Where routed broadcasts go: the connector's joined channels. None of these may throw. */
export interface RouteTarget {
    /** Deliver `event` with `payload` to the joined channel `name`; nothing when it is not joined. */
    deliver(name: string, event: string, payload: unknown): void;
    /** A broadcast for `name` could not be decrypted: report `error` on that channel. */
    failed(name: string, error: MercureError): void;
}

/** What decrypts the broadcasts of encrypted channels, in order of arrival (the crypto capability's `EncryptedChannels`). */
export interface RouteDecrypter {
    /** Queue `jwe` for `channel`: its plaintext event goes to `deliver`, a failure to `fail`. */
    enqueue(channel: string, jwe: string, deliver: (event: string, payload: unknown) => void, fail: (error: MercureError) => void): void;
}

/**
 * Deliver one routed main-stream message (laravel-mercure §4.4) to each of its channels, in order. A plain
 * broadcast goes to the listeners at once, and stops once `signal` aborts (a listener called `disconnect()`);
 * an encrypted one is queued for decryption in `crypto`, and settles in order of arrival, after the events
 * before it: the plaintext goes to the channel's listeners, a failure to `target.failed` (laravel-mercure §6.4).
 */
export function deliverRoute(route: Route, crypto: RouteDecrypter, target: RouteTarget, signal: AbortSignal): void {
    if (route.kind === "encrypted") {
        // [spec] laravel-mercure §4.4 step 3: the ledger claimed (id, channel) before decryption starts.
        // A left channel or a disconnect silences its queued events, so the channel found then is the one joined.
        for (const name of route.channels) {
            crypto.enqueue(name, route.data, (event, payload) => target.deliver(name, event, payload), (error) => target.failed(name, error));
        }
        return;
    }
    for (const name of route.channels) {
        if (signal.aborted) return; // A listener disconnected.
        target.deliver(name, route.event, route.payload);
    }
}
