import { vi } from "vitest";
import { MercureConnector } from "../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../src/connector/options";
import type { MercureError } from "../../src/errors";
import { FakeAuthServer, PREFIX } from "./fake-auth-server";
import { createFakeEventSource, type FakeEventSource, type FakeEventSourceClass } from "./fake-event-source";

/** The hub URL the harness uses. */
export const HUB = "https://app.test/.well-known/mercure";

/** A connector wired to a fake EventSource and a fake auth endpoint. */
export interface Harness {
    connector: MercureConnector;
    EventSource: FakeEventSourceClass;
    auth: FakeAuthServer;
    /** Let queued microtasks and zero-delay timers run. */
    flush(): Promise<void>;
    /** The single live EventSource (fails when there are none or several). */
    stream(): FakeEventSource;
    /** Errors reported per channel. */
    errors: Array<{ channel: string; error: MercureError }>;
    /** Track the errors of a channel. */
    track<T extends { name: string; error(callback: CallableFunction): T }>(channel: T): T;
}

/** Use fake timers (not microtasks) for the current test file. */
export function useScopedFakeTimers(): void {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
}

/**
 * Let lazy chunks' `import()`s and zero-delay timers run while fake timers run: three rounds of waiting for the
 * dynamic imports, each followed by `steps` advances of `stepMs` (the tabs' tests step 1 ms: the fake browser's
 * messages and lock grants are zero-delay timers, which fire 1 ms later under fake timers).
 */
export async function settleLoads(stepMs = 0, steps = 20): Promise<void> {
    for (let i = 0; i < 3; i++) {
        await vi.dynamicImportSettled();
        for (let step = 0; step < steps; step++) await vi.advanceTimersByTimeAsync(stepMs);
    }
}

/** The real `setTimeout`, taken before any test fakes the timers. */
const realSetTimeout = globalThis.setTimeout;

/**
 * {@link settleLoads} rounds (each with its `stepMs` and `steps`) until `done()` holds, at most 20: a mocked module's
 * import may take more than one round when the machine is busy, and no round advances the clock past a backoff. When
 * `done` is given and still does not hold, up to 2 s of real time more (in 5 ms waits, running the due timers without
 * moving the fake clock): on a busy machine the first import of a module (Vite transforms it then) can outlast the
 * rounds, and a test that waits for what it starts must not fail by that.
 */
export async function settleLoadsUntil(done?: () => boolean, stepMs = 0, steps = 20): Promise<void> {
    for (let round = 0; round < 20; round++) {
        await settleLoads(stepMs, steps);
        if (done?.()) return;
    }
    for (let wait = 0; done !== undefined && !done() && wait < 400; wait++) {
        await new Promise((resolve) => realSetTimeout(resolve, 5));
        await vi.dynamicImportSettled();
        await vi.advanceTimersByTimeAsync(0);
    }
}

/** Build a connector on fakes. */
export function createHarness(options: MercureConnectorOptions = {}): Harness {
    const EventSource = createFakeEventSource();
    const auth = new FakeAuthServer();
    const connector = new MercureConnector({ host: HUB, eventSource: EventSource, fetch: auth.fetch, ...options });
    const errors: Harness["errors"] = [];
    return {
        connector,
        EventSource,
        auth,
        errors,
        flush: async () => {
            await vi.advanceTimersByTimeAsync(0);
        },
        stream: () => {
            const live = EventSource.live();
            if (live.length !== 1) throw new Error(`expected one live EventSource, found ${live.length}`);
            return live[0]!;
        },
        track: (channel) => channel.error((error: MercureError) => errors.push({ channel: channel.name, error })),
    };
}

/** The channel topic the default prefix gives. */
export function topic(name: string): string {
    return PREFIX + "channel/" + encodeURIComponent(name);
}

/** A plaintext envelope as the server publishes it. */
export function envelope(channels: string[], event: string, payload: unknown = {}, socket?: string): Record<string, unknown> {
    return socket === undefined ? { channels, event, payload } : { channels, event, payload, socket };
}
