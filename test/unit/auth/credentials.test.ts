import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { grant } from "../../fakes/fake-auth-server";
import { createHarness, settleLoads, useScopedFakeTimers } from "../../fakes/connector-harness";

/*
 * Issue 33, "Credentials that change while the page lives": `bearerToken`, `csrfToken` and each `auth.headers` value
 * may be a function called before every auth request; without an explicit token the page's CSRF token is read at each
 * request (the meta tag, else Laravel's XSRF-TOKEN cookie); a 419 is retried once with the token read again; no
 * credential reaches the debug log or an error message.
 */

beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    document.head.querySelector('meta[name="csrf-token"]')?.remove();
    document.cookie = "XSRF-TOKEN=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
});

/** Put `<meta name="csrf-token" content="…">` in the page, replacing one there. */
function setMeta(token: string): void {
    document.head.querySelector('meta[name="csrf-token"]')?.remove();
    const meta = document.createElement("meta");
    meta.setAttribute("name", "csrf-token");
    meta.setAttribute("content", token);
    document.head.append(meta);
}

describe("credential functions", () => {
    it("are called before every auth request, sync or async, and their current values sent (not their source text)", async () => {
        let user = "ann";
        const h = createHarness({
            bearerToken: async () => `jwt-of-${user}`,
            csrfToken: () => `csrf-of-${user}`,
            auth: { headers: { "X-Tenant": () => `tenant-of-${user}`, "X-Static": "kept" } },
        });
        h.connector.channel("news");
        await settleLoads();
        user = "bob";
        h.connector.privateChannel("inbox");
        await settleLoads();
        const sent = h.auth.requests.map((request) => [request.headers["Authorization"], request.headers["X-CSRF-TOKEN"], request.headers["X-Tenant"], request.headers["X-Static"]]);
        expect(sent).toEqual([
            ["Bearer jwt-of-ann", "csrf-of-ann", "tenant-of-ann", "kept"],
            ["Bearer jwt-of-bob", "csrf-of-bob", "tenant-of-bob", "kept"],
        ]);
        h.connector.disconnect();
    });

    it("keep strings working as Echo writes them", async () => {
        const h = createHarness({ bearerToken: "abc", csrfToken: "def" });
        h.connector.channel("news");
        await settleLoads();
        expect(h.auth.requests[0]!.headers).toMatchObject({ Authorization: "Bearer abc", "X-CSRF-TOKEN": "def" });
        h.connector.disconnect();
    });

    it("make the connector run alone instead of sharing tabs by a value it cannot know before a request, unless it is the CSRF token's", () => {
        const share = (options: Parameters<typeof createHarness>[0]) => createHarness(options).connector.options["shareAcrossTabs"];
        expect(share({ bearerToken: () => "x" })).toBe(false);
        expect(share({ auth: { headers: { "X-Tenant": () => "t" } } })).toBe(false);
        expect(share({ bearerToken: "x", auth: { headers: { "X-Tenant": "t" } } })).toBeUndefined();
        // Issue 49: a CSRF token names no tab group; the leading tab's engine reads its own page's at each request.
        expect(share({ csrfToken: async () => "x" })).toBeUndefined();
        expect(share({ auth: { headers: { "X-XSRF-TOKEN": () => "x" } } })).toBeUndefined();
    });

    it("that give nothing send no header, not Echo's text of the function", async () => {
        const h = createHarness({ bearerToken: () => null, csrfToken: () => undefined });
        h.connector.channel("news");
        await settleLoads();
        expect(Object.keys(h.auth.requests[0]!.headers)).toEqual(["Content-Type", "Accept"]);
        h.connector.disconnect();
    });

    it("that throw fail the batch transiently, the message never quoting what they threw", async () => {
        const h = createHarness({ bearerToken: () => Promise.reject(new Error("token secret-123 expired")) });
        h.track(h.connector.channel("news"));
        await settleLoads();
        expect(h.auth.requests).toHaveLength(0);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed"]);
        expect(h.errors[0]!.error.message).toContain("the `bearerToken` function failed");
        expect(h.errors[0]!.error.message).not.toContain("secret-123");
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        h.connector.disconnect();
    });

    it.each([
        ["bearerToken", "the `bearerToken` function failed"],
        ["csrfToken", "the `csrfToken` function failed"],
        ["auth.headers", 'the `auth.headers` "X-Tenant" function failed'],
    ])("that throw (%s) are reported on every channel by name, kept as the cause, and retried with backoff", async (kind, named) => {
        let broken = true;
        const fn = (): string => {
            if (broken) throw new Error("secret-456");
            return "ok";
        };
        const h = createHarness(kind === "auth.headers" ? { auth: { headers: { "X-Tenant": fn } } } : { [kind]: fn });
        h.track(h.connector.channel("news"));
        h.track(h.connector.privateChannel("inbox"));
        await settleLoads();
        expect(h.auth.requests).toHaveLength(0);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([
            ["news", "auth_failed"],
            ["private-inbox", "auth_failed"],
        ]);
        expect(h.errors[0]!.error.message).toContain(named);
        expect(h.errors[0]!.error.message).not.toContain("secret-456");
        expect(String((h.errors[0]!.error.cause as { cause?: unknown }).cause)).toContain("secret-456");
        broken = false;
        await vi.advanceTimersByTimeAsync(1_300); // the first backoff: 1 s ± 20 %
        await settleLoads();
        expect(h.auth.requests).toHaveLength(1);
        expect(h.EventSource.live()).toHaveLength(1);
        h.connector.disconnect();
    });
});

