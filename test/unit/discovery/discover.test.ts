import { describe, expect, it } from "vitest";
import { discoverHub as lazyDiscoverHub } from "../../../src/discovery";
import { connectorHub, discoverFromDocument, discoverHub, locateHub, pageDocument } from "../../../src/discovery/discover";
import { findHtmlLinks } from "../../../src/discovery/html-links";
import { MercureError } from "../../../src/errors";
import { fakeFetch } from "./fake-hub";

const META = "/.well-known/oauth-protected-resource";

describe("discoverHub()", () => {
    it("resolves the first rel=mercure link against the response URL, with its last-event-id and the metadata URL", async () => {
        const api = fakeFetch(() => ({
            status: 200,
            url: "https://api.example.com/v2/books/1",
            headers: { Link: '<https://example.com/books/1>; rel="self", </hub>; rel="preload mercure"; last-event-id="urn:uuid:7", <https://other.test/hub>; rel=mercure' },
        }));
        const found = await discoverHub("https://example.com/books/1", { fetch: api.fetch });
        expect(found.hub.href).toBe("https://api.example.com/hub");
        expect(found.lastEventId).toBe("urn:uuid:7");
        expect(found.metadataUrl?.href).toBe(`https://api.example.com${META}/hub`);
        expect(api.calls[0]!.init.credentials).toBe("same-origin");
        expect(api.responses[0]!.cancelled).toBe(true);
    });

    it("skips links that are not http(s) URLs", async () => {
        const api = fakeFetch(() => ({ headers: { Link: '<mailto:hub@example.com>; rel=mercure, <https://example.com/h#x>; rel=mercure' } }));
        expect((await discoverHub("https://example.com/", { fetch: api.fetch })).hub.href).toBe("https://example.com/h");
    });

    it("falls back to a <link rel=mercure> of an HTML answer; the header wins when both exist", async () => {
        const html = '<!doctype html><head><!-- <link rel="mercure" href="/commented"> --><link href="/hub?x=1&amp;y=2" rel=MERCURE last-event-id=\'abc\'></head>';
        const page = fakeFetch(() => ({ headers: { "Content-Type": "text/html; charset=utf-8" }, body: html }));
        const found = await discoverHub("https://example.com/page", { fetch: page.fetch });
        expect([found.hub.href, found.lastEventId]).toEqual(["https://example.com/hub?x=1&y=2", "abc"]);

        const both = fakeFetch(() => ({ headers: { "Content-Type": "text/html", Link: "</from-header>; rel=mercure" }, body: html }));
        expect((await discoverHub("https://example.com/page", { fetch: both.fetch })).hub.pathname).toBe("/from-header");
        expect(both.responses[0]!.read).toBe(false);
    });

    it("takes no link from the body of an HTML answer (issue 50 point 4)", async () => {
        const html = '<!doctype html><head><title>Comments</title></head><body><p>Nice!</p><link rel="mercure" href="https://evil.example/hub"></body>';
        const page = fakeFetch(() => ({ status: 200, headers: { "Content-Type": "text/html" }, body: html }));
        await expect(discoverHub("https://example.com/page", { fetch: page.fetch })).rejects.toMatchObject({ code: "discovery_failed", message: expect.stringMatching(/announces no Mercure hub/) });
    });

    it("resolves a relative resource URL against the page", async () => {
        const api = fakeFetch(() => ({ headers: { Link: "</.well-known/mercure>; rel=mercure" } }));
        await discoverHub("/api/books/1", { fetch: api.fetch });
        expect(api.calls[0]!.url).toBe("https://app.test/api/books/1");
    });

    it("rejects with discovery_failed naming the resource, the status and what to add", async () => {
        const api = fakeFetch(() => ({ status: 200, headers: { Link: '<https://example.com/>; rel="self"', "Content-Type": "application/json" } }));
        const error = await discoverHub("https://example.com/api", { fetch: api.fetch }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MercureError);
        expect(error).toMatchObject({
            code: "discovery_failed",
            status: 200,
            message: '"https://example.com/api" (HTTP 200) announces no Mercure hub: add a Link: <hub URL>; rel="mercure" header to it (cross-origin, also list Link in Access-Control-Expose-Headers), or set the connector\'s host.',
        });
    });

    it("rejects with discovery_failed when the request fails, keeping the cause", async () => {
        const cause = new TypeError("Failed to fetch");
        const down = fakeFetch(() => cause);
        await expect(discoverHub("https://example.com/api", { fetch: down.fetch })).rejects.toMatchObject({
            code: "discovery_failed",
            message: 'Discovering the Mercure hub from "https://example.com/api" failed (Failed to fetch): check the URL, or set the connector\'s host to the hub URL.',
            cause,
        });
        await expect(discoverHub("http://[bad", { fetch: down.fetch })).rejects.toMatchObject({ code: "discovery_failed" });
    });

    it("never downgrades: an https resource announcing an http hub, or redirected to http, is refused with a clear error", async () => {
        const header = fakeFetch(() => ({ headers: { Link: "<http://example.com/hub>; rel=mercure" } }));
        const refused = await discoverHub("https://example.com/api", { fetch: header.fetch }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(MercureError);
        expect(refused).toMatchObject({
            code: "discovery_failed",
            message: '"https://example.com/api" is served over HTTPS but announces the hub over plain HTTP (http://example.com/hub): refused, so that no token or event travels in the clear; announce an https:// hub URL, or set the connector\'s host.',
        });
        const page = fakeFetch(() => ({ headers: { "Content-Type": "text/html" }, body: '<link rel=mercure href="http://example.com/hub">' }));
        await expect(discoverHub("https://example.com/page", { fetch: page.fetch })).rejects.toMatchObject({ code: "discovery_failed" });
        const redirected = fakeFetch(() => ({ url: "http://example.com/api", headers: { Link: "</hub>; rel=mercure" } }));
        await expect(discoverHub("https://example.com/api", { fetch: redirected.fetch })).rejects.toMatchObject({ message: expect.stringContaining("redirected to http://example.com/api") });
        // An https hub after a refused http one is taken; an http resource may name an http hub (a local dev app).
        const both = fakeFetch(() => ({ headers: { Link: "<http://example.com/hub>; rel=mercure, <https://example.com/hub>; rel=mercure" } }));
        expect((await discoverHub("https://example.com/api", { fetch: both.fetch })).hub.href).toBe("https://example.com/hub");
        expect((await discoverHub("http://app.test/api", { fetch: header.fetch })).hub.href).toBe("http://example.com/hub");
    });

    it("is also exported as a wrapper that loads its chunk on first call", async () => {
        const api = fakeFetch(() => ({ headers: { Link: "<https://example.com/hub>; rel=mercure" } }));
        expect((await lazyDiscoverHub("https://example.com/", { fetch: api.fetch })).hub.href).toBe("https://example.com/hub");
    });
});

describe("discoverFromDocument()", () => {
    it("finds the first <link rel=mercure> with a valid URL, relative to the base, with last-event-id", () => {
        document.head.innerHTML =
            '<link rel="author" href="/humans.txt"><link rel="mercure" href="javascript:alert(1)"><link rel="Preload  MERCURE" href="/.well-known/mercure" last-event-id="urn:uuid:9">';
        const found = discoverFromDocument(document);
        expect(found?.hub.href).toBe("https://app.test/.well-known/mercure");
        expect(found?.lastEventId).toBe("urn:uuid:9");
        expect(found?.metadataUrl?.href).toBe(`https://app.test${META}/.well-known/mercure`);
    });

    it("skips a link that would take an https page's stream to an http hub", () => {
        document.head.innerHTML = '<link rel="mercure" href="http://app.test/hub"><link rel="mercure" href="https://app.test/hub">';
        expect(discoverFromDocument(document)?.hub.href).toBe("https://app.test/hub");
        document.head.innerHTML = '<link rel="mercure" href="http://app.test/hub">';
        expect(discoverFromDocument(document)).toBeNull();
    });

    it("is null when the page has none", () => {
        document.head.innerHTML = '<link rel="author" href="/humans.txt">';
        expect(discoverFromDocument(document)).toBeNull();
    });

    // Issue 50 point 4: the body often holds what users wrote (a comment, a profile); markup injected there must not
    // name the hub (forged events, the hub token sent there) nor the base its links resolve against.
    it("reads the <head> only: a link or a <base href> in the body is ignored, a <base href> in the head is honoured", () => {
        try {
            document.head.innerHTML = "";
            document.body.innerHTML = '<p>a comment</p><link rel="mercure" href="https://evil.example/hub">';
            expect(discoverFromDocument(document)).toBeNull();
            document.head.innerHTML = '<link rel="mercure" href="/hub">';
            document.body.innerHTML = '<base href="https://evil.example/"><link rel="mercure" href="https://evil.example/hub">';
            expect(discoverFromDocument(document)?.hub.href).toBe("https://app.test/hub");
            document.head.innerHTML = '<base href="https://cdn.app.test/assets/"><link rel="mercure" href="hub">';
            expect(discoverFromDocument(document)?.hub.href).toBe("https://cdn.app.test/assets/hub");
        } finally {
            document.head.innerHTML = document.body.innerHTML = "";
        }
    });

    it("reads the page's document through its prototype: elements that shadow its members (DOM clobbering) change nothing", async () => {
        document.head.innerHTML = '<link rel="mercure" href="/hub">';
        const shadows = ["querySelectorAll", "URL", "baseURI"];
        for (const name of shadows) Object.defineProperty(document, name, { value: document.createElement("img"), configurable: true });
        try {
            expect(discoverFromDocument(pageDocument()!)?.hub.href).toBe("https://app.test/hub");
            expect(await connectorHub(undefined, undefined, new AbortController().signal)).toEqual({ host: "https://app.test/hub", source: "link-element", lastEventId: undefined });
        } finally {
            for (const name of shadows) delete (document as unknown as Record<string, unknown>)[name];
            document.head.innerHTML = "";
        }
    });
});

describe("locateHub()", () => {
    it("takes no hub from a link in the page's body: the discover URL, then /.well-known/mercure, come first", async () => {
        const api = fakeFetch(() => ({ headers: { Link: "<https://hub.example.com/.well-known/mercure>; rel=mercure" } }));
        document.body.innerHTML = '<link rel="mercure" href="https://evil.example/hub">';
        try {
            expect(await locateHub({ fetch: api.fetch, discover: "/api" })).toMatchObject({ source: "link-header", hub: new URL("https://hub.example.com/.well-known/mercure") });
            expect(await locateHub({ fetch: api.fetch })).toMatchObject({ source: "well-known", hub: new URL("https://app.test/.well-known/mercure") });
        } finally {
            document.body.innerHTML = "";
        }
    });

    it("prefers the page's <link>, then the discover URL's Link header, then /.well-known/mercure", async () => {
        const api = fakeFetch(() => ({ headers: { Link: "<https://hub.example.com/.well-known/mercure>; rel=mercure" } }));
        document.head.innerHTML = '<link rel="mercure" href="https://linked.example.com/hub">';
        expect(await locateHub({ fetch: api.fetch, discover: "/api" })).toMatchObject({ source: "link-element", hub: new URL("https://linked.example.com/hub") });
        document.head.innerHTML = "";
        expect(await locateHub({ fetch: api.fetch, discover: "/api" })).toMatchObject({ source: "link-header", hub: new URL("https://hub.example.com/.well-known/mercure") });
        expect(await locateHub({ fetch: api.fetch })).toMatchObject({ source: "well-known", hub: new URL("https://app.test/.well-known/mercure") });
        expect(api.calls).toHaveLength(1);
    });

    it("rejects when the discover URL announces no hub rather than guessing", async () => {
        const api = fakeFetch(() => ({ status: 404 }));
        await expect(locateHub({ fetch: api.fetch, discover: "/api", document: null })).rejects.toMatchObject({ code: "discovery_failed", status: 404 });
    });
});

describe("findHtmlLinks()", () => {
    it("reads quoted, single-quoted and unquoted attributes, entities and <base href>", () => {
        const links = findHtmlLinks(
            '<base href="https://cdn.test/app/"><LINK REL=mercure HREF=hub title="a &quot;b&quot; &#x263A;"><link rel=\'x\' href=\'../y\'><link rel="no-href">',
            "https://example.com/",
        );
        expect(links.map((link) => [link.rel, link.href, link.attributes["title"]])).toEqual([
            [["mercure"], "https://cdn.test/app/hub", 'a "b" ☺'],
            [["x"], "https://cdn.test/y", undefined],
        ]);
    });
});
