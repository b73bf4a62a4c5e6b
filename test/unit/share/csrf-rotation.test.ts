import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../../src/connector/options";
import type { MercureError } from "../../../src/errors";
import { fingerprint } from "../../../src/share/load";
import { FakeAuthServer, grant } from "../../fakes/fake-auth-server";
import { topic } from "../../fakes/connector-harness";
import type { FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld, openAllStreams, openTab, settleTabs } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";
// The chunks these connectors load mid-test, loaded up front (see tab-safety.test.ts).
import "../../../src/share/share-platform";
import "../../../src/auth/credentials";

// Issue 49 point 1: a CSRF token names no tab group. Laravel sends a new `XSRF-TOKEN` cookie (a new encryption of the
// session's one token) on every response, and a page's `<meta name="csrf-token">` is the token of the session when it
// was rendered: neither tells users apart. Only the identifying headers (a bearer token, any other `auth.headers`
// entry) name the group; the leading tab's engine reads the CSRF token at each request, as its own page would send it.

let browser: FakeBrowser;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
const connectors: MercureConnector[] = [];

/** The value Laravel would accept now (the session's token); every answer sets a new cookie for it. */
let cookie = 0;

/** Set the `XSRF-TOKEN` cookie to its next value, as each Laravel response does. */
function rotate(): string {
    const value = `session-token-encrypted-${++cookie}`;
    document.cookie = `XSRF-TOKEN=${value}; path=/`;
    return value;
}

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
    cookie = 0;
    rotate();
    auth.handler = (names) => {
        rotate();
        return grant(names);
    };
});

afterEach(() => {
    leaveTabWorld(connectors);
    document.cookie = "XSRF-TOKEN=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
});

/** Open a tab with its connector. */
function open(options: MercureConnectorOptions = {}, tab?: FakeTab): { tab: FakeTab; connector: MercureConnector } {
    return openTab({ browser, ES, auth }, connectors, options, tab);
}

/** The names of the tab links' buses every tab hears (not the per-tab inboxes), one per link. */
function links(): string[] {
    return [...new Set(browser.channels.map((channel) => channel.name).filter((name) => !name.includes(" inbox ")))];
}

/** The open real main streams. */
function mains(): string[][] {
    return ES.live().map((source) => source.matches());
}

describe("a rotating XSRF-TOKEN cookie (issue 49 point 1)", () => {
    it("keeps the tabs of one user in one group across every answer: one engine, one stream, the union in each request", async () => {
        const a = open();
        const b = open();
        const errors: string[] = [];
        for (let round = 0; round < 4; round++) {
            a.connector.privateChannel(`a.${round}`).error((error: MercureError) => errors.push(error.code));
            await settleTabs();
            await openAllStreams(ES);
            b.connector.privateChannel(`b.${round}`).error((error: MercureError) => errors.push(error.code));
            await settleTabs();
            await openAllStreams(ES);
        }
        expect(errors).toEqual([]);
        expect(links()).toHaveLength(1);
        expect(mains()).toHaveLength(1);
        // Every request after the first tab's first one authorizes both tabs' channels: the cookie covers both.
        expect(auth.lastNames().sort()).toEqual([0, 1, 2, 3].flatMap((n) => [`private-a.${n}`, `private-b.${n}`]).sort());
        expect(mains()[0]!.sort()).toEqual(auth.lastNames().map(topic).sort());
        // The engine sent the cookie as it was at each request (Laravel accepts any of its values for the session).
        expect(auth.requests.map((request) => request.headers["X-XSRF-TOKEN"])).toEqual(auth.requests.map((_, n) => `session-token-encrypted-${n + 1}`));
        expect([a, b].map(({ connector }) => connector.connectionStatus())).toEqual(["connected", "connected"]);
    });

    it("shares between tabs rendered with different CSRF tokens; the engine answers a 419 with the cookie, as a tab alone would", async () => {
        // Tab A was rendered before a login regenerated the session's token; tab B after it (Echo writes the page's
        // token into the auth headers). Laravel accepts only the new token and the cookie.
        auth.handler = (names, request) => {
            const csrf = request.headers["X-CSRF-TOKEN"];
            const xsrf = request.headers["X-XSRF-TOKEN"];
            if (csrf !== undefined ? csrf !== "token-after-login" : xsrf !== `session-token-encrypted-${cookie}`) return { status: 419, body: { message: "CSRF token mismatch." } };
            rotate();
            return grant(names);
        };
        const a = open({ csrfToken: "token-before-login" });
        const b = open({ csrfToken: "token-after-login" });
        const errors: string[] = [];
        a.connector.privateChannel("orders.1").error((error: MercureError) => errors.push(error.code));
        b.connector.privateChannel("chat.1").error((error: MercureError) => errors.push(error.code));
        await settleTabs();
        await openAllStreams(ES);
        expect(errors).toEqual([]);
        expect(links()).toHaveLength(1);
        expect(mains()).toEqual([[topic("private-orders.1"), topic("private-chat.1")]]);
        // A leads: its page's token is refused once, then the engine sends the cookie (Laravel's latest) at each request.
        const sent = auth.requests.map((request) => request.headers["X-CSRF-TOKEN"] ?? request.headers["X-XSRF-TOKEN"]);
        expect(sent).toEqual(["token-before-login", ...auth.requests.slice(1).map((_, n) => `session-token-encrypted-${n + 1}`)]);
        expect(auth.lastNames()).toEqual(["private-orders.1", "private-chat.1"]);
    });

    it("shares the tabs of a connector whose CSRF token is a function (read at each request by the leading tab)", async () => {
        let calls = 0;
        const csrfToken = (): string => `fresh-${++calls}`;
        const a = open({ csrfToken });
        const b = open({ csrfToken });
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settleTabs();
        await openAllStreams(ES);
        expect(links()).toHaveLength(1);
        expect(mains()).toEqual([[topic("private-orders.1"), topic("private-chat.1")]]);
        expect(auth.requests.at(-1)!.headers["X-CSRF-TOKEN"]).toMatch(/^fresh-\d+$/);
    });
});

