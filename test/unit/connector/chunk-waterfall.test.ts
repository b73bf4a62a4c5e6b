import { dirname, resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CapabilitySlot } from "../../../src/connector/capabilities";
import type { ConnectorHost } from "../../../src/connector/connector-host";
import type { FetchLike } from "../../../src/transport/platform";
import { HUB, settleLoadsUntil, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource } from "../../fakes/fake-event-source";

/*
 * Issue 53: no chunk waterfall on the first event's path. A capability's chunk, the helpers it shares with other
 * chunks and its libraries are asked for together, not one once the other has arrived and named the next. Here the
 * capability's own chunk never arrives (its module is held): the helpers must be asked for all the same. Were they
 * asked for only by the capability's chunk, the test would wait for them for ever and fail at vitest's deadline: a
 * deadlock, not a timing margin.
 */

/** The absolute path of a module of src/, as `vi.doMock` needs it from a helper. */
const source = (path: string) => resolve(dirname(expect.getState().testPath!), "../../../src", path);

/** The modules asked for, in order. */
let asked: string[];

/** The modules mocked by this test (a mock outlives `vi.resetModules()`: each test undoes its own). */
const mocked: string[] = [];

/** `vi.doMock` the module `path` of src/ with `factory`, for this test only. */
function mock(path: string, factory: Parameters<typeof vi.doMock>[1]): void {
    mocked.push(source(path));
    vi.doMock(source(path), factory);
}

/** Hold the module `path` of src/ (its download never arrives). */
function hold(path: string): void {
    mock(path, () => {
        asked.push(path);
        return new Promise(() => undefined);
    });
}

/** Ask a connector's capabilities for `name`'s slot (fresh modules: none has loaded), as a join or a whisper does. */
async function use(name: "CRYPTO" | "WHISPERS"): Promise<void> {
    const slots = await import("../../../src/connector/capability-slots");
    const { Capabilities } = await import("../../../src/connector/capabilities");
    const host = { settle: <T>(change: () => T): T => change() } as unknown as ConnectorHost;
    void Promise.resolve(new Capabilities(() => host, slots.CAPABILITY_SLOTS).use(slots[name] as CapabilitySlot)).catch(() => undefined);
}

/** Record when the module `path` of src/ is asked for, then load it; resolves once it was asked for. */
function watch(path: string): Promise<void> {
    return new Promise((done) =>
        mock(path, async (importOriginal) => {
            asked.push(path);
            done();
            return importOriginal();
        }),
    );
}

beforeEach(() => {
    for (const path of mocked.splice(0)) vi.doUnmock(path);
    vi.resetModules();
    asked = [];
});

describe("the first event's chunks (issue 53: no waterfall)", () => {
    it("asks for the JWE chunk in the tick the encrypted channels' capability is asked for, before that chunk has arrived", async () => {
        hold("connector/crypto-capability");
        const loadCrypto = vi.fn(() => new Promise(() => undefined));
        mock("crypto/load", async (importOriginal) => ({ ...(await importOriginal<object>()), loadCrypto }));
        const slots = await import("../../../src/connector/capability-slots");
        const { Capabilities } = await import("../../../src/connector/capabilities");
        void new Capabilities(() => ({}) as ConnectorHost, slots.CAPABILITY_SLOTS).use(slots.CRYPTO);
        // The same tick: the download starts one microtask later (after the refresh's auth request), and the JWE chunk
        // is asked for in that same microtask, not once the capability's chunk has arrived (it never does here).
        expect(loadCrypto).not.toHaveBeenCalled();
        await Promise.resolve();
        expect(loadCrypto).toHaveBeenCalledTimes(1);
    });

    it("asks for the JWE chunk itself while the capability's chunk is held", async () => {
        hold("connector/crypto-capability");
        const jwe = watch("crypto/jwe");
        await use("CRYPTO");
        await jwe;
        expect(asked).toEqual(expect.arrayContaining(["connector/crypto-capability", "crypto/jwe"]));
    });

    it("does not ask for the JWE chunk where WebCrypto is missing (it could not run)", async () => {
        hold("connector/crypto-capability");
        const loadCrypto = vi.fn(() => new Promise(() => undefined));
        mock("crypto/load", async (importOriginal) => ({ ...(await importOriginal<object>()), loadCrypto, hasWebCrypto: () => false }));
        await use("CRYPTO");
        expect(loadCrypto).not.toHaveBeenCalled();
    });

    it("asks for the helpers the whisper chunk imports while the whisper chunk is held", async () => {
        hold("connector/whisper-capability");
        const helpers = [watch("discovery/response"), watch("bounded-wait")];
        await use("WHISPERS");
        await Promise.all(helpers);
        expect(asked).toEqual(expect.arrayContaining(["connector/whisper-capability", "discovery/response", "bounded-wait"]));
    });
});

describe("the auth request before the chunks (issue 53)", () => {
    /**
     * A connector (fresh modules) whose lazy chunks record when each download starts (the loader's call, in the tick it
     * happens) and whose auth requests record when they leave: the order of the two, for `act` on a new connector.
     */
    async function order(act: (connector: import("../../../src/connector/mercure-connector").MercureConnector) => void): Promise<string[]> {
        useScopedFakeTimers();
        const events: string[] = [];
        mock("lazy-chunk", async (importOriginal) => {
            const original = await importOriginal<typeof import("../../../src/lazy-chunk")>();
            return {
                lazyChunk: <T>(importer: () => Promise<T>) => {
                    const part = /(presence|whisper|crypto)-capability/.exec(String(importer))?.[1];
                    return original.lazyChunk(() => {
                        if (part !== undefined) events.push(`${part} chunk`);
                        return importer();
                    });
                },
            };
        });
        const { MercureConnector } = await import("../../../src/connector/mercure-connector");
        const auth = new FakeAuthServer();
        const fetch: FetchLike = (url, init) => {
            events.push("auth request");
            return auth.fetch(url, init);
        };
        // The page's own fetch and EventSource (a bound function reads as native code), as on a page that gives Echo
        // neither: the connector's first refresh then sends its request in the tick of the joins, waiting for no set-up.
        vi.stubGlobal("fetch", fetch);
        vi.stubGlobal("EventSource", createFakeEventSource().bind(null));
        const connector = new MercureConnector({ host: HUB, shareAcrossTabs: false });
        try {
            act(connector);
            await settleLoadsUntil(() => events.length >= 2);
            return events;
        } finally {
            connector.disconnect();
            vi.unstubAllGlobals();
            vi.useRealTimers();
        }
    }

    it("sends the batch's auth request before it starts the download of the capability a channel joined in the same tick needs", async () => {
        expect(await order((connector) => connector.presenceChannel("room.1"))).toEqual(["auth request", "presence chunk"]);
    });

    it("sends it before the whisper chunk a whisper listener of the tick asks for", async () => {
        expect(await order((connector) => connector.privateChannel("chat.1").listenForWhisper("typing", () => undefined))).toEqual(["auth request", "whisper chunk"]);
    });

    it("starts a download for a channel joined while the refresh runs without waiting for the trailing request", async () => {
        const events = await order((connector) => {
            connector.privateChannel("chat.1");
            queueMicrotask(() => connector.encryptedPrivateChannel("secret.1"));
        });
        expect(events.slice(0, 2)).toEqual(["auth request", "crypto chunk"]);
    });
});
