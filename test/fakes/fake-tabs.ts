import type { BroadcastChannelLike, LockManagerLike, ShareEnvironment } from "../../src/share/tab-link";

/** One lock request as the fake lock manager keeps it. */
interface LockRequest {
    readonly tab: FakeTab;
    readonly callback: (lock: unknown) => Promise<void> | undefined;
    readonly resolve: (value: unknown) => void;
    readonly reject: (error: unknown) => void;
}

/**
 * A fake browser profile for tabs in one process: Web Locks (exclusive, queued in order, `steal`, `signal`, `ifAvailable`,
 * released when the holder's callback settles or its tab closes) and `BroadcastChannel` (delivered to the
 * other instances of the same name, structured-cloned, as a task: `setTimeout(0)`).
 */
export class FakeBrowser {
    /** The holder and the queue of each lock name. */
    private readonly locks = new Map<string, { holder: LockRequest | null; queue: LockRequest[] }>();

    /** Every open channel instance. */
    readonly channels: Array<{ tab: FakeTab; name: string; instance: BroadcastChannelLike }> = [];

    /** Every message posted, in order (for protocol assertions). */
    readonly posted: unknown[] = [];

    /** Every message delivered, in order, with the tab that heard it and the channel's name. */
    readonly heard: Array<{ name: string; tab: FakeTab; message: unknown }> = [];

    /** Every message posted, in order, with the name of the channel it was posted on and the tab that posted it. */
    readonly log: Array<{ name: string; tab: FakeTab; message: unknown }> = [];

    /** The profile's `localStorage` of the app's origin (where a leading tab marks its lead: see `markLead`). */
    readonly storage = new Map<string, string>();

    /** Open a new tab; `storage`: the tab's environment gives the connectors the profile's {@link FakeBrowser.storage} (a page's `localStorage`). */
    tab(storage = false): FakeTab {
        return new FakeTab(this, storage);
    }

    /** The tab holding lock `name`, or null. */
    holder(name?: string): FakeTab | null {
        const lock = name === undefined ? [...this.locks.values()][0] : this.locks.get(name);
        return lock?.holder?.tab ?? null;
    }

    /** @internal */
    request(
        tab: FakeTab,
        name: string,
        options: { steal?: boolean; signal?: AbortSignal; ifAvailable?: boolean },
        callback: (lock: unknown) => Promise<void> | undefined,
    ): Promise<unknown> {
        const lock = this.locks.get(name) ?? { holder: null, queue: [] };
        this.locks.set(name, lock);
        return new Promise((resolve, reject) => {
            const request: LockRequest = { tab, callback, resolve, reject };
            if (options.ifAvailable === true && (lock.holder !== null || lock.queue.length > 0)) {
                // Taken: the callback runs with null, as a task, and nothing is held.
                setTimeout(() => void Promise.resolve(callback(null)).then(resolve, reject), 0);
                return;
            }
            if (options.steal === true) {
                const stolen = lock.holder;
                lock.holder = null;
                stolen?.reject(new DOMException("The lock was stolen.", "AbortError"));
                this.grant(name, lock, request);
                return;
            }
            options.signal?.addEventListener("abort", () => {
                const index = lock.queue.indexOf(request);
                if (index < 0) return;
                lock.queue.splice(index, 1);
                reject(new DOMException("aborted", "AbortError"));
            });
            lock.queue.push(request);
            this.next(name, lock);
        });
    }

    /** @internal A tab closed: its locks are released, its queued requests dropped, its channels closed. */
    closeTab(tab: FakeTab): void {
        for (const [name, lock] of this.locks) {
            lock.queue = lock.queue.filter((request) => request.tab !== tab);
            if (lock.holder?.tab === tab) {
                lock.holder = null;
                this.next(name, lock);
            }
        }
        for (let i = this.channels.length - 1; i >= 0; i--) if (this.channels[i]!.tab === tab) this.channels.splice(i, 1);
    }

    private next(name: string, lock: { holder: LockRequest | null; queue: LockRequest[] }): void {
        if (lock.holder !== null) return;
        const request = lock.queue.shift();
        if (request !== undefined) this.grant(name, lock, request);
    }

    private grant(name: string, lock: { holder: LockRequest | null; queue: LockRequest[] }, request: LockRequest): void {
        lock.holder = request;
        // Like the browser, the callback runs as a task once granted.
        setTimeout(() => {
            if (lock.holder !== request) return;
            Promise.resolve(request.callback({ name })).then(
                (value) => {
                    if (lock.holder === request) {
                        lock.holder = null;
                        this.next(name, lock);
                    }
                    request.resolve(value);
                },
                (error: unknown) => {
                    if (lock.holder === request) {
                        lock.holder = null;
                        this.next(name, lock);
                    }
                    request.reject(error);
                },
            );
        }, 0);
    }
}

