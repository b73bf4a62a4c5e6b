import { describe, expect, it } from "vitest";
import { lazyChunk } from "../../src/lazy-chunk";

describe("lazyChunk", () => {
    it("starts one load for every caller, and keeps a load that succeeded", async () => {
        let loads = 0;
        const load = lazyChunk(async () => ({ n: ++loads }));
        const [a, b] = await Promise.all([load(), load()]);
        expect(a).toBe(b);
        expect(await load()).toBe(a);
        expect(loads).toBe(1);
    });

    it("forgets a load that failed, so that the next call downloads again", async () => {
        let loads = 0;
        const load = lazyChunk(async () => {
            loads++;
            if (loads === 1) throw new TypeError("Failed to fetch dynamically imported module");
            return { n: loads };
        });
        await expect(load()).rejects.toThrow("Failed to fetch dynamically imported module");
        expect(await load()).toEqual({ n: 2 });
        expect(await load()).toEqual({ n: 2 });
        expect(loads).toBe(2);
    });
});
