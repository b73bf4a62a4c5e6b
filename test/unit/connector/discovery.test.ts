import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadDiscovery } from "../../../src/discovery/load";
import { createHarness, envelope, useScopedFakeTimers } from "../../fakes/connector-harness";
import { fakeFetch, type FakeAnswer } from "../discovery/fake-hub";

// The unit project's page is https://app.test/dashboard.
const LINKED = "https://hub.test/.well-known/mercure";

// The connector loads the discovery chunk with import(); loaded once here, it resolves in microtasks.
beforeAll(async () => {
    await loadDiscovery();
});
beforeEach(() => useScopedFakeTimers());
afterEach(() => {
    vi.useRealTimers();
    for (const link of document.head.querySelectorAll("link")) link.remove();
});

async function settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await vi.advanceTimersByTimeAsync(0);
}

/** Put `<link rel="mercure">` into the page. */
function pageLink(href: string, lastEventId?: string): void {
    const link = document.createElement("link");
    link.setAttribute("rel", "preload mercure");
    link.setAttribute("href", href);
    if (lastEventId !== undefined) link.setAttribute("last-event-id", lastEventId);
    document.head.append(link);
}

/** A connector without `host`, whose GET requests (the `discover` URL) `answer` serves. */
async function withoutHost(answer: (url: string) => FakeAnswer | Error, options: Record<string, unknown> = {}) {
    const h = createHarness({ host: null, ...options });
    const resource = fakeFetch((call) => answer(call.url));
    h.auth.probeHandler = (url, init) => resource.fetch(url, init);
    h.track(h.connector.privateChannel("orders.1"));
    await settle();
    return { h, resource };
}

describe("a connector without host", () => {
    it("uses the page's <link rel=\"mercure\"> and its last-event-id as the first cursor", async () => {
        pageLink(LINKED, "urn:uuid:page");
        const { h, resource } = await withoutHost(() => ({ status: 500 }), { discover: "/api/discover" });
        const stream = h.stream();
        expect(stream.url.startsWith(LINKED + "?")).toBe(true);
        expect(stream.param("last_event_id")).toBe("urn:uuid:page");
        expect(resource.calls).toHaveLength(0); // The page's link wins: no request.
    });

    it("does not reuse the link's cursor after disconnect() and connect()", async () => {
        pageLink(LINKED, "urn:uuid:page");
        const { h } = await withoutHost(() => ({ status: 500 }));
        h.stream().emitOpen();
        h.stream().emitMessage(envelope(["private-orders.1"], "x"), "urn:uuid:2");
        h.connector.disconnect();
        h.connector.connect();
        await settle();
        expect(h.stream().url.startsWith(LINKED + "?")).toBe(true);
        expect(h.stream().param("last_event_id")).toBeNull();
    });

    it("follows the Link header of the discover URL, honouring its last-event-id", async () => {
        const { h, resource } = await withoutHost(
            () => ({ status: 200, headers: { Link: '</hubs/main>; rel="mercure"; last-event-id="urn:uuid:9", </x>; rel="self"' }, url: "https://api.test/api/discover" }),
            { discover: "https://api.test/api/discover" },
        );
        expect(resource.calls.map((call) => call.url)).toEqual(["https://api.test/api/discover"]);
        const stream = h.stream();
        // A relative target resolves against the response URL.
        expect(stream.url.startsWith("https://api.test/hubs/main?")).toBe(true);
        expect(stream.param("last_event_id")).toBe("urn:uuid:9");
    });

    it("reports discovery_failed and status failed when the discover URL names no hub", async () => {
        const { h } = await withoutHost(() => ({ status: 200, headers: { "Content-Type": "application/json" }, body: "{}" }), { discover: "/api/discover" });
        expect(h.errors.map((entry) => [entry.error.code, entry.error.channel])).toEqual([["discovery_failed", "private-orders.1"]]);
        expect(h.errors[0]!.error.message).toContain('rel="mercure"');
        expect(h.connector.connectionStatus()).toBe("failed");
        expect(h.EventSource.instances).toHaveLength(0);
        expect(h.auth.requests).toHaveLength(0);
    });

    it("retries with backoff when the discover URL does not answer", async () => {
        let fail = true;
        const { h, resource } = await withoutHost(() => (fail ? new TypeError("fetch failed") : { status: 200, headers: { Link: `<${LINKED}>; rel=mercure` } }), { discover: "/api/discover" });
        expect(h.errors.map((entry) => entry.error.code)).toEqual(["discovery_failed"]);
        expect(h.connector.connectionStatus()).toBe("reconnecting");
        fail = false;
        await vi.advanceTimersByTimeAsync(1_500);
        await settle();
        expect(resource.calls).toHaveLength(2);
        expect(h.stream().url.startsWith(LINKED + "?")).toBe(true);
    });

    it("falls back to /.well-known/mercure on the page origin", async () => {
        const { h, resource } = await withoutHost(() => ({ status: 500 }));
        expect(h.stream().url.startsWith("https://app.test/.well-known/mercure?")).toBe(true);
        expect(resource.calls).toHaveLength(0);
    });

    it("prefers the host option to the page's link", async () => {
        pageLink(LINKED);
        const h = createHarness({ discover: "/api/discover" });
        h.connector.channel("news");
        await settle();
        expect(h.stream().url.startsWith("https://app.test/.well-known/mercure?")).toBe(true);
    });
});

