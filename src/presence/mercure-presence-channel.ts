import type { PresenceChannel } from "laravel-echo";
import type { PresenceEvent, Roster } from "./roster";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";

/**
 * A presence Mercure channel (`presence-…`): a private channel that also knows who is online, from the
 * hub's active subscriptions (laravel-mercure §5).
 *
 * `TMember` is what the server's channel callback returns for a user (`user_info`); `unknown` unless given.
 * The members are kept by the presence code, which the connector loads when the first presence channel is
 * joined (a page without one never downloads it): it attaches the {@link MercurePresenceChannel.roster}.
 */
export class MercurePresenceChannel<TMember = unknown> extends MercurePrivateChannel implements PresenceChannel {
    /**
     * The members, seeded from the snapshot and kept by subscription events; attached and fed by the connector's
     * presence capability, null until it has loaded.
     *
     * @internal
     */
    roster: Roster<TMember> | null = null;

    /** `here()`, `joining()` and `leaving()` callbacks, in registration order. */
    readonly #presenceCallbacks: Record<PresenceEvent, Array<(value: never) => void>> = { here: [], joining: [], leaving: [] };

    /**
     * Register a callback for the member list: called with every member once the channel is seeded, and
     * at once when it already is.
     */
    here(callback: (members: TMember[]) => void): this {
        const members = this.roster?.members();
        if (members != null) this.invoke("here()", () => callback(members));
        return this.#register("here", callback);
    }

    /**
     * Register a callback for a user joining (their first connection to the channel).
     */
    joining(callback: (member: TMember) => void): this {
        return this.#register("joining", callback);
    }

    /**
     * Register a callback for a user leaving (their last connection to the channel ended).
     */
    leaving(callback: (member: TMember) => void): this {
        return this.#register("leaving", callback);
    }

    /**
     * Report a member change to the callbacks of `kind` (the roster's listener); a copy of the list, so that a
     * callback may register more without them hearing this change.
     *
     * @internal
     */
    emit(kind: PresenceEvent, value: unknown): void {
        for (const callback of [...this.#presenceCallbacks[kind]]) this.invoke(`${kind}()`, () => callback(value as never));
    }

    /** Add a callback of `kind`. */
    #register(kind: PresenceEvent, callback: (value: never) => void): this {
        this.#presenceCallbacks[kind].push(callback);
        return this;
    }
}
