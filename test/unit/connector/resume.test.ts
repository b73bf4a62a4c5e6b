import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RESUME } from "../../../src/connector/capability-slots";
import { loadDiscovery } from "../../../src/discovery/load";
import { RESUME_KEY } from "../../../src/dispatch/page-resume";
import { createHarness, envelope, HUB, settleLoadsUntil, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";

// Issue 52 part 2: `resumeAcrossPages`. Each connector stands for one page of the tab; the unit project's page has
// one `sessionStorage`, and `pagehide` is dispatched on its window as a navigation would.

const TOKEN = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n";

beforeEach(async () => {
    await RESUME.chunk();
    await loadDiscovery();
    useScopedFakeTimers();
    sessionStorage.clear();
    vi.spyOn(history, "length", "get").mockReturnValue(3); // A tab that has been on other pages.
    vi.spyOn(performance, "now").mockReturnValue(2_000); // Each page's navigation started 2 s before its connector was created.
    setToken(TOKEN);
});
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    sessionStorage.clear();
    for (const element of document.head.querySelectorAll("meta, link")) element.remove();
});

/** Render `<meta name="csrf-token">` with `token`, as a Blade layout does. */
function setToken(token: string): void {
    for (const meta of document.head.querySelectorAll("meta")) meta.remove();
    const meta = document.createElement("meta");
    meta.setAttribute("name", "csrf-token");
    meta.setAttribute("content", token);
    document.head.append(meta);
}

/** A page of the tab: a connector that joins `orders` and whose stream has opened. */
async function openPage(options: Record<string, unknown> = { resumeAcrossPages: true }): Promise<Harness> {
    const h = createHarness(options);
    h.track(h.connector.channel("orders"));
    await settleLoadsUntil(() => h.EventSource.live().length === 1);
    h.stream().emitOpen();
    return h;
}

/** The page leaves: `pagehide`, and its connector is gone with the document. */
function leave(h: Harness): void {
    window.dispatchEvent(new Event("pagehide"));
    h.connector.disconnect();
}

describe("resumeAcrossPages", () => {
    it("subscribes the next page from the last event the previous page received, and takes the record once", async () => {
        const first = await openPage();
        expect(first.stream().param("last_event_id")).toBeNull();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:1");
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:2");
        leave(first);
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toContain('"cursor":"urn:uuid:2"');
        await vi.advanceTimersByTimeAsync(1_500); // The navigation.
        const next = await openPage();
        expect(next.stream().param("last_event_id")).toBe("urn:uuid:2");
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toBeNull();
        next.connector.disconnect();
        const third = await openPage(); // The same page's second connector, or a page after one that never left properly.
        expect(third.stream().param("last_event_id")).toBeNull();
        third.connector.disconnect();
    });

    it("neither writes nor reads without the option", async () => {
        sessionStorage.setItem(RESUME_KEY + HUB, JSON.stringify({ cursor: "urn:uuid:7", at: Date.now(), session: "x" }));
        const page = await openPage({});
        expect(page.stream().param("last_event_id")).toBeNull();
        page.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:8");
        leave(page);
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toContain("urn:uuid:7");
    });

    it("resumes nothing after a login or a logout: the session's CSRF token changed", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:3");
        leave(first);
        setToken("Q".repeat(40));
        const next = await openPage();
        expect(next.stream().param("last_event_id")).toBeNull();
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toBeNull();
        next.connector.disconnect();
    });

    it("resumes nothing 2 minutes after the previous page left", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:4");
        leave(first);
        await vi.advanceTimersByTimeAsync(120_000);
        const next = await openPage();
        expect(next.stream().param("last_event_id")).toBeNull();
        next.connector.disconnect();
    });

    it("writes nothing on a page without a session token", async () => {
        setToken("short");
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:5");
        leave(first);
        expect(sessionStorage.length).toBe(0);
    });

    it("leaves the record to the page after one that joined nothing", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:6");
        leave(first);
        await vi.advanceTimersByTimeAsync(1_000);
        const idle = createHarness({ resumeAcrossPages: true }); // A page whose connector joins no channel.
        await settleLoadsUntil(() => RESUME.chunk.loaded() !== undefined);
        await vi.advanceTimersByTimeAsync(1_000);
        leave(idle); // It passes the cursor on.
        await vi.advanceTimersByTimeAsync(1_000);
        const next = await openPage();
        expect(next.stream().param("last_event_id")).toBe("urn:uuid:6");
        next.connector.disconnect();
    });

    it("resumes nothing after a page in between that did not take the record (without the option): it received what follows", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:9");
        leave(first);
        await vi.advanceTimersByTimeAsync(1_000);
        const between = await openPage({});
        between.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:10");
        await vi.advanceTimersByTimeAsync(3_000);
        leave(between);
        await vi.advanceTimersByTimeAsync(1_000);
        const next = await openPage();
        expect(next.stream().param("last_event_id")).toBeNull();
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toBeNull();
        next.connector.disconnect();
    });

    it("lets a last-event-id rendered into the page win over the resumed cursor, and still takes the record", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:7");
        leave(first);
        const link = document.createElement("link");
        link.setAttribute("rel", "mercure");
        link.setAttribute("href", HUB);
        link.setAttribute("last-event-id", "urn:uuid:rendered");
        document.head.append(link);
        const next = await openPage({ resumeAcrossPages: true, host: null });
        expect(next.stream().param("last_event_id")).toBe("urn:uuid:rendered");
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toBeNull();
        next.connector.disconnect();
    });

    it("resumes nothing on the first page of a tab (a new tab into which the opener's storage was copied)", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped"), "urn:uuid:8");
        leave(first);
        vi.spyOn(history, "length", "get").mockReturnValue(1);
        const opened = await openPage();
        expect(opened.stream().param("last_event_id")).toBeNull();
        expect(sessionStorage.getItem(RESUME_KEY + HUB)).toBeNull();
        opened.connector.disconnect();
    });
});
