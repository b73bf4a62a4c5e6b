import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureChannel } from "../../../src/channel/mercure-channel";
import { dirname, resolve } from "node:path";
import { createHarness, envelope, settleLoads, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { mockFlakyChunk } from "../../fakes/flaky-chunk";

/*
 * Issue 33, "My listener never fires": an event that arrives on a channel with listeners, but none for its name, is
 * warned about once per channel and name, with the likely fix and without the payload; with `debug` on, each delivered
 * event's name is logged with whether a listener matched.
 */

let warned: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
    useScopedFakeTimers();
    warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
});
afterEach(() => {
    warned.mockRestore();
    vi.useRealTimers();
});

/** The warnings so far, as text. */
const warnings = () => warned.mock.calls.map((call: unknown[]) => String(call[0]));

describe("an event no listener matches", () => {
    it("is warned about once per channel and name, naming the leading dot and the namespace option, never the payload", async () => {
        const orders = new MercureChannel("orders", { namespace: "App.Events" } as never);
        const other = new MercureChannel("other", { namespace: "App.Events" } as never);
        const got: unknown[] = [];
        // The classic mistake: a broadcastAs() name listened to without the leading dot.
        orders.listen("order.shipped", (payload) => got.push(payload));
        other.listen(".something", () => undefined);
        expect(orders.deliver("order.shipped", { secret: "s3cr3t" })).toBe(false);
        expect(orders.deliver("order.shipped", { secret: "s3cr3t" })).toBe(false);
        expect(other.deliver("order.shipped", {})).toBe(false);
        expect(got).toEqual([]);
        await settleLoadsUntil(() => warnings().length >= 2); // The warning's text is a lazy chunk.
        expect(warnings()).toEqual([
            'laravel-echo-mercure: no listener on "orders" for "order.shipped"; a broadcastAs() name needs a dot: listen(".order.shipped"), or see the namespace option',
            expect.stringContaining('no listener on "other" for "order.shipped"'),
        ]);
        expect(warnings().join()).not.toContain("s3cr3t");
    });

    it("names the namespace-relative listen() for a class under the namespace, its backslashes as dots (issue 51: not a leading dot and the whole class name)", async () => {
        const orders = new MercureChannel("orders", { namespace: "App.Events" } as never);
        orders.listen("OrderShipped", () => undefined);
        expect(orders.deliver("App\\Events\\Orders\\OrderShipped", {})).toBe(false);
        expect(orders.deliver("App\\Models\\Order", {})).toBe(false);
        const bare = new MercureChannel("bare", { namespace: false } as never).listen("x", () => undefined);
        expect(bare.deliver("App\\Events\\Orders\\OrderShipped", {})).toBe(false);
        await settleLoadsUntil(() => warnings().length >= 3);
        expect(warnings()).toEqual([
            'laravel-echo-mercure: no listener on "orders" for "App\\Events\\Orders\\OrderShipped"; listen("Orders.OrderShipped") hears it (the namespace option puts App\\Events\\ in front of a name without a leading dot)',
            'laravel-echo-mercure: no listener on "orders" for "App\\Models\\Order"; a broadcastAs() name needs a dot: listen(".App\\Models\\Order"), or see the namespace option',
            'laravel-echo-mercure: no listener on "bare" for "App\\Events\\Orders\\OrderShipped"; a broadcastAs() name needs a dot: listen(".App\\Events\\Orders\\OrderShipped"), or see the namespace option',
        ]);
        // What the hint says to write is heard.
        const fixed = new MercureChannel("fixed", { namespace: "App.Events" } as never);
        const got: unknown[] = [];
        fixed.listen("Orders.OrderShipped", (payload) => got.push(payload));
        expect(fixed.deliver("App\\Events\\Orders\\OrderShipped", { id: 1 })).toBe(true);
        expect(got).toEqual([{ id: 1 }]);
    });

    it("is not warned about on a channel without listeners, with a listenToAll() callback, or when a listener matches", async () => {
        const bare = new MercureChannel("bare", { namespace: "App.Events" } as never);
        const all = new MercureChannel("all", { namespace: "App.Events" } as never).listen(".a", () => undefined).listenToAll(() => undefined);
        const matched = new MercureChannel("matched", { namespace: false } as never).listen("OrderShipped", () => undefined);
        expect(bare.deliver("x", {})).toBe(false);
        expect(all.deliver("x", {})).toBe(true);
        expect(matched.deliver("OrderShipped", {})).toBe(true);
        await settleLoads();
        expect(warnings()).toEqual([]);
    });
});

describe("the warning's chunk failing to download (issue 49, a sibling of point 5)", () => {
    it("warns at the event's next delivery once the chunk loads, instead of never", async () => {
        vi.resetModules();
        const chunk = mockFlakyChunk("../../../src/channel/unheard-event");
        try {
            const { MercureChannel: Fresh } = await import("../../../src/channel/mercure-channel");
            const orders = new Fresh("orders", { namespace: "App.Events" } as never).listen(".order.paid", () => undefined);
            chunk.failures = 1;
            orders.deliver("order.shipped", {});
            await settleLoadsUntil(() => chunk.loads === 1);
            await settleLoads(); // Its failure handled.
            expect(chunk.loads).toBe(1);
            expect(warnings()).toEqual([]);
            orders.deliver("order.shipped", {});
            orders.deliver("order.shipped", {});
            // The chunk's first import that succeeds may take longer than a round on a busy machine (CI once warned
            // only during the next test).
            await settleLoadsUntil(() => warnings().length > 0);
            expect(warnings()).toEqual([expect.stringContaining('no listener on "orders" for "order.shipped"')]);
        } finally {
            vi.doUnmock(resolve(dirname(expect.getState().testPath!), "../../../src/channel/unheard-event"));
        }
    });
});

describe("the debug log", () => {
    it("names each delivered event and whether a listener matched, without its payload", async () => {
        const logged: Array<[string, object | undefined]> = [];
        const h = createHarness({ debug: (step: string, detail?: object) => logged.push([step, detail]) });
        h.connector.channel("news").listen("OrderShipped", () => undefined);
        await h.flush();
        h.stream().emitOpen();
        h.stream().emitMessage(envelope(["news"], "App\\Events\\OrderShipped", { secret: "s3cr3t" }), "1");
        h.stream().emitMessage(envelope(["news"], "order.shipped", { secret: "s3cr3t" }), "2");
        await settleLoadsUntil(() => warnings().length > 0);
        expect(logged.filter(([step]) => step === "deliver").map(([, detail]) => detail)).toEqual([
            { channel: "news", event: "App\\Events\\OrderShipped", matched: true },
            { channel: "news", event: "order.shipped", matched: false },
        ]);
        expect(JSON.stringify(logged)).not.toContain("s3cr3t");
        expect(warnings()).toEqual([expect.stringContaining('listen(".order.shipped")')]);
        h.connector.disconnect();
    });
});
