import Echo from "laravel-echo";
import type { MercureChannel } from "../channel/mercure-channel";
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
 * overridden below with the Mercure type, so no `any` reaches MercureEcho's own members.
 */
const EchoWithCustomConnector = Echo as unknown as new (options: MercureConnectorOptions) => Echo<any>;

/**
 * Laravel Echo with the Mercure connector built in and typed: `new MercureEcho({ host })`.
 */
export class MercureEcho extends EchoWithCustomConnector {
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
     * Get a public channel by name.
     */
    override channel(name: string): MercureChannel {
        return this.connector.channel(name);
    }

    /**
     * Get a private channel by name (without the `private-` prefix).
     */
    override private(name: string): MercurePrivateChannel {
        return this.connector.privateChannel(name);
    }

    /**
     * Presence channels are not available in this version; throws a `MercureError` (`unsupported`).
     */
    override join(name: string): never {
        return this.connector.presenceChannel(name);
    }

    /**
     * Encrypted private channels are not available in this version; throws a `MercureError` (`unsupported`).
     */
    override encryptedPrivate(name: string): never {
        return this.connector.encryptedPrivateChannel(name);
    }

    /**
     * Listen for an event on a public channel; `T` is the payload's type.
     */
    override listen<T = unknown>(channel: string, event: string, callback: (payload: T) => void): MercureChannel {
        return this.connector.listen(channel, event, callback);
    }
}

/**
 * Join an encrypted private channel through stock Echo, whose own `encryptedPrivate()` only knows Pusher.
 *
 * Not available in this version: throws a `MercureError` (`unsupported`).
 */
export function encryptedPrivate(echo: { connector: unknown }, name: string): never {
    if (!(echo.connector instanceof MercureConnector)) {
        throw new MercureError("invalid_option", "encryptedPrivate() needs an Echo instance created with the MercureConnector broadcaster.");
    }
    return echo.connector.encryptedPrivateChannel(name);
}
