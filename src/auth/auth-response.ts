import { isRecord } from "../json";

/**
 * What the server said about one requested channel.
 */
export interface ChannelGrant {
    /** The full channel name. */
    name: string;
    /** True when the server denied this channel. */
    denied: boolean;
    /** The channel's decryption key, for granted `private-encrypted-*` channels. */
    jwk: JsonWebKey | null;
    /** Set (with `denied`) by the tabs' shared auth gateway for a name past the 100-channel limit of their union; never from the server. */
    limit?: true;
}

/**
 * A batch auth response, parsed defensively.
 */
export interface AuthResponse {
    /** One entry per channel the server listed, in its order; unknown or malformed entries are skipped. */
    channels: Map<string, ChannelGrant>;
    /** Cookie lifetime in seconds, or `null` when the server gave no usable value (no proactive refresh). */
    expiresIn: number | null;
    /** The topic namespace; `null` means a legacy server (bare channel names as topics). */
    topicPrefix: string | null;
    /** Whether the server minted whisper grants. */
    clientEvents: boolean;
    /** Set by the tabs' shared auth gateway on an answer from its last grant, given without a request to Laravel; never from the server. */
    fromGrant?: true;
    /** The stamp the request this answers wrote (see `auth-stamp.ts`), where it could be written. */
    stamp?: string | undefined;
}

/**
 * Parse a batch auth response body per laravel-mercure §2.5; never throws.
 */
export function parseAuthResponse(body: unknown): AuthResponse {
    // [spec] §2.5: a body that is not an object is treated as {}.
    const record = isRecord(body) ? body : {};
    const channels = new Map<string, ChannelGrant>();
    const entries = Array.isArray(record["channel_names"]) ? record["channel_names"] : [];
    for (const entry of entries) {
        if (!isRecord(entry)) continue;
        const { name, denied, jwk } = entry;
        // [spec] §2.5: entries with a non-string name are skipped.
        if (typeof name !== "string") continue;
        channels.set(name, {
            name,
            denied: denied === true,
            jwk: isRecord(jwk) ? (jwk as JsonWebKey) : null,
        });
    }
    const expiresIn = record["expires_in"];
    const topicPrefix = record["topic_prefix"];
    return {
        channels,
        // [spec] §2.5: expires_in only when a finite number > 0.
        expiresIn: typeof expiresIn === "number" && Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null,
        // [spec] §2.5: topic_prefix only when a string, otherwise legacy mode.
        topicPrefix: typeof topicPrefix === "string" ? topicPrefix : null,
        // [spec] §2.5: client events only when exactly true.
        clientEvents: record["client_events"] === true,
    };
}
