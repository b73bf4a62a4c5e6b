import { dirname, resolve } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CapabilitySlot } from "../../../src/connector/capabilities";
import type { ConnectorHost } from "../../../src/connector/connector-host";

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
        // The same tick: no await between the capability's request and the JWE chunk's.
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
