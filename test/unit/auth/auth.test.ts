import { afterEach, describe, expect, it, vi } from "vitest";
import { requestAuthorization, SERVER_MESSAGE_MAX } from "../../../src/auth/auth-client";
import { parseAuthResponse } from "../../../src/auth/auth-response";
import { interpretBatch } from "../../../src/auth/batch-outcome";
import type { FetchLike } from "../../../src/transport/platform";

describe("parseAuthResponse", () => {
    it("reads the newest server's response", () => {
        const parsed = parseAuthResponse({
            channel_names: [
                { name: "news" },
                { name: "private-secret", denied: true },
                { name: "private-encrypted-orders.1", jwk: { kty: "oct", k: "abc", alg: "A256GCM", use: "enc" } },
                { name: 5 },
                "junk",
                { name: "private-x", jwk: "not-an-object", denied: "yes" },
            ],
            expires_in: 300,
            topic_prefix: "https://laravel.alt/echo/",
            client_events: true,
        });
        expect([...parsed.channels.keys()]).toEqual(["news", "private-secret", "private-encrypted-orders.1", "private-x"]);
        expect(parsed.channels.get("private-secret")!.denied).toBe(true);
        expect(parsed.channels.get("private-x")).toEqual({ name: "private-x", denied: false, jwk: null });
        expect(parsed.channels.get("private-encrypted-orders.1")!.jwk).toEqual({ kty: "oct", k: "abc", alg: "A256GCM", use: "enc" });
        expect(parsed).toMatchObject({ expiresIn: 300, topicPrefix: "https://laravel.alt/echo/", clientEvents: true });
    });

    it("falls back safely on anything unexpected", () => {
        for (const body of [null, "x", [], { channel_names: "no", expires_in: "300", topic_prefix: 5, client_events: "true" }]) {
            const parsed = parseAuthResponse(body);
            expect(parsed.channels.size).toBe(0);
            expect(parsed).toMatchObject({ expiresIn: null, topicPrefix: null, clientEvents: false });
        }
        expect(parseAuthResponse({ expires_in: Infinity }).expiresIn).toBeNull();
        expect(parseAuthResponse({ expires_in: 0 }).expiresIn).toBeNull();
    });
});

