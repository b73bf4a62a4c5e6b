import { describe, expect, it } from "vitest";
import { parseForm, hasForbiddenChars } from "../../../src/dev/hub/form";
import { compileMatcher, isReservedTopic } from "../../../src/dev/hub/matchers";
import { History } from "../../../src/dev/hub/history";
import { serializeEvent } from "../../../src/dev/hub/sse";
import { parseAuthorizationDetails, payloadFor } from "../../../src/dev/hub/grants";
import { readCookie } from "../../../src/dev/hub/authorization";
import { resolveHubOptions } from "../../../src/dev/hub/options";
import { MercureError } from "../../../src/errors";

const BASE = "http://127.0.0.1:8080/.well-known/mercure";
const bytes = (text: string) => Buffer.from(text, "latin1");

describe("form parsing", () => {
    it("decodes like URLSearchParams, keeping order and repeated names", () => {
        expect(parseForm(bytes("a=1&a=2&b=x+y%20z&c&=e&&d=%zz%2"))).toEqual([
            ["a", "1"], ["a", "2"], ["b", "x y z"], ["c", ""], ["", "e"], ["d", "%zz%2"],
        ]);
        expect(parseForm(bytes("t=%C3%A9%E2%80%8B"))).toEqual([["t", "é\u200B"]]);
    });

    it("refuses invalid UTF-8 instead of substituting U+FFFD", () => {
        expect(parseForm(bytes("a=%FF"))).toBeNull();
        expect(parseForm(bytes("a=%C3"))).toBeNull();
        expect(parseForm(bytes("%ED%A0%80=1"))).toBeNull();
    });

    it("flags controls, DEL, C1, Cf and lone surrogates", () => {
        for (const bad of ["\u0000", "\t", "\u007F", "\u0085", "\u200B", "\u2066", "\uFEFF", "\uD800"]) {
            expect(hasForbiddenChars(`a${bad}b`)).toBe(true);
        }
        expect(hasForbiddenChars("https://example.com/é/😀 *")).toBe(false);
    });
});

describe("matchers", () => {
    it("never matches a topic that is not a URL with a URL pattern, while exact still can", () => {
        const topic = "http://exa mple.com/x";
        expect(compileMatcher("urlpattern", "http://*/x", BASE)!.matches(topic)).toBe(false);
        expect(compileMatcher("urlpattern", "http://example.com/x", BASE)!.matches("http://example.com/x")).toBe(true);
        expect(compileMatcher("exact", topic, BASE)!.matches(topic)).toBe(true);
    });

    it("returns null for an invalid pattern", () => {
        expect(compileMatcher("urlpattern", "https://x/(", BASE)).toBeNull();
    });

    it("refuses custom regular-expression groups (no unbounded backtracking) but keeps named, optional and wildcard parts", () => {
        expect(compileMatcher("urlpattern", "https://x/:id(\\d+)", BASE)).toBeNull();
        expect(compileMatcher("urlpattern", "https://x/:type(news|alerts)", BASE)).toBeNull();
        expect(compileMatcher("urlpattern", "https://x/((a+)+)b", BASE)).toBeNull();
        const presence = compileMatcher("urlpattern", "/.well-known/mercure/subscriptions/:match_type/t{/:subscriber}?", BASE)!;
        expect(presence.matches("/.well-known/mercure/subscriptions/exact/t/urn%3Auuid%3A1")).toBe(true);
        expect(presence.matches("/.well-known/mercure/subscriptions/exact/t")).toBe(true);
        expect(compileMatcher("urlpattern", "https://x/*", BASE)!.matches("https://x/a/b")).toBe(true);
    });

    it.skipIf(Number(process.versions.node.split(".")[0]) >= 23)("does not install a global URLPattern", () => {
        expect("URLPattern" in globalThis).toBe(false);
    });

    it("does not ignore case in URL patterns", () => {
        expect(compileMatcher("urlpattern", "https://example.com/Books/:id", BASE)!.matches("https://example.com/books/1")).toBe(false);
    });

    it("finds reserved topics after resolution and normalization only", () => {
        const reserved = ["/.well-known/mercure", "/.well-known/mercure/", "https://x/.well-known/mercure/a", "./mercure", "mercure/a",
            "/a/../.well-known/mercure", "/.well-known/%6dercure", "/%2E%2E/.well-known/mercure/x", "/.well-known/merc%75re/x"];
        for (const topic of reserved) expect(isReservedTopic(topic, BASE, "/.well-known/mercure"), topic).toBe(true);
        const free = ["/.well-known/mercure2", "/.well-known/Mercure", "urn:x:/.well-known/mercure", "https://x/a/.well-known/mercure", "/.well-known/mercure%2Fa"];
        for (const topic of free) expect(isReservedTopic(topic, BASE, "/.well-known/mercure"), topic).toBe(false);
    });
});