describe("credential functions that never settle (issue 49)", () => {
    /** A function whose first `hanging` calls never settle, then gives `value`. */
    function hangsFirst(hanging: number, value: string) {
        const calls = { count: 0 };
        const fn = () => (++calls.count <= hanging ? new Promise<string>(() => undefined) : Promise.resolve(value));
        return { calls, fn };
    }

    it.each([
        ["bearerToken", "the `bearerToken` function"],
        ["csrfToken", "the `csrfToken` function"],
        ["auth.headers", 'the `auth.headers` "X-Tenant" function'],
    ])("fail the batch at the authTimeout deadline (%s), naming the function and the option on every channel, then retry with backoff; later joins go through", async (kind, named) => {
        const { calls, fn } = hangsFirst(1, "value");
        const options = kind === "auth.headers" ? { auth: { headers: { "X-Tenant": fn } } } : { [kind]: fn };
        const h = createHarness({ ...options, authTimeout: 1_000 });
        h.track(h.connector.channel("news"));
        await settleLoads();
        expect(h.errors).toEqual([]);
        await vi.advanceTimersByTimeAsync(999);
        expect(h.errors).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(h.auth.requests).toHaveLength(0);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([["news", "auth_failed"]]);
        expect(h.errors[0]!.error.message).toBe(`The broadcasting auth request to "/broadcasting/auth" failed (${named} gave no value within 1000 ms, the \`authTimeout\` option); retrying with backoff.`);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        // A join meanwhile is not blocked: the retry (1 s ± 20 %) authorizes both.
        h.track(h.connector.privateChannel("inbox"));
        await vi.advanceTimersByTimeAsync(1_300);
        await settleLoads();
        expect(calls.count).toBe(2);
        expect(h.auth.requests.map((request) => request.channelNames)).toEqual([["news", "private-inbox"]]);
        expect(h.EventSource.live()).toHaveLength(1);
        expect(h.errors).toHaveLength(1);
        h.connector.disconnect();
    });

    it("keep failing at each deadline with a growing backoff while they hang, one report per channel each time, never a request", async () => {
        const { calls, fn } = hangsFirst(Infinity, "never");
        vi.spyOn(Math, "random").mockReturnValue(0.5); // no jitter: 1 s, 2 s, 4 s
        const h = createHarness({ bearerToken: fn, authTimeout: 1_000 });
        h.track(h.connector.channel("news"));
        await settleLoads();
        await vi.advanceTimersByTimeAsync(1_000); // deadline 1
        await vi.advanceTimersByTimeAsync(1_000 + 1_000); // backoff 1, deadline 2
        await vi.advanceTimersByTimeAsync(2_000 + 1_000); // backoff 2, deadline 3
        expect(calls.count).toBe(3);
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["auth_failed", "auth_failed", "auth_failed"]);
        expect(h.auth.requests).toHaveLength(0);
        h.connector.disconnect();
        vi.restoreAllMocks();
    });

    it("change nothing when they settle after the deadline: the newer reading's headers stand", async () => {
        let release: (value: string) => void = () => undefined;
        let calls = 0;
        const bearerToken = () => (++calls === 1 ? new Promise<string>((resolve) => (release = resolve)) : "fresh");
        const h = createHarness({ bearerToken, authTimeout: 1_000 });
        h.track(h.connector.channel("news"));
        await settleLoads();
        await vi.advanceTimersByTimeAsync(1_000 + 1_300);
        await settleLoads();
        expect(h.auth.requests.map((request) => request.headers["Authorization"])).toEqual(["Bearer fresh"]);
        release("stale");
        await settleLoads();
        expect(h.connector.options["auth"].headers["Authorization"]).toBe("Bearer fresh");
        h.connector.channel("more");
        await settleLoads();
        expect(h.auth.requests.map((request) => request.headers["Authorization"])).toEqual(["Bearer fresh", "Bearer fresh"]);
        expect(calls).toBe(3);
        h.connector.disconnect();
    });

    it("are abandoned on disconnect(): no error, no request", async () => {
        const { fn } = hangsFirst(Infinity, "never");
        const h = createHarness({ bearerToken: fn, authTimeout: 1_000 });
        h.track(h.connector.channel("news"));
        await settleLoads();
        h.connector.disconnect();
        await vi.advanceTimersByTimeAsync(10_000);
        expect(h.errors).toEqual([]);
        expect(h.auth.requests).toHaveLength(0);
        expect(h.connector.connectionStatus()).toBe("disconnected");
    });
});

