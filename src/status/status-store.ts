import type { ConnectionStatus } from "laravel-echo";

/**
 * Holds the connection status; {@link StatusStore.set} is the only writer and notifies listeners on change.
 *
 * Listeners are notified through `schedule`, so that an owner in the middle of a state change can run
 * them once its state is settled (the connector defers them to its callback queue).
 */
export class StatusStore {
    /** The current status. */
    #current: ConnectionStatus = "disconnected";

    /** Listeners registered through {@link StatusStore.subscribe}. */
    readonly #listeners = new Set<(status: ConnectionStatus) => void>();

    /** Runs the listeners' notification (the owner may defer it until its state is settled). */
    readonly #schedule: (notify: () => void) => void;

    /**
     * Create a store whose listener notifications run through `schedule` (at once by default).
     */
    constructor(schedule: (notify: () => void) => void = (notify) => notify()) {
        this.#schedule = schedule;
    }

    /**
     * Read the current status.
     */
    get(): ConnectionStatus {
        return this.#current;
    }

    /**
     * Change the status and schedule the listeners' notification; does nothing when it is unchanged. A
     * throwing listener does not stop the others.
     */
    set(status: ConnectionStatus): void {
        if (status === this.#current) return;
        this.#current = status;
        this.#schedule(() => {
            for (const listener of [...this.#listeners]) {
                try {
                    listener(status);
                } catch (error) {
                    console.error("laravel-echo-mercure: an onConnectionChange() callback threw.", error);
                }
            }
        });
    }

    /**
     * Register a listener for status changes; returns the function that unregisters it.
     */
    subscribe(listener: (status: ConnectionStatus) => void): () => void {
        const entry = (status: ConnectionStatus) => listener(status);
        this.#listeners.add(entry);
        return () => {
            this.#listeners.delete(entry);
        };
    }
}
