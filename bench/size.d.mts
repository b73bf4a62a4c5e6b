// Types of bench/size.mjs for the TypeScript tests that import it (test/e2e/size.test.ts).

/** A minified file's size and its gzip size, in bytes. */
export interface MinGzip {
    min: number;
    gzip: number;
}

/** The content of bench/size-budget.json. */
export interface SizeBudget {
    /** The most bytes the first render of `import { MercureConnector }` may take (entry chunk + its static imports, `terser -c -m --module | gzip -9`, summed). */
    firstRenderMinGzip: number;
    /** The same for a whole app, `new Echo({ broadcaster: MercureConnector })` with laravel-echo bundled. */
    appMinGzip: number;
    /** The most bytes the shipped IIFE may take after gzip -9. */
    iifeGzip: number;
    /** Issue 32's targets, in the same measures. */
    targets: { firstRender: number; firstRenderStretch: number; app: number; iife: number };
    /** Where the budgets come from and when to change them. */
    note: string;
}

/** One chunk of a split app: its name, the modules it holds, its module-mode min+gzip size. */
export interface ChunkSize extends MinGzip {
    name: string;
    modules: string[];
}

/** A split app's first render (its chunks summed) and its lazy chunks. */
export interface SplitAppSize {
    firstRender: MinGzip & { chunks: ChunkSize[] };
    lazy: ChunkSize[];
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
/** The app whose first render the budget limits (`import { MercureConnector }`). */
export const FIRST_RENDER_APP: string;
/** A whole app: Echo with the connector. */
export const WHOLE_APP: string;
/** Minify as `terser -c -m --module`, then gzip at level 9. */
export function moduleMinGzip(code: string): Promise<MinGzip>;
/** Bundle `code` with code splitting and measure its first render (entry + static imports) and lazy chunks. */
export function splitAppSize(code: string, options?: { externalEcho?: boolean; distDir?: string }): Promise<SplitAppSize>;
/** Issue 32's three budget figures on the current dist/. */
export function budgetFigures(distDir?: string): Promise<{ firstRender: SplitAppSize["firstRender"]; lazy: ChunkSize[]; app: SplitAppSize["firstRender"]; iife: MinGzip }>;
