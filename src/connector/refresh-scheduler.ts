/**
 * Runs the connector's refresh (the batch auth, then the stream) so that joins and leaves made in the
 * same tick coalesce into one run, and a change during a running refresh causes exactly one trailing run.
 *
 * States: `idle`; `queued` between a request and the microtask that starts the run; `running` until no
 * trailing run is requested. {@link RefreshScheduler.reset} drops queued and running work: a run already
 * awaiting its auth answer finds itself stale through the connector's own generation check.
 */
export class RefreshScheduler {
    /** Where the scheduler is; see the class docblock. */
    #state: "idle" | "queued" | "running" = "idle";

    /** A request arrived during a running refresh: run exactly one more. */
    #trailing = false;

    /** Bumped by {@link RefreshScheduler.reset}; a loop started before stops. */
    #generation = 0;

    /** The refresh itself. */
    readonly #run: () => Promise<void>;

    /** Receives what a run throws. */
    readonly #fail: (error: unknown) => void;

    /** Who waits for the end of the running refresh (see {@link RefreshScheduler.running}). */
    readonly #waiting: Array<() => void> = [];

    /**
     * Create a scheduler for `run`; `fail` receives what a run throws (never an unhandled rejection).
     */
    constructor(run: () => Promise<void>, fail: (error: unknown) => void) {
        this.#run = run;
        this.#fail = fail;
    }

    /**
     * Ask for a refresh: queued for the next microtask, or one trailing run when a refresh is running.
     */
    request(): void {
        if (this.#state === "running") {
            this.#trailing = true;
            return;
        }
        if (this.#state === "queued") return;
        this.#state = "queued";
        const generation = this.#generation;
        // [spec] laravel-mercure §9 item 5: await one microtask before capturing the channel set.
        queueMicrotask(() => {
            if (generation !== this.#generation) return;
            this.#loop(generation).catch((error: unknown) => {
                if (generation === this.#generation) this.#fail(error);
            });
        });
    }

    /** Null when no refresh is queued or running; else a promise that resolves once none is. */
    running(): Promise<void> | null {
        return this.#state === "idle" ? null : new Promise((resolve) => this.#waiting.push(resolve));
    }

    /** Nothing is queued or running any more: tell who waits. */
    #idle(): void {
        this.#state = "idle";
        for (const resolve of this.#waiting.splice(0)) resolve();
    }

    /**
     * The running refresh takes the state it acts on now: requests made before this point are served by it and need
     * no trailing run (a refresh that first waited, e.g. for the hub's location, must not authorize the same set twice).
     */
    captured(): void {
        this.#trailing = false;
    }

    /**
     * Forget queued and running refreshes (after `disconnect()`).
     */
    reset(): void {
        this.#generation++;
        this.#trailing = false;
        this.#idle();
    }

    /** [spec] laravel-mercure §9 item 6: refreshes are serialised, with at most one trailing run. */
    async #loop(generation: number): Promise<void> {
        this.#state = "running";
        try {
            do {
                this.#trailing = false;
                await this.#run();
            } while (this.#trailing && generation === this.#generation);
        } finally {
            if (generation === this.#generation) this.#idle();
        }
    }
}