describe("the page's CSRF token, read at each request", () => {
    it("re-reads <meta name=\"csrf-token\"> after a 419 (as Echo wrote it until then)", async () => {
        setMeta("first");
        const h = createHarness();
        h.auth.handler = (names, request) => {
            if (request.headers["X-CSRF-TOKEN"] === "second") return grant(names);
            setMeta("second"); // A page that renews its meta tag itself (a Livewire or Turbo navigation, say).
            return { status: 419 };
        };
        h.track(h.connector.channel("news"));
        await settleLoads();
        expect(h.auth.requests.map((request) => request.headers["X-CSRF-TOKEN"])).toEqual(["first", "second"]);
        expect(h.errors).toEqual([]);
        h.connector.disconnect();
    });

    it("falls back to Laravel's XSRF-TOKEN cookie, URL-decoded, as X-XSRF-TOKEN when there is no meta tag", async () => {
        document.cookie = "XSRF-TOKEN=eyJpdiI6IkFCQyJ9%3D%3D; path=/";
        const h = createHarness();
        h.connector.channel("news");
        await settleLoads();
        expect(h.auth.requests[0]!.headers["X-XSRF-TOKEN"]).toBe("eyJpdiI6IkFCQyJ9==");
        expect(h.auth.requests[0]!.headers["X-CSRF-TOKEN"]).toBeUndefined();
        h.connector.disconnect();
    });
});

