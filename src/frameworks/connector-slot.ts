import { MercureConnector, type MercureConnectorOptions } from "../index";

/**
 * The connector of the Echo instance a framework package (`@laravel/echo-react`, `@laravel/echo-vue`) built from
 * the latest `configureEcho()`. Those packages build Echo lazily, at the first hook, and on a second
 * `configureEcho()` drop their instance without disconnecting it, so its stream would stay open for good. The
 * slot hands them a connector class that records each instance it constructs, and {@link ConnectorSlot.retire}
 * disconnects and leaves the recorded one before the framework is configured again.
 *
 * States: empty (not configured yet, configured but no hook ran, or retired) and holding one connector.
 */
export class ConnectorSlot {
    /** The connector of the framework's current Echo instance, once one was built; null otherwise. */
    private current: MercureConnector | null = null;

    /** The connector class to pass as `broadcaster`: a `MercureConnector` that records itself in this slot. */
    readonly connector: typeof MercureConnector;

    /** Create an empty slot and its recording connector class. */
    constructor() {
        const slot = this;
        this.connector = class SlotConnector extends MercureConnector {
            /** Create the connector like `MercureConnector` does, and record it as the slot's current one. */
            constructor(options: MercureConnectorOptions) {
                super(options);
                slot.current = this;
            }
        };
    }

    /**
     * Disconnect the current connector, if any, and leave all its channels, so that nothing of it reconnects
     * (a channel joined on it later would); the slot is empty afterwards.
     */
    retire(): void {
        const previous = this.current;
        this.current = null;
        if (previous === null) return;
        previous.disconnect();
        for (const name of Object.keys(previous.channels)) previous.leaveChannel(name);
    }
}
