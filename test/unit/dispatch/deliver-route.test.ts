import { describe, expect, it } from "vitest";
import type { EncryptedChannels } from "../../../src/crypto/encrypted-channels";
import { deliverRoute } from "../../../src/dispatch/deliver-route";

/** The crypto queue is not reached by plaintext routes. */
const noCrypto = {} as EncryptedChannels;

describe("deliverRoute", () => {
    it("delivers a plaintext route to its channels in order, and stops at the first channel after a listener disconnects", () => {
        const aborter = new AbortController();
        const got: string[] = [];
        const target = {
            deliver: (name: string, event: string, payload: unknown) => {
                got.push(`${name}:${event}:${JSON.stringify(payload)}`);
                if (name === "b") aborter.abort(); // b's listener called disconnect()
            },
            failed: () => undefined,
        };
        deliverRoute({ kind: "plain", channels: ["a", "b", "c"], event: "e", payload: { n: 1 } }, noCrypto, target, aborter.signal);
        expect(got).toEqual(['a:e:{"n":1}', 'b:e:{"n":1}']);
    });
});
