// Bundle sizes, minified and gzipped the one way every published figure uses (README, BENCHMARKS.md, the size
// check in npm test): `terser -c -m | gzip -9`, i.e. terser 5 with its default compress and mangle options,
// script mode, then gzip level 9. It is how the README's earlier figures and the 6 295 B target were
// measured, so the figures compare. (A bundler's module-mode minification comes out about 7 % smaller.)
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import nodeResolve from "@rollup/plugin-node-resolve";
import { rollup } from "rollup";
import { minify } from "terser";

/** The package root (this file lives in bench/). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The terser options of every min+gzip figure: `terser -c -m`. */
export const TERSER_OPTIONS = Object.freeze({ compress: true, mangle: true });

/** Where the size budget of the core entry is written down (one number, read by the size check in npm test). */
export const BUDGET_FILE = join(ROOT, "bench", "size-budget.json");

/** Minify `code` as `terser -c -m` does, then gzip it at level 9; resolves with both byte counts. */
export async function minGzip(code) {
    const minified = await minifyCode(code);
    return { min: Buffer.byteLength(minified), gzip: gzipSync(minified, { level: 9 }).length };
}

/** `terser -c -m` of `code`. */
async function minifyCode(code) {
    return (await minify(code, { ...TERSER_OPTIONS })).code;
}

/**
 * The terser options of the budget figures of issue 32 (first render, whole app): `terser -c -m --module`, i.e. as a
 * bundler minifies ES modules (top-level names mangled too). The IIFE is measured as shipped (gzip only).
 */
export const MODULE_TERSER_OPTIONS = Object.freeze({ compress: true, mangle: true, module: true });

/** The app whose first render the budget limits: it imports the connector only, laravel-echo left external. */
export const FIRST_RENDER_APP = `import { MercureConnector } from "laravel-echo-mercure";\nwindow.MercureConnector = MercureConnector;\n`;

/** A whole app: Echo with the connector, laravel-echo bundled. */
export const WHOLE_APP = `import Echo from "laravel-echo";\nimport { MercureConnector } from "laravel-echo-mercure";\nwindow.Echo = new Echo({ broadcaster: MercureConnector });\n`;

/** `terser -c -m --module` of `code`, then gzip -9; resolves with both byte counts. */
export async function moduleMinGzip(code) {
    const minified = (await minify(code, { ...MODULE_TERSER_OPTIONS })).code;
    return { min: Buffer.byteLength(minified), gzip: gzipSync(minified, { level: 9 }).length };
}

/**
 * Bundle `code` as an app's code-splitting bundler does for the browser (rollup + node-resolve, ES modules,
 * `laravel-echo-mercure` resolving to `distDir`/index.js, laravel-echo external when `externalEcho`), then measure
 * in module mode: `firstRender` is the entry chunk plus every chunk it imports statically (what a page downloads
 * before the app's code runs), each chunk minified and gzipped on its own as it is downloaded, summed; `lazy` are the
 * chunks reached only through `import()`, each with the names of the modules it holds.
 */
export async function splitAppSize(code, { externalEcho = false, distDir = join(ROOT, "dist") } = {}) {
    const ENTRY = "\0bench-split-entry";
    const build = await rollup({
        input: ENTRY,
        onwarn: () => undefined,
        external: externalEcho ? (id) => id === "laravel-echo" : undefined,
        plugins: [
            {
                name: "bench-split-entry",
                resolveId: (id) => (id === ENTRY ? ENTRY : id === "laravel-echo-mercure" ? join(distDir, "index.js") : null),
                load: (id) => (id === ENTRY ? code : null),
            },
            nodeResolve({ browser: true, rootDir: ROOT }),
        ],
    });
    let chunks;
    try {
        chunks = (await build.generate({ format: "es" })).output.filter((item) => item.type === "chunk");
    } finally {
        await build.close();
    }
    const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
    const eager = new Set();
    const pending = [chunks.find((chunk) => chunk.isEntry).fileName];
    while (pending.length > 0) {
        const file = pending.pop();
        if (eager.has(file)) continue;
        eager.add(file);
        pending.push(...byFile.get(file).imports.filter((imported) => byFile.has(imported)));
    }
    const measure = async (chunk) => ({ name: chunk.name, modules: Object.keys(chunk.modules).map(sourceName), ...(await moduleMinGzip(chunk.code)) });
    const first = await Promise.all(chunks.filter((chunk) => eager.has(chunk.fileName)).map(measure));
    const lazy = await Promise.all(chunks.filter((chunk) => !eager.has(chunk.fileName)).map(measure));
    return {
        firstRender: { min: first.reduce((sum, chunk) => sum + chunk.min, 0), gzip: first.reduce((sum, chunk) => sum + chunk.gzip, 0), chunks: first },
        lazy: lazy.sort((a, b) => b.gzip - a.gzip),
    };
}

