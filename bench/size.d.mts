// Types of bench/size.mjs for the TypeScript tests that import it (test/e2e/size.test.ts).

/** A minified file's size and its gzip size, in bytes. */
export interface MinGzip {
    min: number;
    gzip: number;
}

/** The content of bench/size-budget.json. */
export interface SizeBudget {
    /** The most bytes dist/index.js may take after `terser -c -m | gzip -9`. */
    coreEntryMinGzip: number;
    /** Issue 11's target for the core entry, in the same measure. */
    issueTarget: number;
    /** Where the budget comes from and when to change it. */
    note: string;
}

/** The package root. */
export const ROOT: string;
/** The path of bench/size-budget.json. */
export const BUDGET_FILE: string;
/** The terser options of every min+gzip figure (`terser -c -m`). */
export const TERSER_OPTIONS: Readonly<{ compress: true; mangle: true }>;
/** Minify as `terser -c -m`, then gzip at level 9. */
export function minGzip(code: string): Promise<MinGzip>;
/** gzip level 9 of a file shipped already minified. */
export function gzipOnly(file: string): MinGzip;
/** The core entry's min+gzip size in `distDir` (default: the package's dist/). */
export function coreEntrySize(distDir?: string): Promise<MinGzip>;
/** The parsed bench/size-budget.json. */
export function readBudget(): SizeBudget;
