import axios, { AxiosHeaders, type InternalAxiosRequestConfig } from "axios";
import { describe, expect, it } from "vitest";
import { inertiaSocketId, sendsSocketId, socketIdHeaders, socketIdInterceptor, withSocketId, type FetchFunction } from "../../../src/http/index";

// The page is https://app.test/dashboard (vitest.config.ts).

const echo = (id: string | undefined = "1234.5678") => ({ socketId: () => id });

/** A fetch that records each call's URL and X-Socket-ID header. */
function recordingFetch() {
    const calls: Array<{ url: string; socketId: string | null; other: string | null }> = [];
    const fetch: FetchFunction = async (input, init) => {
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        calls.push({ url: String(input instanceof Request ? input.url : input), socketId: headers.get("x-socket-id"), other: headers.get("x-other") });
        return new Response(null, { status: 204 });
    };
    return { calls, fetch };
}

describe("sendsSocketId", () => {
    it("is true for the page's origin (relative or absolute) and the listed origins only", () => {
        expect(sendsSocketId("/posts")).toBe(true);
        expect(sendsSocketId("https://app.test/posts")).toBe(true);
        expect(sendsSocketId(new URL("https://app.test/x"))).toBe(true);
        expect(sendsSocketId("https://api.app.test/posts")).toBe(false);
        expect(sendsSocketId("http://app.test/posts")).toBe(false);
        expect(sendsSocketId("https://api.app.test/posts", { origins: ["https://api.app.test"] })).toBe(true);
        expect(sendsSocketId("https://api.app.test/posts", { origins: ["not a url"] })).toBe(false);
    });
});

describe("socketIdHeaders", () => {
    it("is the X-Socket-ID header with the socket id, or nothing while there is none", () => {
        expect(socketIdHeaders(echo())).toEqual({ "X-Socket-ID": "1234.5678" });
        expect(socketIdHeaders(echo(""))).toEqual({});
        expect(socketIdHeaders({ socketId: () => undefined })).toEqual({});
    });
});

describe("withSocketId", () => {
    it("adds the header to same-origin requests, keeps the caller's headers and a header the caller set, and leaves other origins alone", async () => {
        const { calls, fetch } = recordingFetch();
        const http = withSocketId(echo(), fetch);
        await http("/posts", { method: "POST", headers: { "X-Other": "kept" } });
        await http(new Request("https://app.test/r", { headers: { "X-Other": "from request" } }));
        await http("/own", { headers: { "x-socket-id": "mine" } });
        await http("https://cdn.example/x.json");
        expect(calls).toEqual([
            { url: "/posts", socketId: "1234.5678", other: "kept" },
            { url: "https://app.test/r", socketId: "1234.5678", other: "from request" },
            { url: "/own", socketId: "mine", other: null },
            { url: "https://cdn.example/x.json", socketId: null, other: null },
        ]);
    });

    it("reads the socket id at each request and sends nothing while there is none", async () => {
        const { calls, fetch } = recordingFetch();
        let id = "";
        const http = withSocketId({ socketId: () => id }, fetch);
        await http("/a");
        id = "9.9";
        await http("/b");
        expect(calls.map((call) => call.socketId)).toEqual([null, "9.9"]);
    });
});

describe("socketIdInterceptor", () => {
    it("sets X-Socket-ID on axios's AxiosHeaders for same-origin requests (baseURL too), not on others nor over the request's own", () => {
        const intercept = socketIdInterceptor(echo(), { origins: ["https://api.example"] });
        const same = intercept({ url: "/posts", headers: new AxiosHeaders() });
        const based = intercept({ baseURL: "https://api.example/v1/", url: "posts", headers: new AxiosHeaders() });
        const foreign = intercept({ url: "https://cdn.example/x", headers: new AxiosHeaders() });
        const own = intercept({ url: "/posts", headers: new AxiosHeaders({ "X-Socket-ID": "mine" }) });
        expect((same.headers as AxiosHeaders).get("X-Socket-ID")).toBe("1234.5678");
        expect((based.headers as AxiosHeaders).get("X-Socket-ID")).toBe("1234.5678");
        expect((foreign.headers as AxiosHeaders).has("X-Socket-ID")).toBe(false);
        expect((own.headers as AxiosHeaders).get("X-Socket-ID")).toBe("mine");
    });

    it("works on plain header objects and on a config without headers", () => {
        const intercept = socketIdInterceptor(echo());
        expect(intercept({ url: "/a", headers: { Accept: "application/json" } }).headers).toEqual({ Accept: "application/json", "X-Socket-ID": "1234.5678" });
        expect(intercept({ url: "/a" }).headers).toEqual({ "X-Socket-ID": "1234.5678" });
        expect(intercept({ url: "/a", headers: { "x-socket-id": "mine" } }).headers).toEqual({ "x-socket-id": "mine" });
        expect(socketIdInterceptor(echo(""))({ url: "/a" }).headers).toBeUndefined();
    });
});