describe("a connector with host: the page's rendered cursor (issue 52)", () => {
    it("starts from the last-event-id of the <head> link to the hub host names", async () => {
        pageLink("/.well-known/mercure#ignored", "urn:uuid:rendered");
        const h = createHarness({});
        h.connector.channel("news");
        await settle();
        expect(h.stream().param("last_event_id")).toBe("urn:uuid:rendered");
    });

    it("ignores a link to another hub, a link without cursor or with an empty one, and a link outside <head>", async () => {
        pageLink(LINKED, "urn:uuid:other-hub");
        pageLink("https://app.test/.well-known/mercure", "");
        pageLink("https://app.test/.well-known/mercure");
        const injected = document.createElement("link");
        injected.setAttribute("rel", "mercure");
        injected.setAttribute("href", "https://app.test/.well-known/mercure");
        injected.setAttribute("last-event-id", "urn:uuid:injected");
        document.body.append(injected);
        try {
            const h = createHarness({});
            h.connector.channel("news");
            await settle();
            expect(h.stream().param("last_event_id")).toBeNull();
        } finally {
            injected.remove();
        }
    });

    it("offers it once: a reconnect resumes from what was received, a disconnect() and connect() from now", async () => {
        pageLink("https://app.test/.well-known/mercure", "urn:uuid:rendered");
        const h = createHarness({});
        h.track(h.connector.privateChannel("orders.1"));
        await settle();
        const first = h.stream();
        expect(first.param("last_event_id")).toBe("urn:uuid:rendered");
        first.emitOpen();
        first.emitMessage(envelope(["private-orders.1"], "x"), "urn:uuid:2");
        h.connector.channel("news");
        await settle();
        const reopened = h.EventSource.live().find((stream) => stream !== first)!;
        expect(reopened.param("last_event_id")).toBe("urn:uuid:2");
        h.connector.disconnect();
        h.connector.connect();
        await settle();
        expect(h.stream().param("last_event_id")).toBeNull();
    });

    it("reads the page as it was when the connector was created (the page as rendered)", async () => {
        pageLink("https://app.test/.well-known/mercure", "urn:uuid:rendered");
        const h = createHarness({});
        for (const link of document.head.querySelectorAll("link")) link.remove();
        h.connector.channel("news");
        await settle();
        expect(h.stream().param("last_event_id")).toBe("urn:uuid:rendered");
    });

    it("reads the page once: a link added after the connector was created is not a cursor", async () => {
        const h = createHarness({});
        h.connector.channel("news");
        await settle();
        const first = h.stream();
        expect(first.param("last_event_id")).toBeNull();
        first.emitOpen();
        pageLink("https://app.test/.well-known/mercure", "urn:uuid:late");
        h.connector.channel("other");
        await settle();
        const reopened = h.EventSource.live().find((stream) => stream !== first)!;
        expect(reopened.param("last_event_id")).toBeNull();
    });
});
