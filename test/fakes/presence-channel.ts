import type { MercurePresenceChannel } from "../../src/presence/mercure-presence-channel";
import { attachRoster, type Roster } from "../../src/presence/roster";

/** A presence channel made on its own in a test, with its roster attached as the connector's presence capability does at join. */
export function withRoster<TMember>(channel: MercurePresenceChannel<TMember>): MercurePresenceChannel<TMember> & { readonly roster: Roster<TMember> } {
    attachRoster(channel);
    return channel as MercurePresenceChannel<TMember> & { readonly roster: Roster<TMember> };
}