/** One tab of a {@link FakeBrowser}: its {@link ShareEnvironment}, `pagehide`, and closing it. */
export class FakeTab {
    /** The `pagehide` and `pageshow` listeners (the tab's `window`). */
    private readonly pageListeners: Record<"pagehide" | "pageshow", Array<(event: { readonly persisted?: boolean }) => void>> = { pagehide: [], pageshow: [] };

    /** How late (ms) the bus delivers to this tab: a hidden tab's handlers may run late. */
    lag = 0;

    /** Whether the tab sits in the back/forward cache: it hears and posts nothing on the bus. */
    cached = false;

    /** The `freeze` and `resume` listeners (the tab's `document`). */
    private readonly lifecycle: { freeze: Array<() => void>; resume: Array<() => void> } = { freeze: [], resume: [] };

    /** Whether the tab was closed. */
    closed = false;

    /** The environment to pass as the connectors' `shareEnvironment`. */
    readonly env: ShareEnvironment;

    constructor(
        private readonly browser: FakeBrowser,
        storage = false,
    ) {
        const tab = this;
        const locks: LockManagerLike = { request: (name, options, callback) => browser.request(tab, name, options, callback) };
        class Channel implements BroadcastChannelLike {
            onmessage: ((event: MessageEvent) => unknown) | null = null;
            #closed = false;
            constructor(readonly name: string) {
                browser.channels.push({ tab, name, instance: this });
            }
            close(): void {
                this.#closed = true;
                const at = browser.channels.findIndex((entry) => entry.instance === this);
                if (at >= 0) browser.channels.splice(at, 1);
            }
            postMessage(message: unknown): void {
                if (this.#closed) throw new DOMException("closed", "InvalidStateError");
                if (tab.closed || tab.cached) return;
                browser.posted.push(structuredClone(message));
                browser.log.push({ name: this.name, tab, message: structuredClone(message) });
                for (const other of browser.channels) {
                    if (other.name !== this.name || other.instance === this || other.tab.cached) continue;
                    const data = structuredClone(message);
                    setTimeout(() => {
                        if (!other.tab.closed && !other.tab.cached && browser.channels.some((entry) => entry.instance === other.instance)) {
                            browser.heard.push({ name: other.name, tab: other.tab, message: data });
                            other.instance.onmessage?.(new MessageEvent("message", { data }));
                        }
                    }, other.tab.lag);
                }
            }
        }
        this.env = {
            locks,
            BroadcastChannel: Channel,
            page: { addEventListener: (type, listener) => this.pageListeners[type].push(listener) },
            lifecycle: {
                addEventListener: (type, listener) => this.lifecycle[type].push(listener),
                removeEventListener: (type: "freeze" | "resume", listener: () => void) => {
                    const at = this.lifecycle[type].indexOf(listener);
                    if (at >= 0) this.lifecycle[type].splice(at, 1);
                },
            },
            ...(storage
                ? {
                      storage: {
                          getItem: (key) => browser.storage.get(key) ?? null,
                          setItem: (key, value) => void browser.storage.set(key, value),
                          removeItem: (key) => void browser.storage.delete(key),
                          get length() {
                              return browser.storage.size;
                          },
                          key: (index) => [...browser.storage.keys()][index] ?? null,
                      },
                  }
                : {}),
        };
    }

    /**
     * Fire `freeze`. (Only the event: like Chromium's, a frozen fake tab still hears the bus; its streams are the
     * test's to leave silent.)
     */
    freeze(): void {
        for (const listener of this.lifecycle.freeze) listener();
    }

    /** Put the page in the back/forward cache: `pagehide` with `persisted`, then deaf and mute on the bus. */
    cache(): void {
        for (const listener of this.pageListeners.pagehide) listener({ persisted: true });
        this.cached = true;
    }

    /** Restore the page from the back/forward cache: back on the bus, then `pageshow` with `persisted`. */
    restore(): void {
        this.cached = false;
        for (const listener of this.pageListeners.pageshow) listener({ persisted: true });
    }

    /** How many `freeze` and `resume` listeners the tab's page has now. */
    lifecycleListeners(): number {
        return this.lifecycle.freeze.length + this.lifecycle.resume.length;
    }

    /** Fire `resume`. */
    resume(): void {
        for (const listener of this.lifecycle.resume) listener();
    }

    /** Fire `pagehide`, then close the tab (its locks are released, it hears nothing more). */
    close(hide = true): void {
        if (hide) for (const listener of this.pageListeners.pagehide) listener({ persisted: false });
        this.closed = true;
        this.browser.closeTab(this);
    }
}
