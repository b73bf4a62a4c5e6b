import { dirname, resolve } from "node:path";
import { expect, vi } from "vitest";

/** How a chunk mocked by {@link mockFlakyChunk} behaves: how many more loads fail, and how many were tried. */
export interface FlakyChunk {
    /** The next loads that fail, as a download that did not arrive does; decremented by each. */
    failures: number;
    /** Every load tried since the mock was set. */
    loads: number;
}

/**
 * Stand in for a lazily loaded chunk's module, `path` relative to the running test file as in `vi.doMock` (which,
 * called here, would resolve it against this file: it gets the absolute path): each load is counted, and fails as an
 * `import()` whose download failed as long as `failures` says, then loads the real module. Call it after
 * `vi.resetModules()` and before importing what loads the chunk.
 */
export function mockFlakyChunk(path: string): FlakyChunk {
    const chunk: FlakyChunk = { failures: 0, loads: 0 };
    vi.doMock(resolve(dirname(expect.getState().testPath!), path), async (importOriginal) => {
        chunk.loads++;
        if (chunk.failures > 0) {
            chunk.failures--;
            throw new TypeError("Failed to fetch dynamically imported module");
        }
        return importOriginal();
    });
    return chunk;
}
