// Builds every published file from src/ (see "exports" in package.json):
//   dist/index.js                         the connector (ESM), laravel-echo left external (a peer dependency)
//   dist/chunks/core-*.js                 the code dist/index.js shares with the lazy chunks (imported statically)
//   dist/chunks/*.js                      lazily loaded code (the JWE code of encrypted channels, whispers), ESM,
//                                         jose left external (a dependency)
//   dist/index.cjs + dist/chunks/*.cjs    the connector (CJS), laravel-echo's base classes inside (see below)
//   dist/index.d.ts + dist/index.d.cts    bundled types for ESM and CJS consumers
//   dist/laravel-echo-mercure.iife.js     the browser build for a <script> tag, laravel-echo inside: window.EchoMercure,
//                                         minified (terser) with its source map; dist/iife/*.js: its parts loaded on
//                                         first use (ES modules, through import(), see rollup.iife.mjs)
//   dist/dev/index.js + .d.ts, cli.js     the Node-only dev stack (hub, Laravel-compatible server, CLI),
//                                         urlpattern-polyfill inside
//   dist/react/index.js + .d.ts           configureEcho and useEchoEncrypted over @laravel/echo-react (ESM only),
//   dist/vue/index.js + .d.ts             over @laravel/echo-vue; both import the core as ../index.js and
//   dist/svelte/index.js + .d.ts          the same surface for Svelte 5 on a MercureEcho of its own (ESM only),
//   dist/frameworks/shared.js             the code they share
//   dist/no-pusher/index.js + .d.ts       what a Mercure-only app aliases pusher-js to
//   dist/vite/index.js + .d.ts            the Vite plugin that points pusher-js at no-pusher when the app lacks it
//   dist/http/index.js + .d.ts            the X-Socket-ID helpers for fetch, axios instances and Inertia (ESM only,
//                                         nothing of the core inside)
//   dist/testing/index.js + .d.ts         createTestEcho, the in-memory hub for an app's unit tests, built with the core
//                                         so it shares the core and its lazy chunks; dist/testing/index.cjs + .d.cts
//                                         the same for CommonJS (Jest's default), with the CJS core; dist/testing/e2e.js
//                                         + .d.ts: startTestStack over the dev stack (Node.js only)
//   dist/discovery/index.js + .d.ts       parseLinkHeader and discoverFromDocument (ESM only): outside the core
//                                         entry, which reaches the same code through its lazy discovery chunk
// The minified files (the IIFE and its parts in dist/iife/) have a .map with the sources inside (sourcesContent):
// src/ is not published, and a map that names missing files makes Vite and Vitest warn once per file. The other
// builds are not minified (readable as they are) and ship no map.
import nodeResolve from "@rollup/plugin-node-resolve";
import terser from "@rollup/plugin-terser";
import typescript from "@rollup/plugin-typescript";
import { builtinModules } from "node:module";
import { dirname, resolve } from "node:path";
import { dts } from "rollup-plugin-dts";
import { IIFE_INPUT, IIFE_SHARED, iifeBridge, iifeGraph, iifeSiblings, siblingInputs } from "./rollup.iife.mjs";

// `jose` (a dependency) is reached only from src/crypto/jwe.ts, which src/crypto/load.ts imports with a
// dynamic import(): rollup makes that a separate chunk, so dist/index.js holds neither our JWE code nor
// jose. The ESM build leaves jose external: the app's bundler resolves it (deduplicated with the app's
// own copy, if any) and, since the chunk that imports it is itself only reached through import(), keeps
// it out of the app's initial bundle too. laravel-echo is a peer.
const esmExternal = (id) => id === "laravel-echo" || id === "jose" || id.startsWith("jose/");
// The chunk of code the entry shares with the lazy chunks is called core: named so by manualChunks in the ESM build,
// after the entry (index) by rollup in the CJS build.
const chunkFileNames = (extension) => (chunk) => `chunks/${chunk.name === "index" && chunk.isDynamicEntry === false ? "core" : "[name]"}-[hash].${extension}`;
const ts = () => typescript({ tsconfig: "./tsconfig.build.json", outDir: undefined, declaration: false, noEmitOnError: true });
const nodeExternal = (id) => id.startsWith("node:") || builtinModules.includes(id) || id === "laravel-echo";

