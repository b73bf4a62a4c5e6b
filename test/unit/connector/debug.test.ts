import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadDiagnostics } from "../../../src/discovery/load";
import { createHarness, envelope, HUB, topic, useScopedFakeTimers } from "../../fakes/connector-harness";
import { grant } from "../../fakes/fake-auth-server";

beforeAll(async () => {
    // The stream's probe is a chunk of its own too (src/connector/stream-diagnosis.ts), which loads the diagnostics.
    await Promise.all([loadDiagnostics(), import("../../../src/connector/stream-diagnosis")]);
});
beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
});

async function settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await vi.advanceTimersByTimeAsync(0);
}

describe("the debug option", () => {
    it("logs each protocol step through the given function, without cookies or headers", async () => {
        const steps: Array<[string, unknown]> = [];
        const h = createHarness({ debug: (step: string, detail?: object) => steps.push([step, detail]), auth: { headers: { Authorization: "Bearer secret" } } });
        h.auth.handler = (names) => grant(names, {}, ["private-denied"]);
        h.connector.privateChannel("orders.1");
        h.connector.privateChannel("denied");
        await settle();
        const first = h.stream();
        first.emitOpen();
        first.emitMessage(envelope(["private-orders.1"], "x"), "urn:1");
        h.connector.channel("news"); // A second stream replaces the first (make before break).
        await settle();
        const second = h.EventSource.last();
        second.emitOpen();
        await vi.advanceTimersByTimeAsync(2_000); // The drain ends.
        second.emitError(true);
        await settle();
        const names = steps.map(([step]) => step);
        expect(names.slice(0, 6)).toEqual(["hub", "auth", "auth result", "stream", "open", "event"]);
        expect(steps[0]![1]).toEqual({ url: HUB, source: "option" });
        expect(steps[1]![1]).toEqual({ channels: ["private-orders.1", "private-denied"] });
        expect(steps[2]![1]).toEqual({ granted: ["private-orders.1"], denied: ["private-denied"] });
        expect(steps[3]![1]).toEqual({ url: first.url, channels: ["private-orders.1"] });
        expect(steps[5]![1]).toEqual({ id: "urn:1", channels: ["private-orders.1"] });
        expect(names).toContain("drain end");
        expect(steps.find(([step, detail]) => step === "open" && (detail as { draining?: number }).draining !== undefined)).toBeDefined();
        expect(steps.find(([step]) => step === "stream error")![1]).toMatchObject({ failure: "closed" });
        expect(JSON.stringify(steps)).not.toContain("secret");
        expect(names).not.toContain("presence seed");
        expect(second.url).toContain(encodeURIComponent(topic("news")));
    });

    it("logs the diagnosis and the reopen after a failure", async () => {
        const steps: string[] = [];
        const h = createHarness({ debug: (step: string) => steps.push(step) });
        h.auth.probeHandler = () => ({ status: 503, text: async () => "" });
        h.connector.channel("news");
        await settle();
        h.stream().emitError(true);
        await settle();
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(steps).toEqual(["hub", "auth", "auth result", "stream", "stream error", "diagnosis", "auth", "auth result", "reopen"]);
    });

    it("logs the presence channels a stream seeds", async () => {
        const steps: Array<[string, unknown]> = [];
        const h = createHarness({ debug: (step: string, detail?: object) => steps.push([step, detail]) });
        h.connector.presenceChannel("room");
        h.connector.channel("news");
        await settle();
        h.stream().emitOpen();
        expect(steps.filter(([step]) => step === "presence seed")).toEqual([["presence seed", { channels: ["presence-room"] }]]);
    });

    it("logs with console.debug when true, and nothing when off", async () => {
        const debug = vi.spyOn(console, "debug").mockImplementation(() => undefined);
        for (const option of [undefined, false]) {
            const h = createHarness({ debug: option });
            h.connector.channel("news");
            await settle();
            h.stream().emitOpen();
        }
        expect(debug).not.toHaveBeenCalled();
        const h = createHarness({ debug: true });
        h.connector.channel("news");
        await settle();
        expect(debug).toHaveBeenCalledWith("[laravel-echo-mercure] auth", { channels: ["news"] });
    });
});