describe("requestAuthorization", () => {
    afterEach(() => vi.useRealTimers());

    const base = (fetch: FetchLike, signal = new AbortController().signal) => ({
        endpoint: "/broadcasting/auth",
        headers: {},
        channelNames: ["a"],
        fetch,
        signal,
        timeout: 1_000,
    });

    it("classifies 2xx, 4xx and 5xx", async () => {
        const answer = (status: number, body = "{}") => async () => ({ status, text: async () => body });
        expect((await requestAuthorization(base(answer(200, '{"topic_prefix":"p/"}')))).kind).toBe("ok");
        expect(await requestAuthorization(base(answer(419)))).toEqual({ kind: "rejected", status: 419 });
        expect(await requestAuthorization(base(answer(500)))).toEqual({ kind: "error", status: 500, cause: null });
        // A 3xx is what fetch gives back for a redirect it was told not to follow (Node.js; a browser gives status 0).
        expect(await requestAuthorization(base(answer(302)))).toEqual({ kind: "rejected", status: 302, detail: "a redirect, not followed" });
    });

    it("asks fetch not to follow a redirect, and names where one pointed (issue 50: the headers are the auth endpoint's alone)", async () => {
        const inits: RequestInit[] = [];
        const answer = (status: number, headers: Record<string, string> = {}) => async (_url: string, init: RequestInit) => {
            inits.push(init);
            return { status, headers: new Headers(headers), text: async () => "" };
        };
        expect(await requestAuthorization(base(answer(307, { location: "https://elsewhere.test/x" })))).toEqual({
            kind: "rejected",
            status: 307,
            detail: "a redirect to https://elsewhere.test/x, not followed",
        });
        expect(await requestAuthorization(base(answer(0)))).toEqual({ kind: "rejected", status: 0, detail: "a redirect, not followed" });
        expect(inits.map((init) => init.redirect)).toEqual(["manual", "manual"]);
    });

    it("keeps the message of a JSON error body, as one bounded line of text, and nothing of an HTML one (issue 51)", async () => {
        const answer = (status: number, body: string) => async () => ({ status, text: async () => body });
        const secure = "The cookie name __Secure-mercure_access_token needs HTTPS, but public_url is http://127.0.0.1:3000.";
        expect(await requestAuthorization(base(answer(500, JSON.stringify({ message: `  ${secure}\n`, exception: "RuntimeException" }))))).toEqual({
            kind: "error",
            status: 500,
            cause: null,
            message: secure,
        });
        expect(await requestAuthorization(base(answer(403, '{"message":"This action\\r\\n\\tis unauthorized."}')))).toEqual({ kind: "rejected", status: 403, message: "This action is unauthorized." });
        const long = await requestAuthorization(base(answer(500, JSON.stringify({ message: "x".repeat(5_000) }))));
        expect(long.kind === "error" ? long.message : null).toBe("x".repeat(SERVER_MESSAGE_MAX - 1) + "…");
        for (const body of ["<html><title>Server Error</title></html>", '{"message": 42}', '{"message": "   "}', "[]", '"message"']) {
            expect(await requestAuthorization(base(answer(500, body))), body).toEqual({ kind: "error", status: 500, cause: null });
        }
    });

    it("reports an abort by disconnect() as aborted, not as an error", async () => {
        const controller = new AbortController();
        const fetch: FetchLike = (_url, init) =>
            new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(new Error("aborted"))));
        const pending = requestAuthorization(base(fetch, controller.signal));
        controller.abort();
        expect(await pending).toEqual({ kind: "aborted" });
    });

    it("gives up after the deadline as a transient error", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const fetch: FetchLike = (_url, init) =>
            new Promise((_resolve, reject) => init.signal?.addEventListener("abort", () => reject(new Error("aborted"))));
        const pending = requestAuthorization(base(fetch));
        await vi.advanceTimersByTimeAsync(1_000);
        const result = await pending;
        expect(result.kind).toBe("error");
        expect(result.kind === "error" && String(result.cause)).toContain("timed out after 1000 ms");
    });
    it("times out a fetch that ignores its signal", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const pending = requestAuthorization(base(() => new Promise(() => undefined)));
        await vi.advanceTimersByTimeAsync(1_000);
        const result = await pending;
        expect(result.kind).toBe("error");
        expect(result.kind === "error" && String(result.cause)).toContain("timed out after 1000 ms");
    });

    it("reports aborted at once when disconnect() aborts a fetch that ignores its signal", async () => {
        const controller = new AbortController();
        const pending = requestAuthorization(base(() => new Promise(() => undefined), controller.signal));
        controller.abort();
        expect(await pending).toEqual({ kind: "aborted" });
    });

    it("times out a response whose body never ends", async () => {
        vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
        const pending = requestAuthorization(base(async () => ({ status: 200, text: () => new Promise<string>(() => undefined) })));
        await vi.advanceTimersByTimeAsync(1_000);
        expect((await pending).kind).toBe("error");
    });
});

describe("interpretBatch", () => {
    const response = parseAuthResponse({ channel_names: [{ name: "a" }, { name: "private-b", denied: true }, { name: "c" }] });
    const joined = (name: string) => name !== "c";

    it("splits a grant into denied channels and the still-joined granted ones", () => {
        expect(interpretBatch(["a", "private-b", "c"], { kind: "ok", response }, null, joined)).toEqual({
            kind: "granted",
            response,
            denied: ["private-b"],
            granted: ["a"],
        });
    });

    it("blames a 4xx on the newly joined channels, or on the whole set when nothing is new", () => {
        const rejected = { kind: "rejected", status: 403 } as const;
        expect(interpretBatch(["a", "b"], rejected, new Set(["a"]), joined)).toEqual({ kind: "newcomers_rejected", status: 403, newcomers: ["b"] });
        expect(interpretBatch(["a", "b"], rejected, null, joined)).toEqual({ kind: "newcomers_rejected", status: 403, newcomers: ["a", "b"] });
        expect(interpretBatch(["a"], rejected, new Set(["a", "b"]), joined)).toEqual({ kind: "rejected", status: 403 });
    });

    it("passes transient failures and aborts through", () => {
        expect(interpretBatch(["a"], { kind: "error", status: 503, cause: null }, null, joined)).toEqual({ kind: "failed", status: 503, cause: null });
        expect(interpretBatch(["a"], { kind: "aborted" }, null, joined)).toEqual({ kind: "aborted" });
    });
});
