import { MercurePrivateChannel, type WhisperLink } from "../channel/mercure-private-channel";
import type { EncryptedChannels } from "../crypto";
import { loadFailed } from "../error-messages";
import { HubStream } from "../transport/hub-stream";
import type { Platform } from "../transport/platform";
import * as whisperModule from "../whisper/index";
import { whisperTarget, Whispers } from "../whisper/whispers";
import type { Capability } from "./capabilities";
import { CRYPTO } from "./capability-slots";
import type { ConnectorHost } from "./connector-host";

/** The whispers' capability: the seam's hooks, and the link the joined guarded channels whisper through. */
export interface WhisperCapability extends Capability {
    /** What `whisper()` and the whisper listeners of a joined guarded channel call. */
    readonly link: WhisperLink;
}

/**
 * Whispers (laravel-mercure §7), loaded on the first `whisper()` or whisper listener: publishing, and the per-channel
 * whisper streams following every auth (§7.3), sealed and opened with the encrypted channels' keys.
 */
export function create(host: ConnectorHost): WhisperCapability {
    // An encrypted channel's capability is loaded from its join, before its auth answer: found at once in practice.
    const encrypted = (): EncryptedChannels | Promise<EncryptedChannels> => {
        const capability = host.capabilities.use(CRYPTO);
        return capability instanceof Promise ? capability.then(({ channels }) => channels) : capability.channels;
    };
    const whispers: Whispers = new Whispers(
        {
            locate: (name) => (host.paused() || !host.registry.has(name) ? null : whisperTarget(name, host.hub.platform, host.auth)),
            refresh: () => {
                host.hub.platform?.stale?.(); // A refused whisper: a tabs' shared auth must not answer from its last grant.
                host.scheduleRefresh();
                return !host.paused();
            },
            joined: (channel) => host.registry.get(channel.name) === channel,
            cookieReplaced: () => host.auth.cookieReplaced(host.hub.platform),
            report: (name, error) => host.settle(() => host.reportEach([name], () => error)),
            // Only after an auth (the platform is resolved); drains end early if the budget needs their connections.
            open: (url, name, topic, handlers) => {
                host.streams.trimDrains(host.hub.budget() - whispers.size - 1);
                const platform = host.hub.platform as Platform;
                return new HubStream(platform.whisperEventSource ?? platform.EventSource, url, [name], [topic], handlers);
            },
            deliver: (name, event, payload) => host.settle(() => host.defer(() => host.deliveries.deliver(name, event, payload))),
            // [spec] laravel-mercure §7.3: the shared re-auth and backoff; a healthy main stream is not reopened.
            failed: () => host.settle(() => host.scheduleRetry(false)),
            // For the diagnosis of a refused whisper: the cookie's expiry, as far as `expires_in` tells it.
            tokenExpiresAt: () => host.cookieRefresh.expiresAt(),
        },
        {
            socketId: () => host.dispatcher.socketId,
            crypto: {
                seal: async (channel, plaintext) => (await encrypted()).seal(channel, plaintext),
                enqueue: (channel, jwe, deliver, fail) => {
                    const channels = encrypted();
                    if (!(channels instanceof Promise)) return channels.enqueue(channel, jwe, deliver, fail);
                    void channels.then(
                        (loaded) => loaded.enqueue(channel, jwe, deliver, fail),
                        (cause: unknown) => fail(loadFailed(channel, "encrypted channel", cause, "this whisper was dropped")),
                    );
                },
            },
            // The connector's budget less the main stream, or, shared across tabs, its own streams and what the engine has
            // left for every tab (see Platform.whisperRoom).
            maxStreams: (): number => {
                const room = host.hub.platform?.whisperRoom?.();
                return room === undefined ? host.hub.budget() - 1 : whispers.size + room;
            },
            // The publisher and the streams are in this chunk: one download on the first whisper or listener.
            load: async () => whisperModule,
        },
    );
    return {
        link: whispers.link,
        // Built after a download that failed before (issue 49.5): the listeners registered meanwhile open their streams.
        joined: (channel) => channel instanceof MercurePrivateChannel && whispers.link.listening(channel),
        dropped: (name) => whispers.drop(name),
        cleared: () => whispers.clear(),
        authStarted: () => whispers.authStarted(),
        authFailed: () => whispers.authFailed(),
        // A tab whose streams the tabs' engine holds leaves their renewal to it (share/stream-mux.ts).
        authorized: ({ granted, response: { topicPrefix, clientEvents }, platform }) =>
            whispers.sync({
                hub: platform.hub,
                topicPrefix,
                clientEvents,
                granted,
                via: platform.whisperEventSource ?? platform.EventSource,
                renewAt: platform.whisperEventSource === undefined ? host.cookieRefresh.renewalAt(host.hubTimeouts()) : Infinity,
            }),
        connections: () => whispers.size,
    };
}