// Only the minified builds ship source maps, with their sources inside: see the top of this file. The bench builds the
// others with maps too (BENCH_SOURCEMAPS=1, `npm run bench`): its breakdown of the core entry by part of src/ reads them.
const sourcemap = process.env["BENCH_SOURCEMAPS"] === "1";
const sourcemapExcludeSources = false;
const minifiedSourcemap = true;

// urlpattern-polyfill (a devDependency) is bundled into the dev build, the only code that uses it (the dev
// hub's match_urlpattern on Node.js < 23.8), so that installing the package for a browser app carries no
// dependency it never runs. Its MIT licence asks that the notice travel with the copy.
const URLPATTERN_NOTICE = `/*! urlpattern-polyfill 10.1.0 (bundled into the dev hub) | Copyright 2020 Intel Corporation | MIT licence:
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
 * documentation files (the "Software"), to deal in the Software without restriction, including without limitation
 * the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of the Software, and
 * to permit persons to whom the Software is furnished to do so, subject to the following conditions: The above
 * copyright notice and this permission notice shall be included in all copies or substantial portions of the
 * Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
 * LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT
 * SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION
 * OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 * DEALINGS IN THE SOFTWARE. */`;
const urlpatternBanner = (chunk) => (chunk.moduleIds.some((id) => id.includes("/node_modules/urlpattern-polyfill/")) ? URLPATTERN_NOTICE : "");

// The entry exports the public API only ("strict"): the code the lazy chunks share with the core (MercureError,
// topics, the stream switch, ...) goes into a chunk of its own, dist/chunks/core-*.js, which dist/index.js imports
// statically and the lazy chunks import too, instead of dist/index.js exporting internals under short names.
const preserveEntrySignatures = "strict";

// The framework entries and the pusher-js stand-in use the core through `../index` (`./index`): they import
// dist/index.js instead of copying the core, so an app that imports the core and an entry runs one
// MercureConnector class, and the core entry stays as it is. Every file of theirs is one folder below dist/, so
// `../index.js` is the core from each (written as is: "absolute" keeps rollup from rewriting it). Their own
// dependencies are peers: external.
/** A plugin that leaves the imports of `source` (without extension) external, written as `id` (one folder below dist/). */
const asSibling = (name, source, id) => ({
    name,
    resolveId(imported, importer) {
        if (importer === undefined || !imported.startsWith(".")) return null;
        const target = resolve(dirname(importer), imported).replace(/\.ts$/, "");
        return target === source ? { id, external: "absolute" } : null;
    },
});
const coreAsSibling = () => asSibling("core-as-sibling", resolve("src/index"), "../index.js");
// The modules src/index.ts reaches through static imports, src/index.ts itself excepted: the core chunk
// (dist/chunks/core-*.js) that dist/index.js, the testing kit and the lazy chunks import. Without this rule, rollup
// would split the core into one chunk per set of importers once the kit is an entry of the same build.
const CORE_ENTRY = resolve("src/index.ts");
let coreModuleIds = null;
const coreModules = (getModuleInfo) => {
    if (coreModuleIds !== null) return coreModuleIds;
    coreModuleIds = new Set();
    const visit = (id) => {
        const info = getModuleInfo(id);
        if (info === null || info.isExternal || coreModuleIds.has(id)) return;
        coreModuleIds.add(id);
        for (const imported of info.importedIds) visit(imported);
    };
    visit(CORE_ENTRY);
    coreModuleIds.delete(CORE_ENTRY);
    return coreModuleIds;
};
// The kit's end-to-end entry (dist/testing/e2e.js) imports the dev stack as ../dev/index.js rather than copying it.
const devAsSibling = () => asSibling("dev-as-sibling", resolve("src/dev/index"), "../dev/index.js");
const frameworkExternal = (id) => ["laravel-echo", "@laravel/echo-react", "@laravel/echo-vue", "react", "vue", "svelte", "svelte/reactivity"].includes(id);
const frameworkEntries = {
    "react/index": "src/react/index.ts",
    "vue/index": "src/vue/index.ts",
    "svelte/index": "src/svelte/index.ts",
    "no-pusher/index": "src/no-pusher.ts",
    "discovery/index": "src/discovery/public.ts",
    "http/index": "src/http/index.ts",
};

