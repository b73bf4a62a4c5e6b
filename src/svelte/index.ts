/**
 * `laravel-echo-mercure/svelte`: Echo on the Mercure connector for Svelte 5, with the surface of
 * `laravel-echo-mercure/react` and `/vue` (the names of `@laravel/echo-react` and `@laravel/echo-vue`; Laravel
 * publishes no Svelte package for Echo): `configureEcho()` once, then `useEcho`, `useEchoPublic`,
 * `useEchoPresence`, `useEchoNotification`, `useEchoModel`, `useEchoEncrypted` and `useEchoPresenceMembers` from a
 * component's `<script>`. Each joins its channel at once and leaves it when the last component using it is
 * destroyed (`onDestroy`). State (`useConnectionStatus`, `useSocketId`, `useEchoPresenceMembers`) is an object
 * with a reactive `current`, as Svelte's own `MediaQuery`: read it in markup, `$derived` or `$effect`.
 *
 * Mechanism: the entry builds one `MercureEcho` from the latest configuration, lazily at first use; in
 * server-side rendering the helpers join nothing (their `channel()` is null) and state stays empty. Reactivity comes from `createSubscriber`
 * (`svelte/reactivity`), so this file is plain TypeScript: no Svelte compiler step in the package.
 */
import { onDestroy } from "svelte";
import { createSubscriber } from "svelte/reactivity";
import type { ConnectionStatus } from "laravel-echo";
import { MercureConnector, MercureEcho, MercureError, type MercureChannel, type MercurePresenceChannel, type MercurePrivateChannel } from "../index";
import type { ConfigureEchoOptions } from "../frameworks/configure";
import { EncryptedSubscriptions } from "../frameworks/encrypted-subscriptions";
import { withHubHost } from "../frameworks/hub-host";
import { watchPresenceMembers, type PresenceChannelLike } from "../frameworks/presence-members";

export type { ConfigureEchoOptions } from "../frameworks/configure";
export type { ConnectionStatus } from "laravel-echo";

/** Which kind of channel a helper joins, as `@laravel/echo-react` names them. */
export type ChannelVisibility = "public" | "private" | "presence";

/** The channel each visibility gives. */
type ChannelOf<TVisibility extends ChannelVisibility> = TVisibility extends "presence" ? MercurePresenceChannel : TVisibility extends "public" ? MercureChannel : MercurePrivateChannel;

/** The latest configuration, or null before `configureEcho()`. */
let configuration: ConfigureEchoOptions | null = null;

/** The Echo instance built from {@link configuration}, once something used it. */
let instance: MercureEcho | null = null;

/** Components using each joined channel (full name) of {@link instance}. */
let counts = new Map<string, number>();

/** The encrypted channels `useEchoEncrypted` components joined, counted per connector. */
const encrypted = new EncryptedSubscriptions();

/**
 * Configure Echo on the Mercure connector: `broadcaster` may be `"mercure"` or omitted; `host` defaults to
 * `VITE_MERCURE_HUB_URL`, else the page's `/.well-known/mercure`; every other option passes through to the
 * connector. Calling it again disconnects the previous instance and leaves its channels; components mounted
 * across that keep the old channels until they are created again.
 */
export function configureEcho(options: ConfigureEchoOptions = {}): void {
    const broadcaster = options.broadcaster;
    if (broadcaster !== undefined && broadcaster !== "mercure" && broadcaster !== MercureConnector) {
        throw new MercureError("invalid_option", 'configureEcho() from laravel-echo-mercure/svelte only supports the `broadcaster` option "mercure".');
    }
    const previous = instance;
    instance = null;
    counts = new Map();
    configuration = { ...withHubHost(options), broadcaster: "mercure" };
    if (previous === null) return;
    previous.disconnect();
    for (const name of Object.keys(previous.connector.channels)) previous.leaveChannel(name);
}

