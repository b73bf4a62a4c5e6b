import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness, settleLoads, useScopedFakeTimers } from "../../fakes/connector-harness";

/*
 * A connector without `host` locates its hub in the lazy discovery chunk (src/discovery/load.ts), the page's
 * `<link rel="mercure">` included: nothing of link parsing is in the core entry. Here the chunk's module fails to
 * load as often as `chunk.failures` says (a download that failed: offline, a deploy in between), then loads.
 */
const chunk = vi.hoisted(() => ({ failures: 0, loads: 0 }));
vi.mock("../../../src/discovery/discover", async (importOriginal) => {
    chunk.loads++;
    if (chunk.failures > 0) {
        chunk.failures--;
        throw new TypeError("Failed to fetch dynamically imported module");
    }
    return importOriginal();
});

// The unit project's page is https://app.test/dashboard.
const LINKED = "https://hub.test/.well-known/mercure";

beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    for (const link of document.head.querySelectorAll("link")) link.remove();
});

/** Let the loads (import()) and the zero-delay timers run. */
const settle = (): Promise<void> => settleLoads();

describe("the discovery chunk", () => {
    it("is not loaded by a connector with host, even when the page has a <link rel=\"mercure\">", async () => {
        document.head.insertAdjacentHTML("beforeend", `<link rel="mercure" href="${LINKED}">`);
        const h = createHarness();
        h.connector.channel("news");
        await settle();
        expect(h.stream().url.startsWith("https://app.test/.well-known/mercure?")).toBe(true);
        expect(chunk.loads).toBe(0);
        h.connector.disconnect();
    });

    it("finds the page's <link rel=\"mercure\"> for a connector without host; failing to load, it is reported as load_failed and retried with backoff", async () => {
        document.head.insertAdjacentHTML("beforeend", `<link rel="mercure" href="${LINKED}" last-event-id="urn:uuid:page">`);
        chunk.failures = 1;
        const h = createHarness({ host: null });
        h.track(h.connector.privateChannel("orders.1"));
        h.track(h.connector.channel("news"));
        await settle();
        expect(h.errors.map((entry) => [entry.error.code, entry.error.channel])).toEqual([
            ["load_failed", "private-orders.1"],
            ["load_failed", "news"],
        ]);
        expect(h.errors[0]!.error.message).toContain("hub discovery");
        expect(h.errors[0]!.error.message).toContain("host");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        expect(h.auth.requests).toHaveLength(0);
        // The first backoff is 1 s ± 20 %: the retry loads the chunk, then authorizes both channels in one request.
        await vi.advanceTimersByTimeAsync(1_500);
        // Settle until the retry's load has authorized (no clock advance): a loaded machine may take more rounds to
        // transform the chunk's imports than an idle one.
        for (let round = 0; round < 20 && h.auth.requests.length === 0; round++) await settle();
        expect(chunk.failures).toBe(0);
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "news"]]);
        const stream = h.stream();
        expect(stream.url.startsWith(LINKED + "?")).toBe(true);
        expect(stream.param("last_event_id")).toBe("urn:uuid:page");
        expect(h.errors).toHaveLength(2);
        h.connector.disconnect();
    });

    it("batches the channels joined while the chunk locates the hub into the first auth request, and sends no second one for them", async () => {
        document.head.insertAdjacentHTML("beforeend", `<link rel="mercure" href="${LINKED}">`);
        const h = createHarness({ host: null });
        h.connector.channel("a");
        // A few microtasks later (the refresh has started and waits for the chunk), another join.
        for (let i = 0; i < 3; i++) await Promise.resolve();
        h.connector.channel("b");
        for (let round = 0; round < 20 && h.auth.requests.length === 0; round++) await settle();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["a", "b"]]);
        expect(h.stream().url.startsWith(LINKED + "?")).toBe(true);
        // A join after the first auth's set was taken still gets its own request.
        h.connector.channel("c");
        await settle();
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["a", "b"], ["a", "b", "c"]]);
        h.connector.disconnect();
    });
});
