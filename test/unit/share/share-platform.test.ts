import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MercureConnector } from "../../../src/connector/mercure-connector";
import { HUB, envelope, settleLoads } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import type { FakeEventSourceClass } from "../../fakes/fake-event-source";
import { enterTabWorld, leaveTabWorld } from "../../fakes/tab-world";
import { FakeBrowser, type FakeTab } from "../../fakes/fake-tabs";

/*
 * The page's own sharing environment (no `shareEnvironment` option): its Web Locks, BroadcastChannel and
 * MessageChannel, stubbed with the fake browser's, as a real page has them. The environment is found once per
 * page (module state), so this file has one page.
 */

let browser: FakeBrowser;
let page: FakeTab;
let ES: FakeEventSourceClass;
let auth: FakeAuthServer;
/** BroadcastChannel instances the page created. */
let channels: number;
/** Messages posted through the page's MessageChannel hop. */
let hops: number;
const connectors: MercureConnector[] = [];

beforeEach(() => {
    ({ browser, ES, auth } = enterTabWorld());
    page = browser.tab();
    channels = 0;
    hops = 0;
    const Base = page.env.BroadcastChannel;
    vi.stubGlobal(
        "BroadcastChannel",
        class extends Base {
            constructor(name: string) {
                super(name);
                channels++;
            }
        },
    );
    // A MessageChannel whose port2 messages reach port1 as a task (a zero-delay timer here, as fake timers run them).
    vi.stubGlobal(
        "MessageChannel",
        class {
            readonly port1: { onmessage: (() => void) | null } = { onmessage: null };
            readonly port2 = {
                postMessage: () => {
                    hops++;
                    setTimeout(() => this.port1.onmessage?.(), 0);
                },
            };
        },
    );
    vi.stubGlobal("navigator", { ...navigator, locks: page.env.locks });
});

afterEach(() => {
    vi.unstubAllGlobals();
    leaveTabWorld(connectors);
});

/** Let tasks, microtasks and the engine chunk's import run (as in tabs.test.ts). */
const settle = (): Promise<void> => settleLoads(1, 30);

describe("the page's sharing environment", () => {
    it("is found once: two connectors of the page share one tab link (one bus), and events to another tab hop through a MessageChannel", async () => {
        const make = (extra: { shareEnvironment?: FakeTab["env"] } = {}) => {
            const connector = new MercureConnector({ host: HUB, eventSource: ES, fetch: auth.fetch, ...extra });
            connectors.push(connector);
            return connector;
        };
        const [a, b] = [make(), make()];
        a.privateChannel("orders.1");
        b.privateChannel("chat.1");
        await settle();
        // One link for the page's two connectors (its bus, its tab's inbox, its engine's inbox), one auth request for both.
        expect(channels).toBe(3);
        expect(auth.requests.map((request) => request.channelNames)).toEqual([["private-orders.1", "private-chat.1"]]);

        // Another tab (its own environment) follows the page's engine; three events of one task reach it in one
        // bus message, after one hop.
        const other = make({ shareEnvironment: browser.tab().env });
        const got: unknown[] = [];
        other.privateChannel("news.1").listen(".said", (payload: unknown) => got.push(payload));
        await settle();
        for (const source of ES.live()) if (source.readyState === 0) source.emitOpen();
        await settle();
        await vi.advanceTimersByTimeAsync(5_000); // Replaced streams drain out.
        await settle();
        const [real] = ES.live();
        hops = 0;
        for (let n = 1; n <= 3; n++) real!.emitMessage(envelope(["private-news.1"], "said", { n }), `id-${n}`);
        await settle();
        expect(got).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
        expect(hops).toBe(1);
    });
});
