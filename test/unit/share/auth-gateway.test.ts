import { describe, expect, it } from "vitest";
import type { AuthResult } from "../../../src/auth/auth-client";
import { DEFAULT_HUB_TIMEOUTS } from "../../../src/auth/cookie-refresh";
import { AuthGateway } from "../../../src/share/auth-gateway";

// The tabs' engine authorizes the union of every tab's set (share/auth-gateway.ts). A channel whose auth fails alone
// (Laravel answers 5xx for any batch that holds it) is found by the split and suspended for its tab.

const BROKEN = "private-broken";

/**
 * The gateway on a server that fails every batch holding a name of `broken` ({@link BROKEN} unless given), and its first
 * `transient` requests whatever they hold; each request waits until released. `failed` records the clients the gateway tells of a failure they did not ask about.
 */
function gateway(broken: ReadonlySet<string> = new Set([BROKEN]), transient = 0) {
    const requests: string[][] = [];
    const failed: string[] = [];
    /** The number of requests sent when the gateway asked for the real stream to reopen, each time. */
    const reopened: number[] = [];
    /** What each union grant added to what the cookie before granted, as far as the gateway knew (see `granted`). */
    const grants: string[][] = [];
    const pending: Array<() => void> = [];
    const host = {
        request(names: readonly string[]): Promise<AuthResult> {
            const sent = requests.push([...names]);
            return new Promise((resolve) =>
                pending.push(() =>
                    resolve(
                        sent <= transient || names.some((name) => broken.has(name))
                            ? { kind: "error", status: 500, cause: null }
                            : {
                                  kind: "ok",
                                  response: {
                                      channels: new Map(names.map((name) => [name, { name, denied: false, jwk: null }])),
                                      expiresIn: 300,
                                      topicPrefix: "https://laravel.test/",
                                      clientEvents: true,
                                  },
                              },
                    ),
                ),
            );
        },
        hubTimeouts: () => DEFAULT_HUB_TIMEOUTS,
        granted: (_renewAt: number, added: readonly string[]) => void grants.push([...added]),
        failed: (client: string) => void failed.push(client),
        reopen: () => void reopened.push(requests.length),
    };
    const flush = async () => {
        for (let round = 0; round < 20; round++) {
            for (const release of pending.splice(0)) release();
            await new Promise((resolve) => setTimeout(resolve, 0));
        }
    };
    return { auth: new AuthGateway(host), requests, failed, reopened, grants, flush };
}

describe("AuthGateway: a tab's request that comes while a split runs (issue 49's simulation, seed 205)", () => {
    it("is asked for alone when the split suspended its channel: its tab is told the failure, never that the channel was granted", async () => {
        const { auth, requests, flush } = gateway();
        const answers: Record<string, AuthResult[]> = { a: [], b: [] };
        auth.request("a", ["private-a.1"], (result) => answers["a"]!.push(result));
        await flush();
        // B's set reaches the engine (its `hello`) before its request: the union A's next request sends holds it.
        auth.record("b", [BROKEN]);
        auth.request("a", ["private-a.1", "private-a.2"], (result) => answers["a"]!.push(result));
        await Promise.resolve();
        // B's request comes while that union is in flight; it fails, the split finds B's set failing alone.
        auth.request("b", [BROKEN], (result) => answers["b"]!.push(result));
        await flush();
        expect(answers["a"]!.map((result) => result.kind)).toEqual(["ok", "ok"]);
        expect(answers["b"]!.map((result) => result.kind)).toEqual(["error"]);
        // Asked for alone after the split (the retry path), never answered from a union that left it out.
        expect(requests.at(-1)).toEqual([BROKEN]);
    });
});

describe("AuthGateway: a union that fails once with 5xx, whose every set passes alone (issue 49's simulation, seed 7282)", () => {
    it("asks for the union again, answers every tab granted, and reopens the real stream on the union's cookie", async () => {
        const { auth, requests, failed, reopened, flush } = gateway(new Set(), 1);
        const answers: Record<string, AuthResult[]> = { a: [], b: [] };
        auth.request("a", ["private-a.1"], (result) => answers["a"]!.push(result));
        auth.request("b", ["private-b.1"], (result) => answers["b"]!.push(result));
        await flush();
        // The union failed; each set passed alone, which left the cookie with b's grant alone; the union again.
        expect(requests).toEqual([["private-a.1", "private-b.1"], ["private-a.1"], ["private-b.1"], ["private-a.1", "private-b.1"]]);
        expect([answers["a"]!.map((result) => result.kind), answers["b"]!.map((result) => result.kind), failed]).toEqual([["ok"], ["ok"], []]);
        // A stream opened while the cookie held b's grant alone would be deaf to a's channel: the real stream reopens.
        expect(reopened).toEqual([4]);
        // The union's grant answers a join of a granted channel again, and no reopen follows a grant that restored nothing.
        auth.request("a", ["private-a.1", "private-b.1"], (result) => answers["a"]!.push(result));
        await flush();
        expect([requests.length, answers["a"]!.map((result) => result.kind), reopened]).toEqual([4, ["ok", "ok"], [4]]);
    });
});

