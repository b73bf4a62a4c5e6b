/**
 * The browser signals after which timers may have run late or not at all: the network came back
 * (`online`), the page is shown again (`visibilitychange` to visible, `pageshow` from the back/forward
 * cache). A machine that slept or a throttled background tab sends one of these on its way back.
 *
 * Listens only between {@link WakeSignals.start} and {@link WakeSignals.stop}, so that nothing is added
 * at import or construction (server-side rendering constructs Echo); does nothing outside a browser.
 */
export class WakeSignals {
    /** The window the listeners were added to, or null when not listening. */
    #target: Window | null = null;

    /** Receives the signal's name. */
    readonly #wake: (signal: "online" | "visible" | "pageshow") => void;

    /**
     * Create the listener set; `wake` receives the signal's name.
     */
    constructor(wake: (signal: "online" | "visible" | "pageshow") => void) {
        this.#wake = wake;
    }

    /** `online` listener. */
    readonly #online = () => this.#wake("online");

    /** `pageshow` listener. */
    readonly #pageshow = () => this.#wake("pageshow");

    /** `visibilitychange` listener: only a page that became visible counts. */
    readonly #visibility = () => {
        if (this.#target?.document.visibilityState !== "hidden") this.#wake("visible");
    };

    /**
     * Start listening (idempotent).
     */
    start(): void {
        if (this.#target !== null || typeof window === "undefined" || typeof window.addEventListener !== "function") return;
        this.#target = window;
        window.addEventListener("online", this.#online);
        window.addEventListener("pageshow", this.#pageshow);
        window.document?.addEventListener("visibilitychange", this.#visibility);
    }

    /**
     * Stop listening (idempotent).
     */
    stop(): void {
        const target = this.#target;
        if (target === null) return;
        this.#target = null;
        target.removeEventListener("online", this.#online);
        target.removeEventListener("pageshow", this.#pageshow);
        target.document?.removeEventListener("visibilitychange", this.#visibility);
    }
}
