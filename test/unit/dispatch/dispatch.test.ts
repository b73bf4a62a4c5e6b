import { describe, expect, it } from "vitest";
import { DeliveryLedger } from "../../../src/dispatch/delivery-ledger";
import { parseEnvelope } from "../../../src/dispatch/envelope";
import { routeMessage } from "../../../src/dispatch/router";

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
    it("claims each (id, channel) pair once, remembers the last `capacity` ids and forgets those older than 2 × capacity", () => {
        const ledger = new DeliveryLedger(2);
        expect(ledger.claim("1", "a")).toBe(true);
        expect(ledger.claim("1", "a")).toBe(false);
        expect(ledger.claim("1", "b")).toBe(true);
        ledger.claim("2", "a");
        ledger.claim("3", "a"); // a new generation: 1 and 2 are the previous one
        expect(ledger.claim("1", "b")).toBe(false); // still remembered
        expect(ledger.claim("2", "b")).toBe(true); // a new channel of a remembered id
        ledger.claim("4", "a");
        ledger.claim("5", "a"); // 3 and 4 the previous generation: 1 and 2 forgotten
        expect(ledger.claim("1", "a")).toBe(true); // forgotten
        expect(ledger.claim("4", "a")).toBe(false);
        expect(ledger.claim("5", "a")).toBe(false);
        ledger.clear();
        expect(ledger.claim("5", "a")).toBe(true);
    });

    it("remembers at least the last `capacity` ids at every point", () => {
        const capacity = 8;
        const ledger = new DeliveryLedger(capacity);
        for (let id = 1; id <= 50; id++) {
            expect(ledger.claim(String(id), "a")).toBe(true);
            for (let back = 0; back < capacity && back < id; back++) expect(ledger.claim(String(id - back), "a")).toBe(false);
        }
    });
});

describe("routeMessage", () => {
    const every = () => true;
    const plain = (channels: string[], socket?: string) => JSON.stringify({ channels, event: "e", payload: { n: 1 }, ...(socket ? { socket } : {}) });

    it("routes plaintext to the carried public, private and presence channels, never to an encrypted one", () => {
        expect(routeMessage(plain(["news", "private-a", "presence-b", "private-encrypted-c", "gone"]), "me", (name) => name !== "gone")).toEqual({
            kind: "plain",
            channels: ["news", "private-a", "presence-b"],
            event: "e",
            payload: { n: 1 },
        });
        expect(routeMessage(plain(["private-encrypted-c"]), "me", every)).toBeNull();
    });

    it("routes an encrypted update only to encrypted channels, never as plaintext", () => {
        const data = JSON.stringify({ channels: ["news", "private-encrypted-c", "private-encrypted-gone"], data: "h..i.c.t", event: "e" });
        expect(routeMessage(data, "me", (name) => name !== "private-encrypted-gone")).toEqual({ kind: "encrypted", channels: ["private-encrypted-c"], data: "h..i.c.t" });
        expect(routeMessage(JSON.stringify({ channels: ["news"], data: "h..i.c.t" }), "me", every)).toBeNull();
    });

    it("drops this connection's own broadcasts (toOthers) and lists a channel once", () => {
        expect(routeMessage(plain(["news"], "me"), "me", every)).toBeNull();
        expect(routeMessage(plain(["news", "news"], "other"), "me", every)).toMatchObject({ channels: ["news"] });
    });
});
