import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Dispatcher } from "../../../src/dispatch/dispatcher";
import { envelope, useScopedFakeTimers } from "../../fakes/connector-harness";

beforeEach(() => useScopedFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the main cursor (laravel-mercure §4.4 step 1)", () => {
    it("moves with every message that has an id, also the ones dispatch then drops", () => {
        const dispatcher = new Dispatcher();
        const carried = (name: string) => name !== "gone";
        const dropped: Array<[string, unknown]> = [
            ["urn:raw", "plain text from a raw publisher"],
            ["urn:no-channels", { event: "e", payload: {} }],
            ["urn:own", envelope(["news"], "e", {}, dispatcher.socketId)],
            ["urn:gone", envelope(["gone"], "e")],
            ["urn:no-event", { channels: ["news"], event: 5 }],
            ["urn:encrypted-elsewhere", { channels: ["news"], data: "h..i.c.t" }],
        ];
        for (const [id, data] of dropped) {
            const text = typeof data === "string" ? data : JSON.stringify(data);
            expect(dispatcher.receive({ data: text, lastEventId: id }, carried)).toEqual({ id, route: null });
            expect(dispatcher.cursor).toBe(id);
        }
        // A message without an id leaves the cursor where it was.
        expect(dispatcher.receive({ data: JSON.stringify(envelope(["news"], "e")), lastEventId: "" }, carried).id).toBeNull();
        expect(dispatcher.cursor).toBe("urn:encrypted-elsewhere");
    });

});
