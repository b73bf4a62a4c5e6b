import type { LazyChunk } from "../../src/lazy-chunk";

/*
 * The simulation's loader of lazy chunks, put in place of src/lazy-chunk.ts by the simulation's `vi.mock`. Under
 * vitest a dynamic `import()` settles in real time (the module runner asks the Vite server), which no fake timer
 * orders: a run would depend on how fast the machine is. Here every chunk's module is imported for real once, before
 * the first run ({@link preloadChunks}); from then on a page's "download" of it is a fake timer of a seeded latency, and
 * it fails on purpose while {@link SimChunk.failures} says so. The simulation's tabs share one JavaScript realm, so a
 * chunk once downloaded is downloaded for every tab (a chunk outage forgets it: see {@link outage}).
 */

/** One lazy chunk as the simulation drives it. */
export interface SimChunk {
    /** Its module's path as the code imports it (`./presence-capability`), for failure messages and the chunk actions. */
    readonly path: string;
    /** The real `import()` (run once, by {@link preloadChunks}). */
    readonly importer: () => Promise<unknown>;
    /** The module, once preloaded. */
    module: unknown;
    /** Whether the page has downloaded it (then `loaded()` gives it in the same task). */
    downloaded: boolean;
    /** The download in flight, shared by every caller, or undefined. */
    loading: Promise<unknown> | undefined;
    /** How many of the next downloads fail (as a download that did not arrive does). */
    failures: number;
    /** Downloads tried since the run began, and how many of them failed. */
    tries: number;
    failed: number;
}

/** Every chunk the code defined, in definition order. */
export const chunks: SimChunk[] = [];

/** When a download last failed in this run (ms, fake clock). */
export let lastChunkFailure = -Infinity;

/** When each download failed in this run (ms, fake clock), in order. */
export const chunkFailures: number[] = [];

/** Before {@link preloadChunks} has run: a load is the real `import()` itself. */
let preloading = true;

/** The fake-time latency of a download (ms), from the run's seeded randomness. */
let latency: (chunk: SimChunk) => number = () => 0;

/** The module path a chunk's importer imports last (the module it resolves with): `import("./share-platform")`. */
function pathOf(importer: () => Promise<unknown>): string {
    const found = [...importer.toString().matchAll(/\(\s*["']([^"']+)["']\s*\)/g)].at(-1);
    return found?.[1] ?? "unknown";
}

/** The simulation's `lazyChunk` (see the module's comment): same contract as src/lazy-chunk.ts. */
export function simLazyChunk<T>(importer: () => Promise<T>): LazyChunk<T> {
    const chunk: SimChunk = { path: pathOf(importer), importer, module: undefined, downloaded: false, loading: undefined, failures: 0, tries: 0, failed: 0 };
    chunks.push(chunk);
    const load = (): Promise<T> => {
        if (preloading) return importer().then((module) => (chunk.module = module) as T);
        if (chunk.downloaded) return Promise.resolve(chunk.module as T);
        chunk.loading ??= new Promise<unknown>((resolve, reject) => {
            chunk.tries++;
            setTimeout(() => {
                chunk.loading = undefined;
                if (chunk.failures > 0) {
                    chunk.failures--;
                    chunk.failed++;
                    lastChunkFailure = Date.now();
                    chunkFailures.push(lastChunkFailure);
                    reject(new TypeError(`Failed to fetch dynamically imported module: ${chunk.path}`));
                    return;
                }
                chunk.downloaded = true;
                resolve(chunk.module);
            }, latency(chunk));
        });
        return chunk.loading as Promise<T>;
    };
    return Object.assign(load, { loaded: () => (chunk.downloaded ? (chunk.module as T) : undefined) });
}

/**
 * Import every chunk's module for real, again for the chunks those modules define, until none is new; then switch to
 * simulated downloads. Call once, before fake timers, after the modules that define chunks were imported.
 */
export async function preloadChunks(): Promise<void> {
    const done = new Set<SimChunk>();
    for (;;) {
        const fresh = chunks.filter((chunk) => !done.has(chunk));
        if (fresh.length === 0) break;
        for (const chunk of fresh) {
            done.add(chunk);
            chunk.module = await chunk.importer();
        }
    }
    preloading = false;
}

/** Start a run: no chunk downloaded, none failing, downloads taking `delay(chunk)` ms of fake time. */
export function resetChunks(delay: (chunk: SimChunk) => number): void {
    latency = delay;
    lastChunkFailure = -Infinity;
    chunkFailures.length = 0;
    for (const chunk of chunks) {
        chunk.downloaded = false;
        chunk.loading = undefined;
        chunk.failures = 0;
        chunk.tries = 0;
        chunk.failed = 0;
    }
}

/**
 * A page opens in a realm of its own (a navigation after which no other page is open): it has downloaded no chunk yet
 * (its browser's cache may give them back fast, as the seeded latency does), but the platform set-up's, which only the
 * simulation's fake `EventSource` and `fetch` options need (a page on the browser's own never downloads it), so that
 * the page claims the tabs' lead before its share client loads, as a real page does. With other pages open the realm's
 * one download state stays theirs too: forgetting it would change what their code finds loaded.
 */
export function freshRealm(): void {
    const setup = chunk("platform-setup");
    for (const each of chunks) if (each.loading === undefined && each !== setup) each.downloaded = false;
}

/** The chunk whose module path, without its extension, ends with `name` (`presence-capability`, `whisper/index`). */
export function chunk(name: string): SimChunk {
    const found = chunks.find((candidate) => ("/" + candidate.path.replace(/\.[cm]?[jt]s$/, "")).endsWith("/" + name));
    if (found === undefined) throw new Error(`no lazy chunk ${name} (known: ${chunks.map((candidate) => candidate.path).join(", ")})`);
    return found;
}

/**
 * A chunk outage: the page forgets chunk `name` (a page opened since has not downloaded it) and its next `failures`
 * downloads fail; the one after succeeds.
 */
export function outage(name: string, failures: number): void {
    const target = chunk(name);
    target.downloaded = false;
    target.failures = failures;
}
