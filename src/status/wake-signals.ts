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

    /** The one listener of the three signals: a `visibilitychange` counts only when the page became visible. */
    readonly #listener = (event: Event): void => {
        if (event.type !== "visibilitychange") this.#wake(event.type as "online" | "pageshow");
        else if (this.#target?.document.visibilityState !== "hidden") this.#wake("visible");
    };

    /**
     * Start listening (idempotent).
     */
    start(): void {
        if (this.#target !== null || typeof window === "undefined" || typeof window.addEventListener !== "function") return;
        this.#target = window;
        this.#toggle(window, "addEventListener");
    }

    /**
     * Stop listening (idempotent).
     */
    stop(): void {
        const target = this.#target;
        if (target === null) return;
        this.#target = null;
        this.#toggle(target, "removeEventListener");
    }

    /** Add the listener to `target` and its document, or remove it from them. */
    #toggle(target: Window, method: "addEventListener" | "removeEventListener"): void {
        target[method]("online", this.#listener);
        target[method]("pageshow", this.#listener);
        target.document?.[method]("visibilitychange", this.#listener);
    }
}
