import { afterEach, describe, expect, it } from "vitest";
import { WakeSignals } from "../../../src/status/wake-signals";

let visibility: DocumentVisibilityState = "visible";
Object.defineProperty(document, "visibilityState", { configurable: true, get: () => visibility });
afterEach(() => {
    visibility = "visible";
});

describe("WakeSignals", () => {
    it("reports online, pageshow and a page that became visible, only between start() and stop()", () => {
        const seen: string[] = [];
        const signals = new WakeSignals((signal) => seen.push(signal));
        window.dispatchEvent(new Event("online"));
        signals.start();
        signals.start();
        window.dispatchEvent(new Event("online"));
        window.dispatchEvent(new Event("pageshow"));
        document.dispatchEvent(new Event("visibilitychange"));
        visibility = "hidden";
        document.dispatchEvent(new Event("visibilitychange"));
        signals.stop();
        signals.stop();
        window.dispatchEvent(new Event("online"));
        expect(seen).toEqual(["online", "pageshow", "visible"]);
    });
});