/** Whether `configureEcho()` was called. */
export function echoIsConfigured(): boolean {
    return configuration !== null;
}

/**
 * The Echo instance of the latest configuration, built at the first call; throws a `MercureError`
 * (`invalid_option`) before `configureEcho()`.
 */
export function echo(): MercureEcho {
    if (configuration === null) {
        throw new MercureError("invalid_option", "Echo is not configured: call configureEcho() from laravel-echo-mercure/svelte before using Echo (in the app's entry or root layout).");
    }
    return (instance ??= new MercureEcho(configuration));
}

/**
 * Whether this runs in a browser. Server-side rendering (SvelteKit, Inertia's SSR) runs components' `<script>`
 * too: there the helpers join nothing, and `channel()` is null.
 */
const inBrowser = (): boolean => typeof window !== "undefined";

/** The full name of a channel: `private-` and `presence-` prefixed, as Echo keys them. */
function fullName(name: string, visibility: ChannelVisibility): string {
    return visibility === "public" ? name : `${visibility}-${name}`;
}

/** Join `name` for one more user (the channel object Echo keeps for it). */
function acquire<TVisibility extends ChannelVisibility>(name: string, visibility: TVisibility): { echo: MercureEcho; channel: ChannelOf<TVisibility> } {
    const current = echo();
    const channel = visibility === "presence" ? current.join(name) : visibility === "private" ? current.private(name) : current.channel(name);
    const key = fullName(name, visibility);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return { echo: current, channel: channel as ChannelOf<TVisibility> };
}

/**
 * One user of `name` on `owner` is gone: the last one leaves the channel (`leaveAll`: `echo.leave(name)`, every
 * visibility of it). Nothing when `owner` was replaced by a new configuration meanwhile (that left everything).
 */
function release(owner: MercureEcho, name: string, visibility: ChannelVisibility, leaveAll: boolean): void {
    if (owner !== instance) return;
    const key = fullName(name, visibility);
    const count = counts.get(key);
    if (count === undefined) return;
    if (count > 1) {
        counts.set(key, count - 1);
        return;
    }
    counts.delete(key);
    if (leaveAll) owner.leave(name);
    else owner.leaveChannel(key);
}

/** What {@link useChannel} returns. */
export interface UseChannelResult<TChannel> {
    /** Leave the channel now (this component's share; the last user leaves it): `leaveAll` leaves every visibility of the name. */
    leaveChannel(leaveAll?: boolean): void;
    /** Leave the channel and every other visibility of its name. */
    leave(): void;
    /** The joined channel, or null once this component left it. */
    channel(): TChannel | null;
}

/**
 * Join `channelName` (without prefix) of `visibility` (default private) for this component, and leave it when the
 * component is destroyed (the last component using it leaves it). Call it from a component's `<script>`.
 */
export function useChannel<TVisibility extends ChannelVisibility = "private">(channelName: string, visibility: TVisibility = "private" as TVisibility): UseChannelResult<ChannelOf<TVisibility>> {
    // Registered first: outside a component's initialisation onDestroy throws, before anything was joined.
    onDestroy(() => leaveChannel());
    const joined = inBrowser() ? acquire(channelName, visibility) : null;
    let channel: ChannelOf<TVisibility> | null = joined?.channel ?? null;
    const leaveChannel = (leaveAll = false): void => {
        if (channel === null || joined === null) return;
        channel = null;
        release(joined.echo, channelName, visibility, leaveAll);
    };
    return { leaveChannel, leave: () => leaveChannel(true), channel: () => channel };
}

/** {@link useChannel} for a presence channel. */
export function usePresenceChannel(channelName: string): UseChannelResult<MercurePresenceChannel> {
    return useChannel(channelName, "presence");
}

/** {@link useChannel} for a public channel. */
export function usePublicChannel(channelName: string): UseChannelResult<MercureChannel> {
    return useChannel(channelName, "public");
}

