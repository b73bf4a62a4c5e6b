import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RESUME } from "../../../src/connector/capability-slots";
import { loadDiscovery } from "../../../src/discovery/load";
import { ANSWER_STAMP_KEY, AUTH_STAMP_KEY } from "../../../src/auth/auth-stamp";
import { DELIVERED_LIMIT, RESUME_KEY } from "../../../src/dispatch/page-resume";
import { createHarness, envelope, HUB, settleLoadsUntil, topic, useScopedFakeTimers, type Harness } from "../../fakes/connector-harness";
import { grant } from "../../fakes/fake-auth-server";

// Issue 52 part 2: `resumeAcrossPages`. Each connector stands for one page of the tab; the unit project's page has
// one `sessionStorage`, and `pagehide` is dispatched on its window as a navigation would.

const TOKEN = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7n";

beforeEach(async () => {
    await RESUME.chunk();
    await loadDiscovery();
    useScopedFakeTimers();
    sessionStorage.clear();
    localStorage.clear();
    vi.spyOn(history, "length", "get").mockReturnValue(3); // A tab that has been on other pages.
    vi.spyOn(performance, "now").mockReturnValue(2_000); // Each page's navigation started 2 s before its connector was created.
    setToken(TOKEN);
});
afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    sessionStorage.clear();
    localStorage.clear();
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

