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
    const code = readFileSync(join(distDir, "index.js"), "utf8");
    const map = JSON.parse(readFileSync(join(distDir, "index.js.map"), "utf8"));
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

/** The core entry's min+gzip size in `distDir` (default: this package's dist/). */
export async function coreEntrySize(distDir = join(ROOT, "dist")) {
    return minGzip(readFileSync(join(distDir, "index.js"), "utf8"));
}

/** The budget file's content: `{ coreEntryMinGzip, issueTarget, note }`. */
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
        row("`dist/index.js`, the core entry (`import { MercureConnector }`, laravel-echo external)", core, "what the budget limits"),
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

