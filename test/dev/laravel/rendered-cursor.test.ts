import { describe, expect, it } from "vitest";
import { hubLinkElement } from "../../../src/dev/laravel/rendered-cursor";
import { startDevServer, type DevServerOptions } from "../../../src/dev/server";

// Issue 52: the dev stack's Laravel stand-in renders the hub's last event id into a page given as a function, as the
// docs' middleware does: it asks the hub's subscriptions API (mercure-hub §4.2) at each request.

/** Start a stack whose `/page` renders only the link, fetch it `times` times around `between`, and close it. */
async function renderedLinks(options: DevServerOptions, between: (server: Awaited<ReturnType<typeof startDevServer>>) => Promise<unknown>): Promise<string[]> {
    const server = await startDevServer({ ...options, pages: { "/page": (page) => page.hubLink } });
    try {
        const first = await (await fetch(`${server.url}/page`)).text();
        await between(server);
        const second = await (await fetch(`${server.url}/page`)).text();
        return [first, second, server.hubUrl];
    } finally {
        await server.close();
    }
}

describe("the stand-in's rendered hub link", () => {
    it("carries `earliest` before the first publication, then the id of the last one, at each request", async () => {
        let ids: string[] = [];
        const [before, after, hubUrl] = await renderedLinks({}, async (server) => {
            ids = await server.broadcast({ channels: ["news"], event: "A", payload: {} });
            ids.push(...(await server.broadcast({ channels: ["news"], event: "B", payload: {} })));
        });
        expect(before).toBe(`<link rel="mercure" href="${hubUrl}" last-event-id="earliest">`);
        expect(ids).toHaveLength(2);
        expect(after).toBe(`<link rel="mercure" href="${hubUrl}" last-event-id="${ids[1]}">`);
    });

    it("still carries the last id on a hub without history (it tracks the last dispatched id, as the reference hub does)", async () => {
        let ids: string[] = [];
        const [, after, hubUrl] = await renderedLinks({ hub: { history: false } }, async (server) => {
            ids = await server.broadcast({ channels: ["news"], event: "A", payload: {} });
        });
        expect(after).toBe(`<link rel="mercure" href="${hubUrl}" last-event-id="${ids[0]}">`);
    });

    it("names the hub without a cursor when the hub's subscriptions API is off (404)", async () => {
        const [before, , hubUrl] = await renderedLinks({ hub: { subscriptions: false } }, async () => undefined);
        expect(before).toBe(`<link rel="mercure" href="${hubUrl}">`);
    });

    it("escapes what it puts in attributes", () => {
        expect(hubLinkElement('https://hub.test/"><script>', 'a"b<c&d')).toBe('<link rel="mercure" href="https://hub.test/&quot;>&lt;script>" last-event-id="a&quot;b&lt;c&amp;d">');
    });
});