describe("SSE serialization", () => {
    it("writes event, retry, id, then one data line per line", () => {
        expect(serializeEvent({ id: "1", topics: ["t"], data: "a\r\nb\rc\nd", private: false, type: "x", retry: "10" })).toBe(
            "event: x\nretry: 10\nid: 1\ndata: a\ndata: b\ndata: c\ndata: d\n\n",
        );
        expect(serializeEvent({ id: "2", topics: ["t"], data: "", private: false })).toBe("id: 2\ndata: \n\n");
        expect(serializeEvent({ id: "3", topics: ["t"], data: "x\n", private: false })).toBe("id: 3\ndata: x\ndata: \n\n");
    });
});

describe("history", () => {
    const update = (id: string) => ({ id, topics: ["t"], data: id, private: false });

    it("evicts the oldest beyond its size and tracks the last id", () => {
        const history = new History(true, 2);
        expect(history.lastEventId).toBe("earliest");
        ["a", "b", "c"].forEach((id) => history.add(update(id)));
        expect(history.lastEventId).toBe("c");
        expect(history.replay("earliest").updates.map((u) => u.id)).toEqual(["b", "c"]);
        expect(history.replay("a")).toEqual({ lastEventId: "earliest", updates: [] });
        expect(history.replay("b")).toEqual({ lastEventId: "b", updates: [update("c")] });
    });

    it("retains nothing when disabled but still tracks the last id", () => {
        const history = new History(false, 10);
        history.add(update("a"));
        expect(history.replay("earliest")).toEqual({ lastEventId: "earliest", updates: [] });
        expect(history.lastEventId).toBe("a");
    });
});

describe("authorization details", () => {
    const type = "https://mercure.rocks/authorization-detail";

    it("keeps Mercure details in token order with their payloads", () => {
        const grants = parseAuthorizationDetails([
            { type: "other" },
            { type, actions: ["subscribe"], topics: [{ match: "a" }] },
            { type, actions: ["subscribe"], topics: [{ match: "b", match_type: "exact" }], payload: null },
        ], BASE)!;
        expect(grants).toHaveLength(2);
        expect(grants[0]!.payload).toBeUndefined();
        expect(payloadFor(grants, "b")).toEqual({ value: null });
        expect(payloadFor(grants, "a")).toBeUndefined();
    });

    it("rejects the whole token on any invalid Mercure detail", () => {
        expect(parseAuthorizationDetails([{ type, actions: ["subscribe"], topics: [{ match: "a" }] }, { type, actions: "subscribe", topics: [{ match: "a" }] }], BASE)).toBeNull();
        expect(parseAuthorizationDetails([{ type, actions: ["subscribe"], topics: [{ match: "a", match_type: null }] }], BASE)).toBeNull();
        expect(parseAuthorizationDetails([{ actions: ["subscribe"] }], BASE)).toBeNull();
        expect(parseAuthorizationDetails("x", BASE)).toBeNull();
    });
});

describe("helpers", () => {
    it("reads the first cookie of a name", () => {
        expect(readCookie("a=1; mercure=2; mercure=3", "mercure")).toBe("2");
        expect(readCookie('x="q"', "x")).toBe("q");
        expect(readCookie("xmercure=1", "mercure")).toBeNull();
    });

    it("validates options", () => {
        expect(resolveHubOptions({ jwtKey: "k", issuers: ["i"], path: "/hub/" }).path).toBe("/hub");
        expect(() => resolveHubOptions({ jwtKey: "", issuers: ["i"] })).toThrow(MercureError);
        expect(() => resolveHubOptions({ jwtKey: "k", issuers: ["i"], path: "hub" })).toThrow(MercureError);
        expect(() => resolveHubOptions({ jwtKey: "k", issuers: ["i"], historySize: 0 })).toThrow(MercureError);
        expect(() => resolveHubOptions({ jwtKey: "k", issuers: ["i"], heartbeatMs: 0 })).toThrow(MercureError);
    });

    it("requires at least one trusted issuer, as the reference hub binds its keys to issuers", () => {
        for (const issuers of [undefined, [], [""], [42]]) {
            expect(() => resolveHubOptions({ jwtKey: "k", issuers } as unknown as Parameters<typeof resolveHubOptions>[0])).toThrow(/issuers/);
        }
        expect(resolveHubOptions({ jwtKey: "k", issuers: ["https://a", "https://b"] }).issuers).toEqual(["https://a", "https://b"]);
    });
});
