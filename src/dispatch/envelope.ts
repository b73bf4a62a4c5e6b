import { parseJson } from "../json";

/**
 * A broadcast envelope as the Laravel server publishes it, after validation.
 *
 * Plaintext envelopes carry `event`/`payload`/`socket`; encrypted ones carry the compact JWE in `data`
 * and nothing else in clear.
 */
export type Envelope =
    | { kind: "plain"; channels: string[]; event: string; payload: unknown; socket: string | null }
    | { kind: "encrypted"; channels: string[]; data: string };

/**
 * Parse a main-stream message's `data` into an envelope, or `null` when it is not one we can route.
 *
 * Raw publishers (anything that is not JSON with a `channels` array) are not addressable and are
 * dropped silently, as are envelopes without a string `event`.
 */
export function parseEnvelope(data: unknown): Envelope | null {
    if (typeof data !== "string") return null;
    // [spec] laravel-mercure §4.4 step 2: unparsable data is dropped (parseJson gives undefined).
    const parsed = parseJson(data);
    if (typeof parsed !== "object" || parsed === null) return null;
    const record = parsed as Record<string, unknown>;
    const names: unknown = record["channels"];
    if (!Array.isArray(names)) return null;
    // Laravel sends strings only: keep its array then, and copy only to drop what is not a string.
    const isName = (name: unknown): name is string => typeof name === "string";
    const channels = names.every(isName) ? names : names.filter(isName);

    // [spec] §4.4 step 3: a string `data` marks an encrypted update; it is never read as plaintext.
    if (typeof record["data"] === "string") {
        return { kind: "encrypted", channels, data: record["data"] };
    }
    // [spec] §4.4 step 5: an envelope without a string event is dropped.
    if (typeof record["event"] !== "string") return null;
    const socket = record["socket"];
    return {
        kind: "plain",
        channels,
        event: record["event"],
        payload: record["payload"],
        socket: typeof socket === "string" && socket !== "" ? socket : null,
    };
}
