import { describe, expect, it } from "vitest";
import { cookieCanReach, cookieProblems } from "../../../src/discovery/cookie-reach";

describe("cookieCanReach()", () => {
    it.each([
        ["example.com", "example.com", true],
        ["example.com", "hub.example.com", true],
        ["app.example.com", "hub.example.com", true],
        ["a.b.example.com", "hub.example.com", true],
        ["app.example.com", "example.com", true],
        ["app.example.com", "hub.other.com", false],
        ["example.com", "example.org", false],
        ["localhost", "localhost", true],
        ["localhost", "hub.localhost", true],
        ["127.0.0.1", "127.0.0.1", true],
        ["127.0.0.1", "localhost", false],
        ["app.test", "hub.test", false],
    ])("a cookie for %s reaches %s: %s", (page, hub, expected) => {
        expect(cookieCanReach(page, hub)).toBe(expected);
    });
});

describe("cookieProblems()", () => {
    const hub = new URL("https://example.com/.well-known/mercure");

    it("finds nothing when names agree and the hub is on the page's site", () => {
        expect(cookieProblems({ hub, pageOrigin: "https://example.com", hubCookie: "__Secure-mercure_access_token", appCookie: "__Secure-mercure_access_token" })).toEqual([]);
        expect(cookieProblems({ hub, pageOrigin: null, hubCookie: null, appCookie: null })).toEqual([]);
    });

    it("names both cookies when they differ", () => {
        expect(cookieProblems({ hub, pageOrigin: null, hubCookie: "mercure_access_token", appCookie: "laravel_mercure" })).toEqual([
            { kind: "name_mismatch", appCookie: "laravel_mercure", hubCookie: "mercure_access_token" },
        ]);
    });

    it("flags a __Secure- name when the page or the hub is on plain HTTP", () => {
        const name = "__Secure-mercure_access_token";
        expect(cookieProblems({ hub: new URL("http://127.0.0.1:3000/.well-known/mercure"), pageOrigin: null, hubCookie: name, appCookie: null })).toEqual([
            { kind: "secure_prefix_on_http", name },
        ]);
        expect(cookieProblems({ hub, pageOrigin: "http://example.com", hubCookie: null, appCookie: name })).toEqual([{ kind: "secure_prefix_on_http", name }]);
    });

    it("flags a hub on another site than the page", () => {
        expect(cookieProblems({ hub: new URL("https://hub.other.com/.well-known/mercure"), pageOrigin: "https://app.example.com", hubCookie: null, appCookie: null })).toEqual([
            { kind: "cross_site", pageHost: "app.example.com", hubHost: "hub.other.com" },
        ]);
    });
});