// The IIFE's module graph (which modules it runs at once, which it loads on first use), read once for its two builds.
const iifeModules = await iifeGraph([nodeResolve({ browser: true }), ts()]);

export default [
    {
        // The testing kit (dist/testing/index.js) is built with the core so that it imports the core and the lazy
        // chunks the core loads (whispers, diagnostics, isolation) as the very same files: loaded with the kit, the
        // connector's import() of them settles in microtasks, which the kit's hub.flush() runs. dist/index.js is
        // unchanged by it (the size check holds it).
        input: { index: "src/index.ts", "testing/index": "src/testing/index.ts" },
        preserveEntrySignatures,
        external: esmExternal,
        plugins: [ts()],
        output: {
            dir: "dist",
            format: "es",
            sourcemap,
            sourcemapExcludeSources,
            entryFileNames: "[name].js",
            chunkFileNames: chunkFileNames("js"),
            manualChunks: (id, { getModuleInfo }) => (coreModules(getModuleInfo).has(id) ? "core" : undefined),
        },
    },
    {
        // laravel-echo 2.5.0's own `require` entry is a .js file inside a "type": "module" package, which
        // Node.js and bundlers load as ESM, so `require("laravel-echo")` yields nothing usable. The CJS
        // build therefore carries laravel-echo's base classes inside; stock Echo accepts any connector
        // constructor, so a CJS app's own Echo still works with it.
        // The lazy JWE code is a separate chunk here too, with jose inside it (jose 6 ships ESM only, and
        // this build already carries its dependencies): Node.js loads it only when an encrypted channel
        // needs it. A bundler that follows `require` inlines that chunk; bundlers use the ESM build.
        // The testing kit's CommonJS entry (dist/testing/index.cjs, for Jest's default CommonJS mode) is built with it, for
        // the reason the ESM kit is built with the ESM core.
        input: { index: "src/index.ts", "testing/index": "src/testing/commonjs.ts" },
        preserveEntrySignatures,
        plugins: [nodeResolve(), ts()],
        output: {
            dir: "dist",
            format: "cjs",
            sourcemap,
            sourcemapExcludeSources,
            exports: "named",
            entryFileNames: "[name].cjs",
            chunkFileNames: chunkFileNames("cjs"),
            manualChunks: (id, { getModuleInfo }) => (coreModules(getModuleInfo).has(id) ? "core" : undefined),
        },
    },
    {
        // The IIFE's lazily loaded parts, as ES modules beside it (dist/iife/): see rollup.iife.mjs. jose is inside the
        // JWE sibling; every module the IIFE itself runs is read from the IIFE, never copied.
        input: siblingInputs(iifeModules),
        plugins: [iifeBridge(iifeModules), nodeResolve({ browser: true }), ts()],
        output: {
            dir: "dist/iife",
            format: "es",
            sourcemap: minifiedSourcemap,
            entryFileNames: "[name].js",
            // What the siblings read from the IIFE, in one chunk, named without a hash like the siblings: the IIFE asks for it
            // beside the first sibling it loads (see rollup.iife.mjs), so that the sibling's import of it is no second round trip.
            chunkFileNames: (chunk) => (chunk.name === IIFE_SHARED ? `${IIFE_SHARED}.js` : "[name]-[hash].js"),
            manualChunks: (id) => (id.startsWith("\0iife-bridge:") ? IIFE_SHARED : undefined),
            plugins: [terser({ compress: { passes: 2 }, mangle: true, module: true })],
        },
    },
    {
        input: IIFE_INPUT,
        plugins: [iifeSiblings(iifeModules), nodeResolve({ browser: true }), ts()],
        // One file for a <script> tag, with what every page runs; the parts a page may never use (presence, encrypted
        // channels, whispers, the tabs' engine, discovery, diagnostics) load on first use from dist/iife/, next to it.
        // Nothing bundles it further, so it ships minified; its source map leads back to src/ (and to laravel-echo),
        // and the licence comments (/*! ... */) are kept.
        output: {
            file: "dist/laravel-echo-mercure.iife.js",
            format: "iife",
            name: "EchoMercure",
            sourcemap: minifiedSourcemap,
            plugins: [terser({ compress: { passes: 2 }, mangle: true })],
        },
    },
    {
        input: { index: "src/dev/index.ts", cli: "src/dev/cli.ts" },
        external: nodeExternal,
        // The dev stack takes MercureError and rawUrlEncode from the core entry; the core's import of laravel-echo
        // (the connector's base classes) is not needed for them, so the dev build does not load laravel-echo.
        treeshake: { moduleSideEffects: (id, external) => !(external && id === "laravel-echo") },
        plugins: [nodeResolve({ exportConditions: ["node"] }), ts()],
        output: { dir: "dist/dev", format: "es", sourcemap, sourcemapExcludeSources, entryFileNames: "[name].js", chunkFileNames: "shared.js", banner: urlpatternBanner },
    },
    {
        input: "src/index.ts",
        external: ["laravel-echo"],
        plugins: [dts()],
        output: [
            { file: "dist/index.d.ts", format: "es" },
            { file: "dist/index.d.cts", format: "es" },
        ],
    },
    {
        // One build (one TypeScript program) for these entries: the code React, Vue and Svelte share (src/frameworks/)
        // becomes dist/frameworks/shared.js.
        input: frameworkEntries,
        external: frameworkExternal,
        plugins: [coreAsSibling(), ts()],
        // Everything of src/frameworks/ in that one chunk, whichever entries use which part of it.
        output: {
            dir: "dist",
            format: "es",
            sourcemap,
            sourcemapExcludeSources,
            entryFileNames: "[name].js",
            chunkFileNames: "frameworks/shared.js",
            manualChunks: (id) => (id.includes("/src/frameworks/") ? "shared" : undefined),
        },
    },
    ...Object.entries(frameworkEntries).map(([name, input]) => ({
        input,
        external: frameworkExternal,
        plugins: [coreAsSibling(), dts()],
        output: { file: `dist/${name}.d.ts`, format: "es" },
    })),
    {
        // The kit's types name the core's classes (MercureEcho, MercureConnector) from ../index.js, as the framework entries do.
        input: "src/testing/index.ts",
        external: (id) => id === "laravel-echo",
        plugins: [coreAsSibling(), dts()],
        output: { file: "dist/testing/index.d.ts", format: "es" },
    },
    {
        // The same types for the CommonJS kit, naming the CommonJS core's (../index.cjs, typed by ../index.d.cts).
        input: "src/testing/commonjs.ts",
        external: (id) => id === "laravel-echo",
        plugins: [asSibling("core-as-cjs-sibling", resolve("src/index"), "../index.cjs"), dts()],
        output: { file: "dist/testing/index.d.cts", format: "es" },
    },
    {
        input: "src/dev/index.ts",
        external: nodeExternal,
        plugins: [dts()],
        output: { file: "dist/dev/index.d.ts", format: "es" },
    },
    {
        // The end-to-end half of the testing kit, Node.js only: it uses the dev stack through ../dev/index.js (one copy).
        input: "src/testing/e2e.ts",
        external: nodeExternal,
        plugins: [devAsSibling(), ts()],
        output: { file: "dist/testing/e2e.js", format: "es", sourcemap, sourcemapExcludeSources },
    },
    {
        input: "src/testing/e2e.ts",
        external: nodeExternal,
        plugins: [devAsSibling(), dts()],
        output: { file: "dist/testing/e2e.d.ts", format: "es" },
    },
    {
        // The Vite plugin runs in Node.js inside the app's build, never in a page.
        input: "src/vite/index.ts",
        external: (id) => nodeExternal(id) || id === "vite",
        plugins: [ts()],
        output: { file: "dist/vite/index.js", format: "es", sourcemap, sourcemapExcludeSources, exports: "named" },
    },
    {
        input: "src/vite/index.ts",
        external: (id) => nodeExternal(id) || id === "vite",
        plugins: [dts()],
        output: { file: "dist/vite/index.d.ts", format: "es" },
    },
];
