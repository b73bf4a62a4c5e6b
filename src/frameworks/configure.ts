import { MercureConnector, MercureError, type MercureEchoOptions } from "../index";
import type { ConnectorSlot } from "./connector-slot";
import { withHubHost } from "./hub-host";

/**
 * Options of `configureEcho()` from `laravel-echo-mercure/react` and `/vue`: the connector's options, with
 * `broadcaster` optional (`"mercure"`, or `MercureConnector`), so that both `configureEcho({ broadcaster:
 * "mercure" })` and `configureEcho({})` compile without casts.
 */
export type ConfigureEchoOptions = MercureEchoOptions;

/**
 * Configure a framework package's Echo on the Mercure connector: check `broadcaster`, retire the connector of
 * the previous configuration (disconnect it, leave its channels), fill `host` ({@link withHubHost}) and hand
 * the framework's own `configureEcho` the slot's recording connector class as `broadcaster` (their bundled
 * Echo 2.5.0 accepts a connector class; it rejects the string `"mercure"`). `entry` names the import for
 * the error message (`laravel-echo-mercure/react`).
 */
export function configureMercure(
    configureFramework: (config: MercureEchoOptions) => void,
    slot: ConnectorSlot,
    options: ConfigureEchoOptions,
    entry: string,
): void {
    const broadcaster = options.broadcaster;
    if (broadcaster !== undefined && broadcaster !== "mercure" && broadcaster !== MercureConnector) {
        throw new MercureError(
            "invalid_option",
            `configureEcho() from ${entry} only supports the \`broadcaster\` option "mercure"; import configureEcho from the framework package itself for other broadcasters.`,
        );
    }
    slot.retire();
    configureFramework({ ...withHubHost(options), broadcaster: slot.connector });
}
