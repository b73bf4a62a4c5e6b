// The app the first-event scenario loads: the package's ESM build (dist/index.js and its chunks) bundled as an app's
// code-splitting bundler ships it (rollup + node-resolve, as bench/size.mjs measures issue 32's budgets), each chunk
// minified in module mode, written as separate files: the entry with what it imports statically, and one file per
// chunk reached only through `import()`, so that a lazy chunk costs the page a real request. laravel-echo is in the
// entry; jose goes where rollup puts it (with the crypto chunk that alone imports it), as in an app, instead of
// an import map onto its 46 ESM files in node_modules, which no bundled app downloads and which would add
// request hops after the crypto chunk that an app does not have.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import nodeResolve from "@rollup/plugin-node-resolve";
import { rollup } from "rollup";
import { minify } from "terser";
import { MODULE_TERSER_OPTIONS, ROOT } from "../size.mjs";

/**
 * The app's entry: what a Laravel app's `bootstrap.js` imports, exported for the bench page (`encryptedPrivate(echo, name)`:
 * stock Echo's own `encryptedPrivate()` refuses connectors it does not know).
 */
const APP_ENTRY = `import Echo from "laravel-echo";\nimport { encryptedPrivate, MercureConnector } from "laravel-echo-mercure";\nexport { Echo, encryptedPrivate, MercureConnector };\n`;

/** The entry's file name in the site (the chunks go under chunks/). */
export const APP_FILE = "app.js";

/** A chunk's file: its dist/ name without dist's hash (`jwe`, `leadership`), or `shared` for the code the entry and the lazy chunks share. */
function chunkFileName(chunk) {
    const name = chunk.name.startsWith("_") ? "shared" : chunk.name.replace(/-[A-Za-z0-9_-]{8}$/, "");
    return `chunks/${name}-[hash].js`;
}

/**
 * Bundle the app against `distDir` (default this package's dist/), minify each chunk, and write them into `siteDir`
 * (emptied first). Resolves with the files: `{ file, bytes, gzip, lazy }` (`gzip`: what the file costs served gzipped,
 * level 9), `lazy` when only `import()` reaches it.
 */
export async function buildAppSite(siteDir, distDir = join(ROOT, "dist")) {
    const ENTRY = "\0bench-first-event-app";
    const build = await rollup({
        input: ENTRY,
        // A bare import left unresolved would fail in the page only: fail here, naming it.
        onwarn: (warning) => {
            if (warning.code === "UNRESOLVED_IMPORT") throw new Error(`bench app: ${warning.message}`);
        },
        plugins: [
            {
                name: "bench-first-event-app",
                resolveId: (id) => (id === ENTRY ? ENTRY : id === "laravel-echo-mercure" ? join(distDir, "index.js") : null),
                load: (id) => (id === ENTRY ? APP_ENTRY : null),
            },
            // The packages the build imports (laravel-echo, jose) are looked up beside it first, then in this package's
            // node_modules, so a build elsewhere (--compare) that has none of its own resolves them too.
            nodeResolve({ browser: true, rootDir: ROOT, modulePaths: [join(ROOT, "node_modules")] }),
        ],
    });
    let chunks;
    try {
        chunks = (await build.generate({ format: "es", entryFileNames: APP_FILE, chunkFileNames: chunkFileName })).output.filter(
            (item) => item.type === "chunk",
        );
    } finally {
        await build.close();
    }
    const byFile = new Map(chunks.map((chunk) => [chunk.fileName, chunk]));
    const eager = new Set();
    const pending = [APP_FILE];
    while (pending.length > 0) {
        const file = pending.pop();
        if (eager.has(file)) continue;
        eager.add(file);
        pending.push(...byFile.get(file).imports.filter((imported) => byFile.has(imported)));
    }
    rmSync(siteDir, { recursive: true, force: true });
    const files = [];
    for (const chunk of chunks) {
        const code = (await minify(chunk.code, { ...MODULE_TERSER_OPTIONS })).code;
        const path = join(siteDir, chunk.fileName);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, code);
        files.push({ file: chunk.fileName, bytes: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).length, lazy: !eager.has(chunk.fileName) });
    }
    return files.sort((a, b) => Number(a.lazy) - Number(b.lazy) || a.file.localeCompare(b.file));
}
