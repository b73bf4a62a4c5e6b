import Echo from "laravel-echo";
import type { MercureChannel } from "../channel/mercure-channel";
import type { MercurePresenceChannel } from "../presence/mercure-presence-channel";
import type { MercurePrivateChannel } from "../channel/mercure-private-channel";
import { MercureError } from "../errors";
import { MercureConnector } from "./mercure-connector";
import type { MercureConnectorOptions } from "./options";

/**
 * Options of {@link MercureEcho}: the connector's, with `broadcaster` optional.
 */
export interface MercureEchoOptions extends MercureConnectorOptions {
    /** `"mercure"` or `MercureConnector`; the default. */
    broadcaster?: "mercure" | typeof MercureConnector;
    /** Skip Echo's axios/jQuery/Vue/Turbo interceptors that send `X-Socket-Id`. */
    withoutInterceptors?: boolean;
}

/**
 * Echo's constructor, typed for subclassing with a connector of our own. Echo types a custom connector's
 * `connector` as `never` and its channels as `any`; `Echo<any>` is the one instantiation a custom connector
 * fits, and the one apps declare (`window.Echo: Echo<any>`). Extending it makes a MercureEcho an `Echo`
 * (Echo's private member is inherited), and every member whose type depends on the broadcaster is
 * redeclared with the Mercure type (the {@link MercureEcho} interface below, or overridden), so no `any`
 * reaches MercureEcho's own members.
 */
type EchoWithCustomConnector = new (options: MercureConnectorOptions) => Echo<any>;

/**
 * Laravel Echo with the Mercure connector built in and typed: `new MercureEcho({ host })`.
 */
export class MercureEcho extends (Echo as unknown as EchoWithCustomConnector) {
    /** The options Echo was created with. */
    declare options: MercureEchoOptions;

    /** The Mercure connector. */
    declare connector: MercureConnector;

    /**
     * Create Echo on the Mercure connector; `broadcaster` may be omitted, `"mercure"` or `MercureConnector`.
     */
    constructor(options: MercureEchoOptions = {}) {
        const broadcaster = options.broadcaster;
        if (broadcaster !== undefined && broadcaster !== "mercure" && broadcaster !== MercureConnector) {
            throw new MercureError(
                "invalid_option",
                `MercureEcho only supports the \`broadcaster\` option "mercure"; use stock Echo for other broadcasters.`,
            );
        }
        super({ ...options, broadcaster: MercureConnector });
    }

    /**
     * Get an end-to-end encrypted private channel by name (without the `private-encrypted-` prefix): its
     * broadcasts arrive decrypted, and decryption failures on its `error()` callbacks. (Stock Echo's own
     * refuses connectors it does not know, so this one is overridden.)
     */
    override encryptedPrivate(name: string): MercurePrivateChannel {
        return this.connector.encryptedPrivateChannel(name);
    }
}

/**
 * The members of {@link MercureEcho} that Echo's own methods implement (each calls the connector's method of
 * the same purpose, as below), declared with the Mercure types: no code of ours is needed for them.
 */
export interface MercureEcho {
    /**
     * Get a public channel by name.
     */
    channel(name: string): MercureChannel;

    /**
     * Get a private channel by name (without the `private-` prefix).
     */
    private(name: string): MercurePrivateChannel;

    /**
     * Get a presence channel by name (without the `presence-` prefix); `TMember` is what the server's channel
     * callback returns for a user.
     */
    join<TMember = unknown>(name: string): MercurePresenceChannel<TMember>;

    /**
     * Listen for an event on a public channel; `T` is the payload's type.
     */
    listen<T = unknown>(channel: string, event: string, callback: (payload: T) => void): MercureChannel;
}

/**
 * Get an end-to-end encrypted private channel by name (without the `private-encrypted-` prefix) from any Echo
 * instance whose connector is a `MercureConnector`: stock Echo 2.5.0's own `encryptedPrivate()` refuses
 * connectors it does not know. Throws a `MercureError` (`invalid_option`) for another connector.
 */
export function encryptedPrivate(echo: { connector: unknown }, name: string): MercurePrivateChannel {
    if (!(echo.connector instanceof MercureConnector)) {
        throw new MercureError(
            "invalid_option",
            `encryptedPrivate(echo, "${name}") needs an Echo instance created with the MercureConnector broadcaster; create Echo with \`broadcaster: MercureConnector\`.`,
        );
    }
    return echo.connector.encryptedPrivateChannel(name);
}
