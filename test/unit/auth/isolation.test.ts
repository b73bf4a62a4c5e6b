import { describe, expect, it } from "vitest";
import type { AuthResult } from "../../../src/auth/auth-client";
import { failingAlone } from "../../../src/auth/isolation";

const OK: AuthResult = { kind: "ok", response: { channels: new Map(), expiresIn: null, topicPrefix: null, clientEvents: false } };
const FAILED: AuthResult = { kind: "error", status: 500, cause: null };

/**
 * A server that answers 5xx to every batch holding one of `broken`, and also to the first `bad` requests whatever they
 * hold (a bad moment); records each request's names.
 */
function server(broken: readonly string[], bad = 0): { asked: string[][]; probe: (names: readonly string[]) => Promise<AuthResult> } {
    const asked: string[][] = [];
    return {
        asked,
        probe: async (names) => {
            asked.push([...names]);
            return asked.length <= bad || names.some((name) => broken.includes(name)) ? FAILED : OK;
        },
    };
}

describe("failingAlone: which channels fail alone (issue 30; issue 49's simulation, isolation-transient)", () => {
    it("finds the channel that fails alone, and asks for it once more after a part passed", async () => {
        const { asked, probe } = server(["private-broken"]);
        expect(await failingAlone(["news", "private-a", "private-broken"], probe)).toEqual(new Map([["private-broken", 500]]));
        expect(asked).toEqual([["news", "private-a"], ["private-broken"], ["private-broken"]]);
    });

    it("isolates nothing for a server's bad moment: a channel whose lone probe met it passes the second time", async () => {
        // Before: the probe of private-a met the last 5xx of the bad moment, and private-a left the stream for minutes.
        const { probe } = server([], 1);
        expect(await failingAlone(["private-a", "private-b"], probe)).toEqual(new Map());
    });

    it("concludes nothing when no part passed (the server fails, not a channel), or when a public channel fails alone", async () => {
        expect(await failingAlone(["private-a", "private-b"], server(["private-a", "private-b"]).probe)).toBeNull();
        // Laravel authorizes no public channel: a 5xx for one alone is the server's, however long it lasts.
        expect(await failingAlone(["news", "private-a"], server(["news"]).probe)).toBeNull();
    });
});
