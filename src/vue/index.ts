/**
 * `laravel-echo-mercure/vue`: `@laravel/echo-vue` on the Mercure connector. An app changes one import line,
 * `from "@laravel/echo-vue"` to `from "laravel-echo-mercure/vue"`, and writes `configureEcho({ broadcaster:
 * "mercure" })`; the composables are `@laravel/echo-vue`'s own, re-exported.
 *
 * Mechanism: `@laravel/echo-vue` 2.5.0 keeps the config its `configureEcho()` stores in module state and builds
 * its bundled copy of Echo from it at the first composable (`echo()`); that Echo rejects the string `"mercure"`
 * but accepts a connector class as `broadcaster`. So this `configureEcho()` wraps theirs and passes our connector
 * class, rather than building Echo itself (their composables can only reach the instance they build) or asking
 * for a bundler alias of `laravel-echo` (their copy is bundled in). The wrapper also disconnects the previous
 * instance, which theirs drops silently. Their module imports `pusher-js` at top: a Mercure-only app aliases it
 * to `laravel-echo-mercure/no-pusher` (README "Vue").
 */
import { configureEcho as configureFramework, echo, usePresenceChannel } from "@laravel/echo-vue";
import { onMounted, onUnmounted, shallowRef, type Ref } from "vue";
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
} from "@laravel/echo-vue";
export type { ConfigureEchoOptions } from "../frameworks/configure";

/** The connector of the Echo instance `@laravel/echo-vue` built from the latest configuration. */
const slot = new ConnectorSlot();

/** The encrypted channels `useEchoEncrypted` components joined, counted per connector. */
const encrypted = new EncryptedSubscriptions();

/**
 * Configure `@laravel/echo-vue`'s Echo on the Mercure connector: `broadcaster` may be `"mercure"` or omitted;
 * `host` defaults to `VITE_MERCURE_HUB_URL`, else the page's `/.well-known/mercure`; every other option
 * (`authEndpoint`, `auth.headers`, `csrfToken`, `bearerToken`, `namespace`, `debug`, …) passes through to the
 * connector. Calling it again disconnects the previous instance and leaves its channels; components mounted
 * across that keep the old channels until they remount (`@laravel/echo-vue` caches them).
 */
export function configureEcho(options: ConfigureEchoOptions = {}): void {
    configureMercure((config) => configureFramework(config as unknown as Parameters<typeof configureFramework>[0]), slot, options, "laravel-echo-mercure/vue");
}

/** What {@link useEchoEncrypted} returns. */
export interface UseEchoEncryptedResult {
    /** The joined encrypted channel (for `error()` callbacks, `whisper()`). */
    channel(): MercurePrivateChannel;
    /** Stop listening and release the channel now (the last user leaves it), instead of at unmount. */
    leaveChannel(): void;
}

/**
 * Listen for `event` (or each of several events) on the end-to-end encrypted private channel `channelName`
 * (without the `private-encrypted-` prefix) from a component's `setup`: the channel is joined at setup, the
 * listeners bound at mount, payloads arrive decrypted, and the channel is left when the last component using it
 * unmounts. `@laravel/echo-vue`'s composables have no encrypted visibility; this is the one for Mercure.
 */
export function useEchoEncrypted<TPayload = unknown>(
    channelName: string,
    event: string | string[],
    callback: (payload: TPayload) => void,
): UseEchoEncryptedResult {
    const instance = echo();
    const channel = encrypted.acquire(instance, channelName);
    const names = Array.isArray(event) ? [...event] : [event];
    /** Whether the listeners are bound; false once released. */
    let listening = false;
    /** Whether this component still counts as a user of the channel. */
    let held = true;

    const leaveChannel = () => {
        if (listening) for (const name of names) channel.stopListening(name, callback);
        listening = false;
        if (held) encrypted.release(instance, channelName);
        held = false;
    };
    onMounted(() => {
        if (!held || listening) return;
        for (const name of names) channel.listen(name, callback);
        listening = true;
    });
    onUnmounted(leaveChannel);

    return { channel: () => channel, leaveChannel };
}

/**
 * The members of the presence channel `channelName` (without the `presence-` prefix) as a read-only ref, from a
 * component's `setup`: empty until the channel is seeded, then kept from `here`, `joining` and `leaving`, one
 * entry per user however many tabs they have open. The channel is joined and left as `usePresenceChannel` does
 * (shared with the other composables on it). `TMember` is what the server's channel callback returns.
 */
export function useEchoPresenceMembers<TMember = unknown>(channelName: string): Readonly<Ref<readonly TMember[]>> {
    const { channel } = usePresenceChannel(channelName);
    const members = shallowRef<readonly TMember[]>([]);
    const watch = watchPresenceMembers(channel() as PresenceChannelLike<TMember>, (list) => {
        members.value = list;
    });
    members.value = watch.initial;
    onUnmounted(watch.stop);
    return members;
}