/** A module id as a short name: the path below src/ or node_modules/, else the file name. */
function sourceName(id) {
    const path = id.replace(/\\/g, "/");
    const at = Math.max(path.lastIndexOf("/node_modules/"), path.lastIndexOf("/dist/"));
    return at >= 0 ? path.slice(path.indexOf("/", at + 1) + 1) : path.slice(path.lastIndexOf("/") + 1);
}

/**
 * The three figures issue 32 budgets, on the current dist/ (run npm run build first): the first render of
 * {@link FIRST_RENDER_APP}, the first render of {@link WHOLE_APP}, and the shipped IIFE (gzip only); with the lazy
 * chunks of the first.
 */
export async function budgetFigures(distDir = join(ROOT, "dist")) {
    const connector = await splitAppSize(FIRST_RENDER_APP, { externalEcho: true, distDir });
    const app = await splitAppSize(WHOLE_APP, { distDir });
    return { firstRender: connector.firstRender, lazy: connector.lazy, app: app.firstRender, iife: gzipOnly(join(distDir, "laravel-echo-mercure.iife.js")) };
}

/** The base64 digits of source-map VLQs. */
const VLQ_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Decode one line of a source map's `mappings` into its segments' [generated column, source index] (relative fields summed). */
function decodeLine(line, state) {
    const segments = [];
    let column = 0;
    for (const segment of line.split(",")) {
        if (segment === "") continue;
        const fields = [];
        let value = 0;
        let shift = 0;
        for (const char of segment) {
            const digit = VLQ_DIGITS.indexOf(char);
            value += (digit & 31) << shift;
            if (digit & 32) {
                shift += 5;
                continue;
            }
            fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
            value = 0;
            shift = 0;
        }
        column += fields[0];
        if (fields.length > 1) state.source += fields[1];
        segments.push([column, fields.length > 1 ? state.source : null]);
    }
    return segments;
}

/**
 * Where the core entry's minified bytes come from, by part of \`src/\` (a folder such as \`share\`, or a top-level file):
 * \`terser -c -m\` of \`dist/index.js\` with its rollup source map, each minified character counted for the source file
 * its mapping names (a character without one, for the last file named before it). Resolves with the parts, largest
 * first: \`{ part, min, gzip }\`, where \`gzip\` is the part's share of the entry's min+gzip size in proportion to its
 * minified bytes (gzip works across parts, so a part has no exact gzip size of its own).
 */
