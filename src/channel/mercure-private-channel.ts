import { unsupported, type MercureError } from "../errors";
import { MercureChannel } from "./mercure-channel";

/**
 * A private Mercure channel (`private-…`): authorized by the batch auth request, delivered as private updates.
 * Encrypted private channels (`private-encrypted-…`) are of this class too: the connector decrypts their
 * broadcasts before `deliver()` and reports decryption failures on `error()`.
 */
export class MercurePrivateChannel extends MercureChannel {
    /**
     * Send a client event to the other members of the channel.
     *
     * Whispers (POSTs to the hub's whisper topic) are not available in this version; this throws a
     * {@link MercureError} with code `unsupported` rather than dropping the event silently.
     */
    whisper(eventName: string, _data: unknown): this {
        throw unsupported(`whisper("${eventName}")`, this.name);
    }
}
