import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { coreEntrySize, minGzip, readBudget, ROOT } from "../../bench/size.mjs";

const CORE = join(ROOT, "dist", "index.js");
const IIFE = join(ROOT, "dist", "laravel-echo-mercure.iife.js");

/** terser on a 70–180 kB bundle takes seconds on a busy 2-core machine. */
const MINIFY_TIMEOUT = 60_000;

beforeAll(() => {
    if (!existsSync(CORE) || !existsSync(IIFE)) throw new Error('dist/ is missing: run "npm run build" first (npm test does).');
});

/** `bytes` characters of code that compress poorly and deterministically: a chain of SHA-256 digests in a string. */
function incompressibleCode(bytes: number): string {
    let digest = "size-check";
    let text = "";
    while (text.length < bytes) {
        digest = createHash("sha256").update(digest).digest("base64");
        text += digest;
    }
    return `export const padding = ${JSON.stringify(text.slice(0, bytes))};\n`;
}

describe("the size budget (bench/size-budget.json)", () => {
    it("holds the core entry, dist/index.js, at or under its budget after terser -c -m and gzip -9", async () => {
        const budget = readBudget();
        const size = await coreEntrySize();
        expect(
            size.gzip,
            `dist/index.js is ${size.gzip} B min+gzip, over the budget of ${budget.coreEntryMinGzip} B in bench/size-budget.json ` +
                `(issue 11's target: ${budget.issueTarget} B): find the bytes, or raise the budget with a note naming the feature that costs them.`,
        ).toBeLessThanOrEqual(budget.coreEntryMinGzip);
    }, MINIFY_TIMEOUT);

    it("would fail on a core entry that grew by 600 bytes of code past today's", async () => {
        // The measurement sees growth: the same file plus a few hundred bytes crosses the budget's 2 % margin.
        const budget = readBudget();
        const grown = await minGzip(readFileSync(CORE, "utf8") + incompressibleCode(600));
        expect(grown.gzip).toBeGreaterThan(budget.coreEntryMinGzip);
    }, MINIFY_TIMEOUT);

    it("keeps the budget a whole number of bytes at or above issue 11's target", () => {
        const budget = readBudget();
        expect(Number.isSafeInteger(budget.coreEntryMinGzip)).toBe(true);
        expect(budget.issueTarget).toBe(6295);
        expect(budget.coreEntryMinGzip).toBeGreaterThanOrEqual(budget.issueTarget);
    });
});

describe("the IIFE build", () => {
    it("ships minified: minifying it again saves almost nothing", async () => {
        const shipped = readFileSync(IIFE, "utf8");
        const again = await minGzip(shipped);
        // An unminified bundle loses well over half its bytes to terser; a minified one a few per cent at most.
        expect(again.min).toBeGreaterThan(Buffer.byteLength(shipped) * 0.95);
    }, MINIFY_TIMEOUT);

    it("ships its source map, which names the src/ files without embedding them", () => {
        const shipped = readFileSync(IIFE, "utf8");
        expect(shipped.trimEnd().endsWith("//# sourceMappingURL=laravel-echo-mercure.iife.js.map")).toBe(true);
        const map = JSON.parse(readFileSync(`${IIFE}.map`, "utf8")) as { sources: string[]; sourcesContent?: unknown; mappings: string };
        expect(map.sources).toContain("../src/connector/mercure-connector.ts");
        expect(map.sourcesContent).toBeUndefined();
        expect(map.mappings.length).toBeGreaterThan(1000);
    });
});
