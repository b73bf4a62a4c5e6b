import type { Channel, PresenceChannel } from "laravel-echo";
import { createRoster, DEFAULT_LEAVE_DELAY, type PresenceEvent, type Roster } from "./roster";
import { MercurePrivateChannel } from "../channel/mercure-private-channel";

/**
 * The connector's `leaveDelay` option in ms when it is a number ≥ 0 (0: `leaving` at once), else (absent, not a
 * number, negative) {@link DEFAULT_LEAVE_DELAY}.
 */
const leaveDelay = (options: Channel["options"]): number => {
    const value: unknown = options?.leaveDelay;
    return typeof value === "number" && value >= 0 ? value : DEFAULT_LEAVE_DELAY;
};

/**
 * A presence Mercure channel (`presence-…`): a private channel that also knows who is online, from the
 * hub's active subscriptions (laravel-mercure §5).
 *
 * `TMember` is what the server's channel callback returns for a user (`user_info`); `unknown` unless given.
 */
export class MercurePresenceChannel<TMember = unknown> extends MercurePrivateChannel implements PresenceChannel {
    /**
     * The members, seeded from the snapshot and kept by subscription events; fed by the connector's presence rooms.
     *
     * @internal
     */
    readonly roster: Roster<TMember>;

    /** `here()`, `joining()` and `leaving()` callbacks, in registration order. */
    private readonly presenceCallbacks: Record<PresenceEvent, Array<(value: never) => void>> = { here: [], joining: [], leaving: [] };

    /**
     * Create a presence channel; the connector does this, through `presenceChannel()` / Echo's `join()`.
     */
    constructor(name: string, options: Channel["options"]) {
        super(name, options);
        // A copy of the list, so that a callback may register more without them hearing this change.
        this.roster = createRoster<TMember>((kind: PresenceEvent, value: unknown) => {
            for (const callback of [...this.presenceCallbacks[kind]]) this.invoke(`${kind}()`, () => callback(value as never));
        }, leaveDelay(options));
    }

    /**
     * Register a callback for the member list: called with every member once the channel is seeded, and
     * at once when it already is.
     */
    here(callback: (members: TMember[]) => void): this {
        const members = this.roster.members();
        if (members !== null) this.invoke("here()", () => callback(members));
        return this.register("here", callback);
    }

    /**
     * Register a callback for a user joining (their first connection to the channel).
     */
    joining(callback: (member: TMember) => void): this {
        return this.register("joining", callback);
    }

    /**
     * Register a callback for a user leaving (their last connection to the channel ended).
     */
    leaving(callback: (member: TMember) => void): this {
        return this.register("leaving", callback);
    }

    /** Add a callback of `kind`. */
    private register(kind: PresenceEvent, callback: (value: never) => void): this {
        this.presenceCallbacks[kind].push(callback);
        return this;
    }
}
