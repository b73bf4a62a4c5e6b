import { channelKind } from "../channel/channel-kind";
import { parseEnvelope } from "./envelope";

/**
 * Where one main-stream message goes: plaintext to the public, private and presence channels it names,
 * or an encrypted update to the encrypted channels it names. Channels are listed once each.
 */
export type Route =
    | { kind: "plain"; channels: string[]; event: string; payload: unknown }
    | { kind: "encrypted"; channels: string[]; data: string };

/**
 * Decide which channels a main-stream message's `data` reaches (laravel-mercure §4.4 steps 2–7), or
 * `null` when it reaches none. `carried(name)` says whether the channel is joined and carried by the
 * stream that delivered the message; `socketId` is this connection's id for `toOthers()`.
 */
export function routeMessage(data: unknown, socketId: string, carried: (name: string) => boolean): Route | null {
    const envelope = parseEnvelope(data);
    if (envelope === null) return null;
    if (envelope.kind === "encrypted") {
        // [spec] §4.4 step 3: an encrypted update goes to joined encrypted channels only, never as plaintext.
        const channels = select(envelope.channels, (name) => channelKind(name) === "encrypted" && carried(name));
        return channels.length === 0 ? null : { kind: "encrypted", channels, data: envelope.data };
    }
    // [spec] §4.4 step 4: toOthers().
    if (envelope.socket !== null && envelope.socket === socketId) return null;
    // [spec] §4.4 step 6: plaintext never reaches an encrypted channel (fail closed).
    const channels = select(envelope.channels, (name) => channelKind(name) !== "encrypted" && carried(name));
    return channels.length === 0 ? null : { kind: "plain", channels, event: envelope.event, payload: envelope.payload };
}

/** The distinct names that pass `keep`, in order (a broadcast names a few channels: no Set per message). */
function select(names: readonly string[], keep: (name: string) => boolean): string[] {
    const kept: string[] = [];
    for (const name of names) if (!kept.includes(name) && keep(name)) kept.push(name);
    return kept;
}
