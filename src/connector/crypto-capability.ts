import { EncryptedChannels, hasWebCrypto, loadCrypto } from "../crypto";
import type { Capability } from "./capabilities";
import type { ConnectorHost } from "./connector-host";

/** The encrypted channels' capability: the seam's hooks, and their keys and queue for the whispers that seal with them. */
export interface CryptoCapability extends Capability {
    /** The keys of the `private-encrypted-*` channels and their ordered decryption queue. */
    readonly channels: EncryptedChannels;
}

/**
 * Encrypted channels (laravel-mercure §6), loaded when the first `private-encrypted-` channel is joined: the keys of
 * every auth answer, before the stream opens (§6.4), and the ordered decryption of their broadcasts. Where WebCrypto
 * exists, the JWE code (its own chunk, with jose) was asked for beside this chunk (see `CRYPTO` in capability-slots.ts);
 * asking again here costs nothing then, and starts it where the slot's loader is not the one that ran (a fake's).
 */
export function create(host: ConnectorHost): CryptoCapability {
    const channels = new EncryptedChannels({ socketId: () => host.dispatcher.socketId });
    // A failed prefetch is forgotten by the loader: the first key or JWE downloads it again and reports a failure then.
    if (hasWebCrypto()) loadCrypto().catch(() => undefined);
    return {
        channels,
        dropped: (name) => channels.drop(name),
        cleared: () => channels.clear(),
        // Without WebCrypto, setKeys() reports crypto_unavailable at once: at join time, through the queue.
        authorized: ({ granted, response, report }) => channels.setKeys(granted.map((name) => [name, response.channels.get(name)?.jwk ?? null] as const), report),
    };
}