export async function coreEntryParts(distDir = join(ROOT, "dist")) {
    const file = coreChunkFile(distDir);
    const code = readFileSync(file, "utf8");
    if (!existsSync(`${file}.map`)) throw new Error(`${file}.map is missing: the breakdown by part needs the build's source maps (BENCH_SOURCEMAPS=1 npm run build, as npm run bench does)`);
    const map = JSON.parse(readFileSync(`${file}.map`, "utf8"));
    const out = await minify(code, { ...TERSER_OPTIONS, sourceMap: { content: map } });
    const minMap = JSON.parse(out.map);
    const partOf = (source) => {
        const path = source.replace(/\\/g, "/").replace(/^.*?src\//, "");
        return path.includes("/") ? path.slice(0, path.indexOf("/")) + "/" : path;
    };
    const parts = new Map();
    const lines = out.code.split("\n");
    const mappings = minMap.mappings.split(";");
    const state = { source: 0 };
    let last = "(unmapped)";
    for (let l = 0; l < lines.length; l++) {
        const segments = decodeLine(mappings[l] ?? "", state);
        let at = 0;
        for (let i = 0; i <= segments.length; i++) {
            const end = i < segments.length ? segments[i][0] : lines[l].length;
            parts.set(last, (parts.get(last) ?? 0) + (end - at));
            at = end;
            if (i < segments.length && segments[i][1] !== null) last = partOf(minMap.sources[segments[i][1]]);
        }
    }
    const total = Buffer.byteLength(out.code);
    const gzip = gzipSync(out.code, { level: 9 }).length;
    return [...parts]
        .filter(([, min]) => min > 0)
        .map(([part, min]) => ({ part, min, gzip: Math.round((min / total) * gzip) }))
        .sort((a, b) => b.min - a.min);
}

/** gzip level 9 of a file shipped already minified (the IIFE, pusher-js's .min.js). */
export function gzipOnly(file) {
    const code = readFileSync(file);
    return { min: code.length, gzip: gzipSync(code, { level: 9 }).length };
}

/**
 * The chunk that holds the core's code, dist/chunks/core-*.js: dist/index.js re-exports the public API from it, and
 * the lazy chunks import what they share with the core from it. Throws when there is not exactly one.
 */
export function coreChunkFile(distDir = join(ROOT, "dist")) {
    const chunks = readdirSync(join(distDir, "chunks")).filter((file) => /^core-.*\.js$/.test(file));
    if (chunks.length !== 1) throw new Error(`Expected one dist/chunks/core-*.js, found ${chunks.length}: run npm run build.`);
    return join(distDir, "chunks", chunks[0]);
}

/**
 * The core entry's size in `distDir` (default: this package's dist/) as the earlier figures measured it, script-mode
 * `terser -c -m | gzip -9`: dist/index.js and the core chunk it re-exports, as one file; dist/index.js alone in a build
 * from before issue 32, which had no core chunk (`node bench/encryption.mjs --compare=<that dist>`).
 */
export async function coreEntrySize(distDir = join(ROOT, "dist")) {
    const entry = readFileSync(join(distDir, "index.js"), "utf8");
    const split = readdirSync(join(distDir, "chunks")).some((file) => /^core-.*\.js$/.test(file));
    return minGzip(split ? entry.replace(/^export .*$/m, "") + readFileSync(coreChunkFile(distDir), "utf8") : entry);
}

/** The budget file's content: `{ firstRenderMinGzip, appMinGzip, iifeGzip, targets, note }`. */
export function readBudget() {
    return JSON.parse(readFileSync(BUDGET_FILE, "utf8"));
}

/** The lazily loaded JWE chunk of the ESM build (dist/chunks/jwe-*.js); throws when there is not exactly one. */
export function cryptoChunkFile(distDir = join(ROOT, "dist")) {
    const chunks = readdirSync(join(distDir, "chunks")).filter((file) => /^jwe-.*\.js$/.test(file));
    if (chunks.length !== 1) throw new Error(`Expected one dist/chunks/jwe-*.js, found ${chunks.length}: run npm run build.`);
    return join(distDir, "chunks", chunks[0]);
}

/**
 * Bundle `code` (an ES module that imports packages) with rollup as an app's bundler would for the browser,
 * `laravel-echo-mercure` resolving to this package's dist/index.js; resolves with the emitted chunks,
 * unminified (`inline`: the lazy chunks inlined into the entry).
 */
async function bundle(code, { inline = false } = {}) {
    const ENTRY = "\0bench-app-entry";
    const build = await rollup({
        input: ENTRY,
        onwarn: () => undefined,
        plugins: [
            {
                name: "bench-app-entry",
                resolveId: (id) => (id === ENTRY ? ENTRY : id === "laravel-echo-mercure" ? join(ROOT, "dist", "index.js") : null),
                load: (id) => (id === ENTRY ? code : null),
            },
            nodeResolve({ browser: true, rootDir: ROOT }),
        ],
    });
    try {
        const { output } = await build.generate({ format: "es", inlineDynamicImports: inline });
        return output.filter((item) => item.type === "chunk");
    } finally {
        await build.close();
    }
}

/**
 * {@link bundle}, then each chunk minified and gzipped: the entry chunk (what the first render downloads)
 * and the lazily loaded chunks.
 */
export async function bundleApp(code) {
    const chunks = await bundle(code);
    const entry = chunks.find((chunk) => chunk.isEntry);
    const lazy = chunks.filter((chunk) => !chunk.isEntry);
    return {
        entry: await minGzip(entry.code),
        lazy: await Promise.all(lazy.map(async (chunk) => ({ name: chunk.name, ...(await minGzip(chunk.code)) }))),
    };
}

/** One row of the size table. */
function row(label, size, note = "") {
    return { label, min: size.min, gzip: size.gzip, note };
}

/**
 * Every size figure of BENCHMARKS.md, measured on the current dist/ (run npm run build first).
 */
export async function measureSizes() {
    const dist = join(ROOT, "dist");
    const core = await coreEntrySize(dist);
    const parts = await coreEntryParts(dist);
    const chunkFile = cryptoChunkFile(dist);
    const chunk = await minGzip(readFileSync(chunkFile, "utf8"));
    const chunkWithJose = await bundleApp(`export * from ${JSON.stringify(chunkFile)};`);
    const iife = gzipOnly(join(dist, "laravel-echo-mercure.iife.js"));
    const app = await bundleApp(
        `import Echo from "laravel-echo";\nimport { MercureConnector } from "laravel-echo-mercure";\n` +
            `window.Echo = new Echo({ broadcaster: MercureConnector });\n`,
    );
    const echoApp = `import Echo from "laravel-echo";\nwindow.Echo = new Echo({ broadcaster: "reverb", key: "app-key" });\n`;
    const echoAlone = await bundleApp(echoApp);
    const pusherFile = join(ROOT, "node_modules", "pusher-js", "dist", "web", "pusher.min.js");
    const pusher = existsSync(pusherFile) ? gzipOnly(pusherFile) : null;
    const pusherVersion = pusher === null ? null : JSON.parse(readFileSync(join(ROOT, "node_modules", "pusher-js", "package.json"), "utf8")).version;
    const echoVersion = JSON.parse(readFileSync(join(ROOT, "node_modules", "laravel-echo", "package.json"), "utf8")).version;
    // What a Reverb/Pusher app ships for broadcasting: its Echo bundle plus pusher-js's minified browser build,
    // gzipped together as one download would be compressed (an approximation: two files in practice).
    let reverbApp = null;
    if (pusher !== null) {
        const [echoChunk] = await bundle(echoApp, { inline: true });
        const echoCode = await minifyCode(echoChunk.code);
        const together = echoCode + "\n" + readFileSync(pusherFile, "utf8");
        reverbApp = { min: Buffer.byteLength(together), gzip: gzipSync(together, { level: 9 }).length };
    }
    const rows = [
        row("`dist/index.js` with `dist/chunks/core-*.js`, the core entry (`import { MercureConnector }`, laravel-echo external)", core, "script mode, as the earlier figures"),
        row("lazy crypto chunk (`dist/chunks/jwe-*.js`, our code around jose, jose left external)", chunk, "loaded on the first encrypted channel"),
        row("lazy crypto chunk as an app's bundler emits it (with jose)", chunkWithJose.entry, "what an app's bundler emits for it"),
        row("`dist/laravel-echo-mercure.iife.js` (laravel-echo, the JWE code and jose inlined, shipped minified)", iife, "gzip of the shipped file"),
        row("whole app: `new Echo({ broadcaster: MercureConnector })`, laravel-echo bundled (entry chunk)", app.entry, "rollup + node-resolve, then min+gzip"),
        row(`laravel-echo ${echoVersion} alone in the same app shape (\`broadcaster: "reverb"\`)`, echoAlone.entry, "what Echo itself costs"),
    ];
    if (pusher !== null) {
        rows.push(row(`pusher-js ${pusherVersion} \`dist/web/pusher.min.js\``, pusher, "gzip of the shipped file"));
        rows.push(row(`a Reverb/Pusher app: laravel-echo bundled + pusher-js ${pusherVersion}`, reverbApp, "gzipped as one stream"));
    }
    return {
        core,
        budgetFigures: await budgetFigures(dist),
        parts,
        chunk,
        chunkWithJose: chunkWithJose.entry,
        iife,
        app: app.entry,
        appLazy: app.lazy,
        echoAlone: echoAlone.entry,
        pusher,
        reverbApp,
        rows,
    };
}


// `node bench/size.mjs`: print the budget figures of the current dist/ beside bench/size-budget.json.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
    const figures = await budgetFigures();
    const budget = readBudget();
    const line = (label, size, limit, target) => console.log(`${label.padEnd(44)} ${String(size.gzip).padStart(6)} B min+gzip (${size.min} B min)   budget ${limit} B, issue 32's target ${target} B`);
    line("first render, import { MercureConnector }", figures.firstRender, budget.firstRenderMinGzip, budget.targets.firstRender);
    for (const chunk of figures.firstRender.chunks) console.log(`    ${chunk.name.padEnd(40)} ${String(chunk.gzip).padStart(6)} B`);
    line("whole app, laravel-echo bundled", figures.app, budget.appMinGzip, budget.targets.app);
    line("IIFE, as shipped", figures.iife, budget.iifeGzip, budget.targets.iife);
    console.log("lazy chunks of the first render's app:");
    for (const chunk of figures.lazy) console.log(`    ${chunk.name.padEnd(40)} ${String(chunk.gzip).padStart(6)} B   ${chunk.modules.join(", ")}`);
}