/** What {@link useEcho} and its variants return. */
export interface UseEchoResult<TChannel> extends UseChannelResult<TChannel> {
    /** Stop listening (the channel stays joined). */
    stopListening(): void;
    /** Listen again after {@link UseEchoResult.stopListening}. */
    listen(): void;
}

/**
 * Listen for `event` (or each of several; none: just join) on `channelName` of `visibility` (default private)
 * with `callback` while the component lives; the channel is joined at once and left when the last component
 * using it is destroyed. Event names follow Echo's rules (`.name` for a `broadcastAs()` name).
 */
export function useEcho<TPayload = unknown, TVisibility extends ChannelVisibility = "private">(
    channelName: string,
    event: string | string[] = [],
    callback: (payload: TPayload) => void = () => undefined,
    visibility: TVisibility = "private" as TVisibility,
): UseEchoResult<ChannelOf<TVisibility>> {
    const joined = useChannel(channelName, visibility);
    const names = Array.isArray(event) ? [...event] : [event];
    return listening(
        joined,
        (channel) => {
            for (const name of names) channel.listen(name, callback);
        },
        (channel) => {
            for (const name of names) channel.stopListening(name, callback);
        },
    );
}

/**
 * What {@link useEcho} and {@link useEchoNotification} share: listen on `joined`'s channel with `on` at once, stop with
 * `off` when the component is destroyed (the channel stays joined for the other components that use it).
 */
function listening<TChannel>(joined: UseChannelResult<TChannel>, on: (channel: TChannel) => void, off: (channel: TChannel) => void): UseEchoResult<TChannel> {
    let active = false;
    const listen = (): void => {
        const channel = joined.channel();
        if (active || channel === null) return;
        on(channel);
        active = true;
    };
    const stopListening = (): void => {
        const channel = joined.channel();
        if (active && channel !== null) off(channel);
        active = false;
    };
    const leaveChannel = (leaveAll = false): void => {
        stopListening();
        joined.leaveChannel(leaveAll);
    };
    listen();
    onDestroy(stopListening);
    return { listen, stopListening, leaveChannel, leave: () => leaveChannel(true), channel: joined.channel };
}

/** {@link useEcho} on a public channel. */
export function useEchoPublic<TPayload = unknown>(channelName: string, event: string | string[] = [], callback: (payload: TPayload) => void = () => undefined): UseEchoResult<MercureChannel> {
    return useEcho(channelName, event, callback, "public");
}

/** {@link useEcho} on a presence channel (`channel()` for `here`, `joining`, `leaving`, `whisper`). */
export function useEchoPresence<TPayload = unknown>(channelName: string, event: string | string[] = [], callback: (payload: TPayload) => void = () => undefined): UseEchoResult<MercurePresenceChannel> {
    return useEcho(channelName, event, callback, "presence");
}

/**
 * Listen for an Eloquent model's broadcasts (`App.Models.Post.1`, events such as `PostUpdated`, sent without
 * the namespace) on its private channel: `useEchoModel("App.Models.Post", 1, "PostUpdated", callback)`.
 */
export function useEchoModel<TPayload = unknown>(model: string, identifier: string | number, event: string | string[], callback: (payload: TPayload) => void): UseEchoResult<MercurePrivateChannel> {
    const names = (Array.isArray(event) ? event : [event]).map((name) => (name.startsWith(".") ? name : "." + name));
    return useEcho(`${model}.${identifier}`, names, callback, "private");
}

/**
 * Listen for Laravel notifications on the private channel `channelName` (`App.Models.User.1`), of the types in
 * `type` only when given (`App.Notifications.InvoicePaid` or `App\\Notifications\\InvoicePaid`).
 */