describe("AuthGateway: what a union grant adds to the cookie (the real whisper streams renewed at once: seeds 4087 and 12192)", () => {
    it("names the channels the cookie before did not grant, and every channel when that is unknown (an invalidation, a part's request)", async () => {
        const { auth, grants, flush } = gateway(new Set());
        auth.request("a", ["private-a.1"], () => undefined);
        await flush();
        auth.request("b", ["private-b.1"], () => undefined);
        await flush();
        auth.request("c", ["private-c.1"], () => undefined);
        await flush();
        // The hub refused a stream: what the cookie grants is unknown, so the next union grants every channel anew.
        auth.invalidate();
        auth.request("a", ["private-a.1"], () => undefined);
        await flush();
        expect(grants).toEqual([["private-a.1"], ["private-b.1"], ["private-c.1"], ["private-a.1", "private-b.1", "private-c.1"]]);
    });
});

describe("AuthGateway: a split whose failing channel another tab joined too (issue 49's simulation, seed 3176)", () => {
    it("finds that tab's set failing as well, so that the union it authorizes leaves the channel out and passes", async () => {
        const broken = new Set<string>();
        const { auth, requests, failed, flush } = gateway(broken);
        const answers: Record<string, AuthResult[]> = { a: [], b: [], c: [] };
        const ask = (client: "a" | "b" | "c", names: string[]) => auth.request(client, names, (result) => answers[client]!.push(result));
        ask("a", ["private-a.1"]);
        ask("c", ["news", "private-team", "private-c.1"]);
        await flush();
        expect(requests).toHaveLength(1); // One union, granted: private-team is known to pass.
        broken.add("private-team"); // Its authorization starts failing (Laravel answers 500 for any batch with it).
        ask("b", ["private-team", "private-b.1"]);
        await flush();
        // The union fails; B's set (private-b.1 is new: the suspect) fails alone; each of its channels is asked for alone,
        // private-team too, though C's set holds it: C was not asked for alone, and passing does not follow.
        expect(requests.slice(1)).toEqual([
            ["private-a.1", "news", "private-team", "private-c.1", "private-b.1"],
            ["private-team", "private-b.1"],
            ["private-team"],
            ["private-b.1"],
            ["private-a.1", "news", "private-c.1", "private-b.1"],
        ]);
        expect(answers["b"]!.map((result) => result.kind)).toEqual(["error"]);
        expect(failed).toEqual(["c"]); // C is told: its connector asks again, and hears why.
        // A's join is one request for a union without the failing channel, and A never hears of it.
        ask("a", ["private-a.1", "private-a.2"]);
        await flush();
        expect(requests.slice(6)).toEqual([["private-a.1", "private-a.2", "news", "private-c.1", "private-b.1"]]);
        expect(answers["a"]!.map((result) => result.kind)).toEqual(["ok", "ok"]);
    });
});

describe("AuthGateway: a tab that re-registers with a new engine (`hello` with `resync`, issue 49's simulation, seed 2061)", () => {
    it("authorizes the union, answering no one, when the request the engine sent before the hello left the tab's channel out; then the real stream reopens", async () => {
        const { auth, requests, reopened, flush } = gateway(new Set());
        const answers: AuthResult[] = [];
        // The new leading page's first join reaches its new engine first...
        auth.request("a", ["private-orders.1"], (result) => answers.push(result));
        await Promise.resolve();
        expect(requests).toEqual([["private-orders.1"]]);
        // ...then a tab of the last engine re-registers, asking nothing: it trusts the cookie, which that request replaces.
        auth.record("b", ["private-team", "private-orders.1"], true);
        await flush();
        expect(requests).toEqual([["private-orders.1"], ["private-orders.1", "private-team"]]);
        expect(answers.map((result) => result.kind)).toEqual(["ok"]);
        expect(reopened).toEqual([2]); // Once, after the union's answer.
    });

    it("sends nothing when the grant covers the tab's guarded channels, nor for a hello that is no resync (its request follows)", async () => {
        const { auth, requests, reopened, flush } = gateway(new Set());
        auth.request("a", ["private-orders.1", "private-team"], () => undefined);
        await flush();
        auth.record("b", ["news", "private-team"], true);
        auth.record("c", ["private-chat.1"]);
        await flush();
        expect(requests).toHaveLength(1);
        expect(reopened).toEqual([]);
        // A grant that leaves a guarded channel of the re-registering tab out (an engine seeded by a tab alone, say).
        auth.record("d", ["private-chat.2"], true);
        await flush();
        expect(requests.at(-1)).toEqual(["private-orders.1", "private-team", "news", "private-chat.1", "private-chat.2"]);
        expect(reopened).toEqual([2]);
    });
});
