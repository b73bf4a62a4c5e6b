import { describe, expect, it } from "vitest";
import { linksWithRel, parseLinkHeader } from "../../../src/discovery/link-header";

describe("parseLinkHeader()", () => {
    it("reads a target, its relation types and its parameters", () => {
        const [link] = parseLinkHeader('<https://example.com/.well-known/mercure>; rel="mercure"; last-event-id="urn:uuid:1"');
        expect(link).toMatchObject({
            target: "https://example.com/.well-known/mercure",
            href: "https://example.com/.well-known/mercure",
            rel: ["mercure"],
        });
        expect(link!.params["last-event-id"]).toBe("urn:uuid:1");
    });

    it("reads several links in one header value", () => {
        const links = parseLinkHeader('<https://hub.test/a>; rel="mercure", <https://example.com/books/1>; rel="self"');
        expect(links.map((link) => [link.href, link.rel])).toEqual([
            ["https://hub.test/a", ["mercure"]],
            ["https://example.com/books/1", ["self"]],
        ]);
    });

    it("reads links across several header lines", () => {
        const links = parseLinkHeader(['<https://hub.test/a>; rel="mercure"', '<https://hub.test/b>; rel="mercure", <https://x.test/>; rel=next']);
        expect(links.map((link) => link.href)).toEqual(["https://hub.test/a", "https://hub.test/b", "https://x.test/"]);
    });

    it("splits several relation types in one rel and lower-cases them", () => {
        const [link] = parseLinkHeader('<https://hub.test/>; rel="Mercure  self\tALTERNATE"');
        expect(link!.rel).toEqual(["mercure", "self", "alternate"]);
        expect(linksWithRel(parseLinkHeader('<https://hub.test/>; rel="preload MERCURE"'), "mercure")).toHaveLength(1);
    });

    it("keeps commas, semicolons, angle brackets and escaped quotes inside quoted parameters", () => {
        const links = parseLinkHeader('<https://a.test/>; title="a, b; c <d>, \\"e\\""; rel=mercure, <https://b.test/>; rel="next"');
        expect(links).toHaveLength(2);
        expect(links[0]!.params["title"]).toBe('a, b; c <d>, "e"');
        expect(links[0]!.rel).toEqual(["mercure"]);
        expect(links[1]!.href).toBe("https://b.test/");
    });

    it("matches parameter names case-insensitively", () => {
        const [link] = parseLinkHeader('<https://hub.test/>; REL="mercure"; Last-Event-ID="abc"; Content-Type="application/ld+json"');
        expect(link!.rel).toEqual(["mercure"]);
        expect(link!.params).toMatchObject({ "last-event-id": "abc", "content-type": "application/ld+json" });
    });

    it("resolves relative targets against the base URL (the response URL)", () => {
        const links = parseLinkHeader('</.well-known/mercure>; rel=mercure, <../hub?x=1>; rel=alternate, <//cdn.test/h>; rel=x', "https://app.test/api/books/1");
        expect(links.map((link) => link.href)).toEqual(["https://app.test/.well-known/mercure", "https://app.test/api/hub?x=1", "https://cdn.test/h"]);
        expect(links[0]!.target).toBe("/.well-known/mercure");
    });

    it("leaves a relative target as written when there is no base", () => {
        expect(parseLinkHeader("</hub>; rel=mercure")[0]!.href).toBe("/hub");
    });

    it("uses only the first rel parameter and keeps every occurrence of repeated ones in order", () => {
        const [link] = parseLinkHeader('<https://a.test/>; rel=first; rel=second; hreflang=en; hreflang=de');
        expect(link!.rel).toEqual(["first"]);
        expect(link!.params["hreflang"]).toBe("en");
        expect(link!.paramList).toEqual([
            ["rel", "first"],
            ["rel", "second"],
            ["hreflang", "en"],
            ["hreflang", "de"],
        ]);
    });

    it("gives a parameter without a value the empty string", () => {
        expect(parseLinkHeader("<https://a.test/>; crossorigin; rel=preload")[0]!.params).toMatchObject({ crossorigin: "", rel: "preload" });
    });

    it("decodes RFC 8187 star parameters", () => {
        const [link] = parseLinkHeader("<https://a.test/>; rel=next; title*=UTF-8'de'n%c3%a4chstes%20Kapitel");
        expect(link!.params["title*"]).toBe("nächstes Kapitel");
    });

    it("tolerates free whitespace around separators", () => {
        const links = parseLinkHeader('  < https://a.test/ >  ;rel = "mercure" ,<https://b.test/>;rel=next ,');
        expect(links.map((link) => [link.href, link.rel[0]])).toEqual([
            ["https://a.test/", "mercure"],
            ["https://b.test/", "next"],
        ]);
    });

    it("skips a malformed link and keeps the others", () => {
        const links = parseLinkHeader('garbage; rel="x, y", <https://hub.test/>; rel=mercure, <https://unterminated.test/');
        expect(links.map((link) => link.href)).toEqual(["https://hub.test/"]);
    });

    it("returns nothing for an absent or empty header", () => {
        expect(parseLinkHeader(null)).toEqual([]);
        expect(parseLinkHeader(undefined)).toEqual([]);
        expect(parseLinkHeader("")).toEqual([]);
        expect(parseLinkHeader([])).toEqual([]);
    });
});
