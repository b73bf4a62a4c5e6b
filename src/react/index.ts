/**
 * `laravel-echo-mercure/react`: `@laravel/echo-react` on the Mercure connector. An app changes one import line,
 * `from "@laravel/echo-react"` to `from "laravel-echo-mercure/react"`, and writes `configureEcho({ broadcaster:
 * "mercure" })`; the hooks are `@laravel/echo-react`'s own, re-exported.
 *
 * Mechanism: `@laravel/echo-react` 2.5.0 keeps the config its `configureEcho()` stores in module state and builds
 * its bundled copy of Echo from it at the first hook (`echo()`); that Echo rejects the string `"mercure"` but
 * accepts a connector class as `broadcaster`. So this `configureEcho()` wraps theirs and passes our connector
 * class, rather than building Echo itself (their hooks can only reach the instance they build) or asking for a
 * bundler alias of `laravel-echo` (their copy is bundled in). The wrapper also disconnects the previous instance,
 * which theirs drops silently. Their module imports `pusher-js` at top: a Mercure-only app aliases it to
 * `laravel-echo-mercure/no-pusher` (README "React").
 */
import { configureEcho as configureFramework, echo, usePresenceChannel } from "@laravel/echo-react";
import { useCallback, useEffect, useMemo, useRef, useState, type DependencyList } from "react";
import type { MercurePrivateChannel } from "../index";
import { configureMercure, type ConfigureEchoOptions } from "../frameworks/configure";
import { ConnectorSlot } from "../frameworks/connector-slot";
import { EncryptedSubscriptions } from "../frameworks/encrypted-subscriptions";
import { watchPresenceMembers, type PresenceChannelLike } from "../frameworks/presence-members";

export {
    echo,
    echoIsConfigured,
    useChannel,
    useConnectionStatus,
    useEcho,
    useEchoModel,
    useEchoNotification,
    useEchoPresence,
    useEchoPublic,
    usePresenceChannel,
    usePublicChannel,
    useSocketId,
    type ConnectionStatus,
} from "@laravel/echo-react";
export type { ConfigureEchoOptions } from "../frameworks/configure";

/** The connector of the Echo instance `@laravel/echo-react` built from the latest configuration. */
const slot = new ConnectorSlot();

/** The encrypted channels `useEchoEncrypted` components joined, counted per connector. */
const encrypted = new EncryptedSubscriptions();

/**
 * Configure `@laravel/echo-react`'s Echo on the Mercure connector: `broadcaster` may be `"mercure"` or omitted;
 * `host` defaults to `VITE_MERCURE_HUB_URL`, else the page's `/.well-known/mercure`; every other option
 * (`authEndpoint`, `auth.headers`, `csrfToken`, `bearerToken`, `namespace`, `debug`, …) passes through to the
 * connector. Calling it again disconnects the previous instance and leaves its channels; components mounted
 * across that keep the old channels until they remount (`@laravel/echo-react` caches them).
 */
export function configureEcho(options: ConfigureEchoOptions = {}): void {
    configureMercure((config) => configureFramework(config as unknown as Parameters<typeof configureFramework>[0]), slot, options, "laravel-echo-mercure/react");
}

/** What {@link useEchoEncrypted} returns. */
export interface UseEchoEncryptedResult {
    /** The joined encrypted channel (for `error()` callbacks, `whisper()`), or null before the effect ran and after unmount. */
    channel(): MercurePrivateChannel | null;
}

/**
 * Listen for `event` (or each of several events) on the end-to-end encrypted private channel `channelName`
 * (without the `private-encrypted-` prefix) while the component is mounted: payloads arrive decrypted, and the
 * channel is left when the last component using it unmounts. `callback` is re-bound when `dependencies` change,
 * as with `useEcho`. `@laravel/echo-react`'s hooks have no encrypted visibility; this is the one for Mercure.
 */
export function useEchoEncrypted<TPayload = unknown>(
    channelName: string,
    event: string | string[],
    callback: (payload: TPayload) => void,
    dependencies: DependencyList = [],
): UseEchoEncryptedResult {
    // The caller's dependencies decide when the callback changes, as in useEcho.
    const listener = useCallback(callback, dependencies);
    const joined = useRef<MercurePrivateChannel | null>(null);
    const events = JSON.stringify(Array.isArray(event) ? event : [event]);

    useEffect(() => {
        const instance = echo();
        const channel = encrypted.acquire(instance, channelName);
        const names = JSON.parse(events) as string[];
        for (const name of names) channel.listen(name, listener);
        joined.current = channel;
        return () => {
            for (const name of names) channel.stopListening(name, listener);
            joined.current = null;
            encrypted.release(instance, channelName);
        };
    }, [channelName, events, listener]);

    return useMemo(() => ({ channel: () => joined.current }), []);
}

/**
 * The members of the presence channel `channelName` (without the `presence-` prefix) as state, while the
 * component is mounted: empty until the channel is seeded, then kept from `here`, `joining` and `leaving`, one
 * entry per user however many tabs they have open. The channel is joined and left as `usePresenceChannel`
 * does (shared with the other hooks on it). `TMember` is what the server's channel callback returns.
 */
export function useEchoPresenceMembers<TMember = unknown>(channelName: string): readonly TMember[] {
    const { channel } = usePresenceChannel(channelName);
    const [members, setMembers] = useState<readonly TMember[]>([]);

    // Runs after usePresenceChannel's own effect (declared first), which joined the channel.
    useEffect(() => {
        const joined = channel() as PresenceChannelLike<TMember> | null;
        if (joined === null) return;
        const watch = watchPresenceMembers(joined, setMembers);
        setMembers(watch.initial);
        return watch.stop;
    }, [channel]);

    return members;
}