/** Render the hub's last event id `id` into the page's `<head>` link, as the docs' middleware does (issue 52). */
function renderCursor(id: string): void {
    const link = document.createElement("link");
    link.setAttribute("rel", "mercure");
    link.setAttribute("href", HUB);
    link.setAttribute("last-event-id", id);
    document.head.append(link);
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

    it("delivers nothing twice that the previous page received, when the next page's stream replays from an older cursor (the tabs' stream, another tab's)", async () => {
        const first = await openPage();
        for (let n = 1; n <= 70; n++) first.stream().emitMessage(envelope(["orders"], "Shipped", { n }), `urn:uuid:${n}`);
        first.stream().emitMessage(envelope(["orders", "news"], "Shipped", { n: 71 }), "urn:uuid:71"); // The page had "orders" only.
        leave(first);
        const record = JSON.parse(sessionStorage.getItem(RESUME_KEY + HUB)!) as { delivered: Array<[string, string[]]> };
        expect(record.delivered).toHaveLength(DELIVERED_LIMIT); // The newest: urn:uuid:8 to urn:uuid:71.
        expect(record.delivered[0]).toEqual(["urn:uuid:8", ["orders"]]);
        expect(record.delivered.at(-1)).toEqual(["urn:uuid:71", ["orders"]]);
        await vi.advanceTimersByTimeAsync(1_500);

        const next = createHarness({ resumeAcrossPages: true });
        const heard: string[] = [];
        for (const name of ["orders", "news"]) next.track(next.connector.channel(name)).listen(".Shipped", (payload: { n: number }) => heard.push(`${name}:${payload.n}`));
        await settleLoadsUntil(() => next.EventSource.live().length === 1);
        expect(next.stream().param("last_event_id")).toBe("urn:uuid:71");
        next.stream().emitOpen();
        // A stream from an older cursor replays 7 to 71: what the ledger kept comes once; 7, older than it keeps, comes again.
        for (let n = 7; n <= 70; n++) next.stream().emitMessage(envelope(["orders"], "Shipped", { n }), `urn:uuid:${n}`);
        next.stream().emitMessage(envelope(["orders", "news"], "Shipped", { n: 71 }), "urn:uuid:71");
        next.stream().emitMessage(envelope(["orders"], "Shipped", { n: 72 }), "urn:uuid:72");
        expect(heard).toEqual(["orders:7", "news:71", "orders:72"]);
        expect(next.errors).toEqual([]);
        next.connector.disconnect();
    });

    it("delivers what the previous page received after a cursor rendered into the next page: the server rendered that page before it", async () => {
        const first = await openPage();
        first.stream().emitMessage(envelope(["orders"], "Shipped", { n: 1 }), "urn:uuid:1");
        leave(first);
        renderCursor("urn:uuid:rendered");
        const next = createHarness({ resumeAcrossPages: true, host: null });
        const heard: number[] = [];
        next.track(next.connector.channel("orders")).listen(".Shipped", (payload: { n: number }) => heard.push(payload.n));
        await settleLoadsUntil(() => next.EventSource.live().length === 1);
        expect(next.stream().param("last_event_id")).toBe("urn:uuid:rendered");
        next.stream().emitOpen();
        next.stream().emitMessage(envelope(["orders"], "Shipped", { n: 1 }), "urn:uuid:1");
        expect(heard).toEqual([1]);
        next.connector.disconnect();
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
        renderCursor("urn:uuid:rendered");
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

/**
 * A page of the tab that joins private channels `names` (listening to `Shipped` on each, into `heard`), with the auth
 * answers held until the test releases them: its connector, and what its channels heard and reported.
 */
function privatePage(names: readonly string[], options: Record<string, unknown> = { resumeAcrossPages: true }) {
    const h = createHarness(options);
    h.auth.hold();
    const heard: string[] = [];
    const subscribed: string[] = [];
    for (const name of names) {
        const channel = h.track(h.connector.privateChannel(name));
        channel.listen(".Shipped", (payload: { n: number }) => heard.push(`${name}:${payload.n}`));
        channel.subscribed(() => subscribed.push(name));
    }
    return { h, heard, subscribed };
}

/** A first page that joined private `names`, its stream open, one event received; it leaves `dwellMs` later. */
async function visitAndLeave(names: readonly string[], expiresIn = 300, dwellMs = 0): Promise<void> {
    const { h } = privatePage(names);
    h.auth.handler = (asked) => grant(asked, { expires_in: expiresIn });
    h.auth.release();
    await settleLoadsUntil(() => h.EventSource.live().length === 1);
    h.stream().emitOpen();
    h.stream().emitMessage(envelope(names.map((name) => "private-" + name), "Shipped", { n: 0 }), "urn:uuid:p1");
    await vi.advanceTimersByTimeAsync(dwellMs);
    leave(h);
}

describe("resumeAcrossPages: the next page's stream opens beside its auth request (issue 53's navigation)", () => {
    it("opens the stream while the auth request is in flight, delivers from it, and keeps it when the answer grants the same channels", async () => {
        await visitAndLeave(["orders.1"]);
        await vi.advanceTimersByTimeAsync(1_500);
        const { h, heard, subscribed } = privatePage(["orders.1"]);
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        expect(h.auth.requests).toHaveLength(1); // In flight, held.
        const early = h.stream();
        expect(early.matches()).toEqual([topic("private-orders.1")]);
        expect(early.param("last_event_id")).toBe("urn:uuid:p1");
        early.emitOpen();
        early.emitMessage(envelope(["private-orders.1"], "Shipped", { n: 1 }), "urn:uuid:p2");
        expect(heard).toEqual(["orders.1:1"]); // The event arrives before the answer: the cookie still holds the grant.
        expect(subscribed).toEqual([]); // Subscribed only once the answer granted it.
        expect(h.connector.connectionStatus()).toBe("connecting");
        h.auth.release();
        await settleLoadsUntil(() => subscribed.length === 1);
        expect(subscribed).toEqual(["orders.1"]);
        expect(h.connector.connectionStatus()).toBe("connected");
        expect(h.EventSource.live()).toEqual([early]); // Kept: no second stream.
        expect(h.EventSource.instances).toHaveLength(1);
        expect(h.errors).toEqual([]);
        h.connector.disconnect();
    });

    it.each([
        ["once another auth request was sent in the origin (the stamp changed): the cookie may hold another grant", AUTH_STAMP_KEY],
        ["once another request's answer arrived after the grant's: that request left before it, and the cookie is its", ANSWER_STAMP_KEY],
    ])("opens nothing early %s", async (_why, key) => {
        await visitAndLeave(["orders.1"]);
        localStorage.setItem(key, "another-tab");
        const { h } = privatePage(["orders.1"]);
        await settleLoadsUntil(() => h.auth.requests.length === 1);
        await vi.advanceTimersByTimeAsync(100);
        expect(h.EventSource.live()).toHaveLength(0);
        h.auth.release();
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        h.connector.disconnect();
    });

    it("opens nothing early for a channel the grant does not cover, nor for a presence channel", async () => {
        await visitAndLeave(["orders.1"]);
        const { h } = privatePage(["orders.1", "orders.2"]);
        await settleLoadsUntil(() => h.auth.requests.length === 1);
        await vi.advanceTimersByTimeAsync(100);
        expect(h.EventSource.live()).toHaveLength(0);
        h.auth.release();
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        expect(h.stream().param("last_event_id")).toBe("urn:uuid:p1"); // The cursor is resumed all the same.
        h.connector.disconnect();
        leave(h);

        await visitAndLeave(["orders.1"]);
        const presence = privatePage(["orders.1"]);
        presence.h.connector.presenceChannel("room.1");
        await settleLoadsUntil(() => presence.h.auth.requests.length === 1);
        await vi.advanceTimersByTimeAsync(100);
        expect(presence.h.EventSource.live()).toHaveLength(0);
        presence.h.connector.disconnect();
    });

    it("opens nothing early once the previous page's cookie is due for renewal", async () => {
        await visitAndLeave(["orders.1"], 60, 30_000); // Renewal due 38.7 s after its auth; the page leaves 30 s after it.
        await vi.advanceTimersByTimeAsync(9_000); // A slow navigation: the next page's connector starts 39 s after that auth.
        vi.spyOn(performance, "now").mockReturnValue(12_000);
        const { h } = privatePage(["orders.1"]);
        await settleLoadsUntil(() => h.auth.requests.length === 1);
        await vi.advanceTimersByTimeAsync(100);
        expect(h.EventSource.live()).toHaveLength(0);
        h.connector.disconnect();
    });

    it("replaces the early stream, make-before-break, when the answer denies one of its channels", async () => {
        await visitAndLeave(["orders.1", "orders.2"]);
        const { h, heard, subscribed } = privatePage(["orders.1", "orders.2"]);
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        const early = h.stream();
        early.emitOpen();
        h.auth.handler = (asked) => grant(asked, {}, ["private-orders.2"]);
        h.auth.release();
        await settleLoadsUntil(() => h.EventSource.live().length === 2);
        const replacement = h.EventSource.live().find((each) => each !== early)!;
        expect(replacement.matches()).toEqual([topic("private-orders.1")]);
        expect(h.errors.map((each) => `${each.channel}: ${each.error.code}`)).toEqual(["private-orders.2: auth_denied"]);
        early.emitMessage(envelope(["private-orders.1", "private-orders.2"], "Shipped", { n: 2 }), "urn:uuid:p3");
        expect(heard).toEqual(["orders.1:2"]); // Draining: the denied channel hears nothing more.
        replacement.emitOpen();
        await settleLoadsUntil(() => subscribed.length === 1);
        expect(subscribed).toEqual(["orders.1"]);
        expect(replacement.param("last_event_id")).toBe("urn:uuid:p1");
        h.connector.disconnect();
    });

    it("renews before the hub may end the early stream, which carries the previous page's cookie", async () => {
        const authAt = Date.now();
        await visitAndLeave(["orders.1"], 300, 60_000); // expires_in 300: renewal due 211.5 s after that auth.
        const { h } = privatePage(["orders.1"]);
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        h.stream().emitOpen();
        h.auth.release();
        await settleLoadsUntil(() => h.connector.connectionStatus() === "connected");
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(authAt + 211_000 - Date.now());
        expect(h.auth.requests).toHaveLength(1);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(h.auth.requests).toHaveLength(2); // Due by the old cookie, not the new one (renewed 60 s later).
        h.connector.disconnect();
    });

    it("writes no grant for a page whose stream was not its own, or without an auth stamp", async () => {
        const { h } = privatePage(["orders.1"], { resumeAcrossPages: true, hubToken: "token" });
        h.auth.release();
        await settleLoadsUntil(() => h.EventSource.live().length === 1);
        h.stream().emitOpen();
        h.stream().emitMessage(envelope(["private-orders.1"], "Shipped", { n: 0 }), "urn:uuid:t1");
        leave(h);
        expect(JSON.parse(sessionStorage.getItem(RESUME_KEY + HUB)!)).not.toHaveProperty("grant");
    });
});