describe("socketIdInterceptor on a real axios instance", () => {
    // Issue 50 point 6: axios takes a protocol-relative url (`//host/x`) as absolute and sends it to that host,
    // baseURL or not; the header must follow where axios really sends the request, not where url + baseURL would point.
    /** Send `config` through an axios instance with the interceptor; the URL axios requested (resolved against the page) and the header it carried. */
    async function sent(defaults: { baseURL?: string; allowAbsoluteUrls?: boolean }, url: string) {
        let seen: { url: string; socketId: string | null } | null = null;
        const api = axios.create({
            ...defaults,
            adapter: async (config: InternalAxiosRequestConfig) => {
                seen = { url: new URL(api.getUri(config), location.href).href, socketId: (AxiosHeaders.from(config.headers).get("X-Socket-ID") as string | undefined) ?? null };
                return { data: null, status: 204, statusText: "No Content", headers: {}, config };
            },
        });
        api.interceptors.request.use(socketIdInterceptor(echo()));
        await api.get(url);
        return seen!;
    }

    it.each([
        [{ baseURL: "https://app.test/api" }, "//other.example/x", "https://other.example/x", null],
        [{ baseURL: "/api/" }, "//other.example/x", "https://other.example/x", null],
        [{}, "//other.example/x", "https://other.example/x", null],
        [{ baseURL: "https://app.test/api" }, "https://other.example/x", "https://other.example/x", null],
        [{ baseURL: "https://app.test/api", allowAbsoluteUrls: false }, "//other.example/x", "https://app.test/api/other.example/x", "1234.5678"],
        [{ baseURL: "https://other.example/api", allowAbsoluteUrls: false }, "/x", "https://other.example/api/x", null],
        [{ baseURL: "//other.example/api" }, "x", "https://other.example/api/x", null],
        [{ baseURL: "https://app.test/api/" }, "posts", "https://app.test/api/posts", "1234.5678"],
        [{ baseURL: "/api" }, "", "https://app.test/api", "1234.5678"],
    ])("%j + %s goes to %s with X-Socket-ID %s", async (defaults, url, target, header) => {
        expect(await sent(defaults, url)).toEqual({ url: target, socketId: header });
    });
});

describe("the fetch and Inertia paths, beside axios's (issue 50 point 6)", () => {
    it("judge a protocol-relative or backslashed URL by the origin fetch and Inertia resolve it to (another one: no header)", async () => {
        const { calls, fetch } = recordingFetch();
        const http = withSocketId(echo(), fetch);
        for (const url of ["//other.example/x", "\\\\other.example/x", "/\\other.example/x", "//app.test/x"]) await http(url);
        expect(calls.map((call) => [new URL(call.url, location.href).origin, call.socketId])).toEqual([
            ["https://other.example", null],
            ["https://other.example", null],
            ["https://other.example", null],
            ["https://app.test", "1234.5678"],
        ]);
        const hook = inertiaSocketId(echo());
        const visit = { detail: { visit: { url: "//other.example/x", headers: {} as Record<string, string> } } };
        hook(visit);
        expect(visit.detail.visit.headers).toEqual({});
    });
});

describe("a <base href> in the page (issue 50 point 6's sibling)", () => {
    it("judges a relative URL by the origin the base gives it, where fetch and axios send it, not by the page's", async () => {
        const base = document.createElement("base");
        base.setAttribute("href", "https://other.example/");
        document.body.append(base);
        try {
            const { calls, fetch } = recordingFetch();
            await withSocketId(echo(), fetch)("/posts");
            expect(calls.map((call) => call.socketId)).toEqual([null]);
            expect(socketIdInterceptor(echo())({ url: "/posts" }).headers).toBeUndefined();
            expect(sendsSocketId("https://app.test/posts")).toBe(true);
        } finally {
            base.remove();
        }
    });
});

describe("inertiaSocketId", () => {
    /** Inertia's `before` event for a visit to `url`. */
    const before = (url: string, headers: Record<string, string> = {}) => ({ detail: { visit: { url: new URL(url, "https://app.test/dashboard"), headers } } });

    it("adds the header to the visit's headers for a same-origin visit, unless the visit sets one; returns nothing (does not cancel)", () => {
        const hook = inertiaSocketId(echo());
        const visit = before("/posts", { "X-Inertia-Partial-Data": "a" });
        expect(hook(visit)).toBeUndefined();
        expect(visit.detail.visit.headers).toEqual({ "X-Inertia-Partial-Data": "a", "X-Socket-ID": "1234.5678" });
        const own = before("/posts", { "X-Socket-Id": "mine" });
        hook(own);
        expect(own.detail.visit.headers).toEqual({ "X-Socket-Id": "mine" });
        const foreign = before("https://elsewhere.example/");
        hook(foreign);
        expect(foreign.detail.visit.headers).toEqual({});
    });
});

describe("inertiaSocketId with @inertiajs/core's router", () => {
    it("registers with router.on('before', …) (types included) and adds the header to the visit Inertia's before event carries", async () => {
        const { router } = await import("@inertiajs/core");
        const remove = router.on("before", inertiaSocketId(echo()));
        try {
            // What the router does before sending a visit (packages/core/src/events.ts fireBeforeEvent).
            const visit = { url: new URL("https://app.test/posts"), method: "post", headers: {} as Record<string, string> };
            const sent = document.dispatchEvent(new CustomEvent("inertia:before", { cancelable: true, detail: { visit } }));
            expect(sent).toBe(true);
            expect(visit.headers).toEqual({ "X-Socket-ID": "1234.5678" });
        } finally {
            remove();
        }
    });
});
