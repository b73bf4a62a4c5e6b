import { describe, expect, it } from "vitest";
import { Capabilities, type Capability, type CapabilitySlot, type Grant } from "../../../src/connector/capabilities";
import type { ConnectorHost } from "../../../src/connector/connector-host";
import { MercureChannel } from "../../../src/channel/mercure-channel";
import type { MercureError } from "../../../src/errors";
import { lazyChunk } from "../../../src/lazy-chunk";

/** A promise with its resolve and reject. */
function deferred<T>() {
    let resolve!: (value: T) => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<T>((ok, fail) => ((resolve = ok), (reject = fail)));
    return { promise, resolve, reject };
}

/** Let every pending promise reaction run. */
const drain = async () => {
    for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A capability that logs what it hears. */
function recorder(log: string[]): Capability {
    return {
        joined: (channel) => log.push(`joined ${channel.name}`),
        authorized: (grant) => log.push(`authorized ${grant.granted.join(",")}`),
        dropped: (name) => log.push(`dropped ${name}`),
    };
}

/**
 * A slot for `room-` channels whose chunk is each download in `downloads` in turn (a test resolves or rejects it), and
 * the host of the channels joined: what it evicted, and how many refreshes it was asked for.
 */
function setup() {
    const log: string[] = [];
    const downloads: Array<ReturnType<typeof deferred<{ create(host: ConnectorHost): Capability }>>> = [];
    const slot: CapabilitySlot = {
        needs: (name) => name.startsWith("room-"),
        part: "room",
        chunk: lazyChunk(() => {
            const download = deferred<{ create(host: ConnectorHost): Capability }>();
            downloads.push(download);
            return download.promise;
        }),
    };
    const channels = new Map<string, MercureChannel>();
    const evicted: MercureError[] = [];
    let refreshes = 0;
    /** What runs after each eviction, as a channel's error() callback runs once the connector settled it. */
    const afterEvict: Array<(name: string) => void> = [];
    const host = {
        registry: { names: () => [...channels.keys()], get: (name: string) => channels.get(name) },
        settle: <T>(change: () => T): T => change(),
        evict: (name: string, error: MercureError) => {
            channels.delete(name);
            evicted.push(error);
            for (const callback of afterEvict) callback(name);
        },
        scheduleRefresh: () => void refreshes++,
    } as unknown as ConnectorHost;
    const capabilities = new Capabilities(() => host, [slot]);
    const join = (name: string) => {
        const channel = new MercureChannel(name, {} as never);
        channels.set(name, channel);
        capabilities.joined(channel);
    };
    const module = { create: () => recorder(log) };
    return { log, downloads, slot, capabilities, join, evicted, refreshes: () => refreshes, module, afterEvict };
}

const grant = (granted: string[]): Grant => ({ granted, response: {} as Grant["response"], platform: {} as Grant["platform"], report: () => undefined });

describe("Capabilities (issue 32: capabilities load on first use)", () => {
    it("downloads a capability when the first channel that needs it is joined, and tells it the joined channels and the last grant once it arrives", async () => {
        const { log, downloads, slot, capabilities, join, module } = setup();
        join("news");
        expect(downloads).toHaveLength(0);
        expect(capabilities.ready()).toBeNull();
        join("room-1");
        join("room-2");
        expect(downloads).toHaveLength(1); // One download however many channels need it.
        capabilities.tell("authorized", grant(["news", "room-1", "room-2"]));
        const ready = capabilities.ready();
        expect(ready).not.toBeNull();
        let settled = false;
        void ready!.then(() => (settled = true));
        await drain();
        expect(settled).toBe(false);
        expect(capabilities.get(slot)).toBeNull();

        downloads[0]!.resolve(module);
        await drain();
        expect(settled).toBe(true);
        expect(log).toEqual(["joined news", "joined room-1", "joined room-2", "authorized news,room-1,room-2"]);
        expect(capabilities.get(slot)).not.toBeNull();
        expect(capabilities.ready()).toBeNull();
        // Loaded: a later join is told in the same task.
        join("room-3");
        expect(log.at(-1)).toBe("joined room-3");
    });

    it("forgets the last grant on disconnect (cleared): a capability loaded afterwards hears none", async () => {
        const { log, downloads, capabilities, join, module } = setup();
        capabilities.tell("authorized", grant(["news"]));
        capabilities.tell("cleared");
        join("room-1");
        downloads[0]!.resolve(module);
        await drain();
        expect(log).toEqual(["joined room-1"]);
    });

    it("forgets the last grant when the connector wound down (forgetGrant): a capability loaded afterwards waits for the next answer (seed 7084)", async () => {
        const { log, downloads, capabilities, join, module } = setup();
        capabilities.tell("authorized", grant(["room-1"]));
        capabilities.forgetGrant();
        join("room-1");
        downloads[0]!.resolve(module);
        await drain();
        expect(log).toEqual(["joined room-1"]);
        capabilities.tell("authorized", grant(["room-1"]));
        expect(log).toEqual(["joined room-1", "authorized room-1"]);
    });

    it("leaves each channel that needs a capability whose download failed, with load_failed, and downloads it again for the next join", async () => {
        const { log, downloads, capabilities, join, evicted, refreshes, module } = setup();
        join("news");
        join("room-1");
        join("room-2");
        const ready = capabilities.ready();
        downloads[0]!.reject(new TypeError("Failed to fetch dynamically imported module"));
        await ready;
        expect(evicted.map((error) => [error.code, error.channel])).toEqual([
            ["load_failed", "room-1"],
            ["load_failed", "room-2"],
        ]);
        expect(evicted[0]!.message).toBe(
            'The room code for channel "room-1" could not be downloaded (Failed to fetch dynamically imported module): the channel was left, and joining it again downloads the code again; check the network, or reload the page after a deploy.',
        );
        expect(refreshes()).toBe(1);
        expect(capabilities.ready()).toBeNull();

        join("room-1");
        expect(downloads).toHaveLength(2);
        downloads[1]!.resolve(module);
        await drain();
        expect(log).toEqual(["joined news", "joined room-1"]);
    });

    it("downloads again for a channel joined again by an error() callback of the failure, instead of leaving it joined without the capability (issue 49)", async () => {
        const { log, downloads, slot, capabilities, join, evicted, module, afterEvict } = setup();
        join("room-1");
        afterEvict.push((name) => join(name)); // The page's error() callback joins the room again at once.
        downloads[0]!.reject(new TypeError("Failed to fetch dynamically imported module"));
        await drain();
        afterEvict.length = 0;
        expect(evicted.map((error) => error.channel)).toEqual(["room-1"]);
        expect(downloads).toHaveLength(2);
        expect(capabilities.ready()).not.toBeNull(); // The refresh waits for the second download.
        downloads[1]!.resolve(module);
        await drain();
        expect(capabilities.get(slot)).not.toBeNull();
        expect(log).toEqual(["joined room-1"]);
        expect(capabilities.ready()).toBeNull();
    });

    it("loads a capability that no channel needs (whispers) when it is used, and gives it at once afterwards", async () => {
        const { log, downloads, slot, capabilities, join, module } = setup();
        const whisperSlot: CapabilitySlot = { ...slot, needs: () => false };
        join("room-1"); // Starts the room slot's download, not the whisper slot's.
        expect(downloads).toHaveLength(1);
        const used = capabilities.use(whisperSlot);
        expect(used).toBeInstanceOf(Promise);
        expect(downloads).toHaveLength(1); // Both slots share the test's chunk loader: one download.
        downloads[0]!.resolve(module);
        const capability = await used;
        expect(capabilities.use(whisperSlot)).toBe(capability);
        expect(log.filter((line) => line === "joined room-1")).toHaveLength(2); // Each capability heard the join once.
    });
});