describe("which credentials name the tabs' group (issue 49 point 1)", () => {
    it("leaves a CSRF token out of the fingerprint, and only it", () => {
        const bob = fingerprint({ Authorization: "Bearer bob", "X-CSRF-TOKEN": "one" });
        expect(fingerprint({ Authorization: "Bearer bob", "x-csrf-token": "two" })).toBe(bob);
        expect(fingerprint({ Authorization: "Bearer bob", "X-XSRF-TOKEN": "three" })).toBe(bob);
        expect(fingerprint({ Authorization: "Bearer bob" })).toBe(bob);
        expect(fingerprint({ Authorization: "Bearer bob", "X-Tenant": "acme" })).not.toBe(bob);
        expect(fingerprint({ Authorization: "Bearer carol", "X-CSRF-TOKEN": "one" })).not.toBe(bob);
    });

    it("keeps a connector whose bearer token is a function alone: its value would name the group, and is known only at a request", async () => {
        const a = open({ bearerToken: () => "bob" });
        const b = open({ bearerToken: () => "bob" });
        a.connector.privateChannel("orders.1");
        b.connector.privateChannel("chat.1");
        await settleTabs();
        await openAllStreams(ES);
        expect(links()).toEqual([]);
        expect(mains()).toHaveLength(2);
    });
});

describe("tab links are released when their last client moved away (issue 49 point 1)", () => {
    it("a tab whose bearer token changed keeps no lock, bus or inbox of its old group once no tab uses it", async () => {
        const tab = browser.tab();
        const { connector } = open({ auth: { headers: { Authorization: "Bearer first-token" } } }, tab);
        connector.privateChannel("orders.1");
        await settleTabs();
        await openAllStreams(ES);
        const [first] = links();
        expect(browser.holder(first)).toBe(tab);
        for (let n = 2; n <= 5; n++) {
            (connector.options as { auth: { headers: Record<string, string> } }).auth.headers["Authorization"] = `Bearer token-${n}`;
            connector.privateChannel(`chat.${n}`);
            await settleTabs();
            await openAllStreams(ES);
        }
        // One link left (the last token's): its lock, its bus and this tab's inbox; nothing of the four before.
        expect(links()).toHaveLength(1);
        expect(browser.holder(first)).toBeNull();
        expect(browser.channels.filter((channel) => channel.name.startsWith(first!))).toEqual([]);
        expect(browser.channels.map((channel) => channel.name.slice(0, links()[0]!.length))).toEqual(browser.channels.map(() => links()[0]));
        expect(mains()).toHaveLength(1);
        expect(connector.connectionStatus()).toBe("connected");
    });

    it("the leading tab whose token changed serves the other tabs of its old group until none is left, without a hand-over", async () => {
        const leader = open({ auth: { headers: { Authorization: "Bearer bob" } } });
        const follower = open({ auth: { headers: { Authorization: "Bearer bob" } } });
        const got: unknown[] = [];
        leader.connector.privateChannel("orders.1");
        follower.connector.privateChannel("chat.1").listen(".said", (payload: unknown) => got.push(payload));
        await settleTabs();
        await openAllStreams(ES);
        const [bob] = links();
        expect(browser.holder(bob)).toBe(leader.tab);
        (leader.connector.options as { auth: { headers: Record<string, string> } }).auth.headers["Authorization"] = "Bearer carol";
        leader.connector.privateChannel("orders.2");
        await settleTabs();
        await openAllStreams(ES);
        // Bob's other tab is still served by the same engine and stream: nothing was handed over, nothing lost.
        expect(browser.holder(bob)).toBe(leader.tab);
        const bobStream = ES.live().filter((source) => source.matches().includes(topic("private-chat.1")));
        expect(bobStream.map((source) => source.matches())).toEqual([[topic("private-chat.1")]]);
        bobStream[0]!.emitMessage({ channels: ["private-chat.1"], event: "said", payload: { n: 1 } }, "id-1");
        await settleTabs();
        expect(got).toEqual([{ n: 1 }]);

        follower.connector.disconnect();
        await settleTabs();
        await openAllStreams(ES);
        // No client of Bob's group left: the leading tab lets the old link go (the other tab's link, which its connector
        // may use again after `connect()`, takes the lead: a tab stays electable after `disconnect()`).
        expect(browser.holder(bob)).not.toBe(leader.tab);
        expect(browser.channels.filter((channel) => channel.tab === leader.tab && channel.name.startsWith(bob!))).toEqual([]);
    });
});