describe("a 419 (CSRF token mismatch)", () => {
    it("is retried once with the token read again, and the channels join", async () => {
        let token = "stale";
        const h = createHarness({ csrfToken: () => token });
        h.auth.handler = (names, request) => {
            if (request.headers["X-CSRF-TOKEN"] === "fresh") return grant(names);
            token = "fresh"; // The session was regenerated: the page's token is new by the time it is read again.
            return { status: 419, body: { message: "CSRF token mismatch." } };
        };
        h.track(h.connector.privateChannel("inbox"));
        await settleLoads();
        expect(h.auth.requests.map((request) => request.headers["X-CSRF-TOKEN"])).toEqual(["stale", "fresh"]);
        expect(h.errors).toEqual([]);
        expect(h.EventSource.instances).toHaveLength(1);
        h.connector.disconnect();
    });

    it("twice reports an error naming the CSRF token and the session on every channel, leaves none, and backs off", async () => {
        const h = createHarness({ csrfToken: () => "secret-csrf-value", bearerToken: () => "secret-bearer-value" });
        const logged: unknown[] = [];
        const withDebug = createHarness({ debug: (step: string, detail?: object) => logged.push([step, detail]), csrfToken: () => "secret-csrf-value", bearerToken: () => "secret-bearer-value" });
        for (const harness of [h, withDebug]) {
            harness.auth.handler = () => ({ status: 419, body: { message: "CSRF token mismatch." } });
            harness.track(harness.connector.privateChannel("inbox"));
            harness.track(harness.connector.channel("news"));
            await settleLoads();
        }
        expect(h.auth.requests).toHaveLength(2);
        expect(h.errors.map((entry) => [entry.channel, entry.error.code])).toEqual([
            ["private-inbox", "auth_rejected"],
            ["news", "auth_rejected"],
        ]);
        expect(h.errors[0]!.error.message).toMatch(/CSRF token.*session/);
        expect(Object.keys(h.connector.channels)).toEqual(["private-inbox", "news"]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        // The retry comes after the backoff (1 s ± 20 %), reading the token again.
        await vi.advanceTimersByTimeAsync(1_300);
        expect(h.auth.requests).toHaveLength(4);
        // Nothing of a credential in the debug log or the errors.
        const text = JSON.stringify(logged) + JSON.stringify([...h.errors, ...withDebug.errors].map((entry) => [entry.error.message, String(entry.error.cause)]));
        expect(logged.length).toBeGreaterThan(0);
        expect(text).not.toMatch(/secret-(csrf|bearer)-value/);
        h.connector.disconnect();
        withDebug.connector.disconnect();
    });
});

describe("a 419 for a page whose session was regenerated after it loaded", () => {
    it("is retried with the XSRF-TOKEN cookie, which Laravel renews on every response, instead of the stale meta tag, and keeps to the cookie", async () => {
        setMeta("loaded-with");
        document.cookie = "XSRF-TOKEN=regenerated%2B; path=/";
        const h = createHarness();
        h.auth.handler = (names, request) => (request.headers["X-XSRF-TOKEN"] === "regenerated+" && request.headers["X-CSRF-TOKEN"] === undefined ? grant(names) : { status: 419 });
        h.track(h.connector.privateChannel("inbox"));
        await settleLoads();
        h.connector.channel("news");
        await settleLoads();
        expect(h.auth.requests.map((request) => request.headers["X-CSRF-TOKEN"] ?? "xsrf " + request.headers["X-XSRF-TOKEN"])).toEqual(["loaded-with", "xsrf regenerated+", "xsrf regenerated+"]);
        expect(h.errors).toEqual([]);
        h.connector.disconnect();
    });
});

describe("the XSRF-TOKEN cookie, read only when needed", () => {
    it("is not read for a page that gave Echo a CSRF token (a page's first cookie read costs a round trip to the browser), and read without one", async () => {
        const { dynamicCredentials } = await import("../../../src/auth/credential-options");
        const reads = vi.spyOn(document, "cookie", "get");
        try {
            expect(dynamicCredentials({ auth: { headers: { "X-CSRF-TOKEN": "token" } } }, false)).toBe(false);
            expect(reads).not.toHaveBeenCalled();
            expect(dynamicCredentials({ auth: { headers: {} } }, false)).toBe(false);
            expect(reads).toHaveBeenCalledTimes(1);
        } finally {
            reads.mockRestore();
        }
    });
});
