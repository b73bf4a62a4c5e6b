import { MercurePresenceChannel } from "../presence/mercure-presence-channel";
import { createPresenceRooms, seedPresence } from "../presence/presence-rooms";
import { attachRoster } from "../presence/roster";
import type { Capability } from "./capabilities";
import type { ConnectorHost } from "./connector-host";

/**
 * Presence (laravel-mercure §5), loaded when the first presence channel is joined: a room per joined presence channel
 * with its roster, a `match_urlpattern` per presence channel on the stream, seeded from its snapshot when a stream
 * serves it and kept by the subscription events.
 */
export function create(host: ConnectorHost): Capability {
    const rooms = createPresenceRooms();
    // A snapshot refused on the hub cookie of another connector of this browser (see `BatchAuth.cookieReplaced`): authorize
    // again; the refresh keeps the open stream and seeds its presence channels again, on this connector's cookie.
    const cookieReplaced = (): boolean => {
        if (!host.auth.cookieReplaced(host.hub.platform)) return false;
        host.scheduleRefresh();
        return true;
    };
    return {
        joined: (channel) => {
            if (!(channel instanceof MercurePresenceChannel)) return;
            const roster = attachRoster(channel);
            rooms.add({ name: channel.name, roster, reportError: (error) => channel.reportError(error), cookieReplaced });
        },
        dropped: (name) => rooms.remove(name),
        streamLost: (channels) => rooms.streamLost(channels),
        announced: (channels, platform, signal, log) => seedPresence(rooms, channels, platform, signal, log),
        patterns: (hub, names, topics) => rooms.patterns(hub, names, topics),
        subscription: (data, id) => rooms.handleEvent(data, id),
    };
}