export function useEchoNotification<TPayload extends { type: string } = { id: string; type: string }>(
    channelName: string,
    callback: (notification: TPayload) => void,
    type: string | string[] = [],
): UseEchoResult<MercurePrivateChannel> {
    const joined = useChannel(channelName, "private");
    const types = (Array.isArray(type) ? type : [type]).flatMap((name) => [name.replace(/\./g, "\\"), name.replace(/\\/g, ".")]);
    const handler = (notification: TPayload): void => {
        if (types.length === 0 || types.includes(notification.type)) callback(notification);
    };
    return listening(
        joined,
        (channel) => channel.notification(handler as never),
        (channel) => channel.stopListeningForNotification(handler as never),
    );
}

/** What {@link useEchoEncrypted} returns. */
export interface UseEchoEncryptedResult {
    /** The joined encrypted channel (for `error()` callbacks, `whisper()`); null in server-side rendering. */
    channel(): MercurePrivateChannel | null;
    /** Stop listening and release the channel now (the last user leaves it), instead of when the component is destroyed. */
    leaveChannel(): void;
}

/**
 * Listen for `event` (or each of several events) on the end-to-end encrypted private channel `channelName`
 * (without the `private-encrypted-` prefix): payloads arrive decrypted, and the channel is left when the last
 * component using it is destroyed.
 */
export function useEchoEncrypted<TPayload = unknown>(channelName: string, event: string | string[], callback: (payload: TPayload) => void): UseEchoEncryptedResult {
    onDestroy(() => leaveChannel());
    const owner = echo();
    const channel = inBrowser() ? encrypted.acquire(owner, channelName) : null;
    const names = Array.isArray(event) ? [...event] : [event];
    for (const name of names) channel?.listen(name, callback);
    let held = channel !== null;
    const leaveChannel = (): void => {
        if (!held) return;
        held = false;
        for (const name of names) channel?.stopListening(name, callback);
        encrypted.release(owner, channelName);
    };
    return { channel: () => channel, leaveChannel };
}

/** A value that Svelte tracks: read `current` in markup, `$derived` or `$effect`. */
export interface ReactiveValue<T> {
    /** The value now; reading it in a reactive context re-runs that context when it changes. */
    readonly current: T;
}

/** The connection status of Echo (`connected`, `connecting`, `reconnecting`, `disconnected`, `failed`), as reactive state. */
export function useConnectionStatus(): ReactiveValue<ConnectionStatus> {
    const owner = echo();
    const subscribe = createSubscriber((update) => owner.connector.onConnectionChange(update));
    return {
        get current() {
            subscribe();
            return owner.connectionStatus();
        },
    };
}

/** This connection's socket id (what `toOthers()` needs, see `laravel-echo-mercure/http`), as reactive state. */
export function useSocketId(): ReactiveValue<string> {
    const owner = echo();
    const subscribe = createSubscriber((update) => owner.connector.onConnectionChange(update));
    return {
        get current() {
            subscribe();
            return owner.socketId() ?? "";
        },
    };
}

/**
 * The members of the presence channel `channelName` (without the `presence-` prefix) as reactive state: empty
 * until the channel is seeded, then kept from `here`, `joining` and `leaving`, one entry per user however many
 * tabs they have open. The channel is joined at once and left as {@link usePresenceChannel} does.
 */
export function useEchoPresenceMembers<TMember = unknown>(channelName: string): ReactiveValue<readonly TMember[]> {
    const channel = usePresenceChannel(channelName).channel() as PresenceChannelLike<TMember> | null;
    let members: readonly TMember[] = [];
    const watch = channel === null ? null : watchPresenceMembers<TMember>(channel, (list) => {
        members = list;
        changed?.();
    });
    members = watch?.initial ?? [];
    /** Tells Svelte of a change while something reads `current`; undefined otherwise. */
    let changed: (() => void) | undefined;
    const subscribe = createSubscriber((update) => {
        changed = update;
        return () => {
            changed = undefined;
        };
    });
    if (watch !== null) onDestroy(watch.stop);
    return {
        get current() {
            subscribe();
            return members;
        },
    };
}
