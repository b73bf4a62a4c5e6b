import { describe, expect, it } from "vitest";
import { DeliveryLedger } from "../../../src/dispatch/delivery-ledger";
import { parseEnvelope } from "../../../src/dispatch/envelope";

describe("parseEnvelope", () => {
    it("reads plaintext envelopes as the server encodes them", () => {
        expect(parseEnvelope('{"channels":["private-chat.1"],"event":"App\\\\Events\\\\MessageSent","payload":{"url":"a\\/b"},"socket":"s1"}')).toEqual({
            kind: "plain",
            channels: ["private-chat.1"],
            event: "App\\Events\\MessageSent",
            payload: { url: "a/b" },
            socket: "s1",
        });
        expect(parseEnvelope('{"channels":["a",3],"event":"e","payload":[]}')).toEqual({ kind: "plain", channels: ["a"], event: "e", payload: [], socket: null });
    });

    it("recognises encrypted envelopes by their string data", () => {
        expect(parseEnvelope('{"channels":["private-encrypted-a"],"data":"x.y.z","event":"e"}')).toEqual({
            kind: "encrypted",
            channels: ["private-encrypted-a"],
            data: "x.y.z",
        });
    });

    it("rejects what cannot be routed", () => {
        for (const data of [undefined, 5, "", "x", "null", "[]", '{"event":"e"}', '{"channels":{},"event":"e"}', '{"channels":["a"]}']) {
            expect(parseEnvelope(data)).toBeNull();
        }
    });
});

describe("DeliveryLedger", () => {
    it("claims each (id, channel) pair once and forgets the oldest ids past capacity", () => {
        const ledger = new DeliveryLedger(2);
        expect(ledger.claim("1", "a")).toBe(true);
        expect(ledger.claim("1", "a")).toBe(false);
        expect(ledger.claim("1", "b")).toBe(true);
        ledger.claim("2", "a");
        ledger.claim("3", "a");
        expect(ledger.claim("1", "a")).toBe(true); // forgotten
        expect(ledger.claim("3", "a")).toBe(false);
        ledger.clear();
        expect(ledger.claim("3", "a")).toBe(true);
    });
});
