// Builds every published file from src/ (see "exports" in package.json):
//   dist/index.js                         the connector (ESM), laravel-echo left external (a peer dependency)
//   dist/chunks/*.js                      lazily loaded code (the JWE code of encrypted channels, whispers), ESM
//   dist/index.cjs + dist/chunks/*.cjs    the connector (CJS), laravel-echo's base classes inside (see below)
//   dist/index.d.ts + dist/index.d.cts    bundled types for ESM and CJS consumers
//   dist/laravel-echo-mercure.iife.js     self-contained browser build, laravel-echo inside: window.EchoMercure
//   dist/dev/index.js + .d.ts, cli.js     the Node-only dev stack (hub, Laravel-compatible server, CLI)
import nodeResolve from "@rollup/plugin-node-resolve";
import typescript from "@rollup/plugin-typescript";
import { builtinModules } from "node:module";
import { dts } from "rollup-plugin-dts";

// `jose` (a dependency) is reached only from src/crypto/jwe.ts, which src/crypto/load.ts imports with a
// dynamic import(): rollup makes that a separate chunk, so dist/index.js holds neither our JWE code nor
// jose. The ESM build leaves jose external: the app's bundler resolves it (deduplicated with the app's
// own copy, if any) and, since the chunk that imports it is itself only reached through import(), keeps
// it out of the app's initial bundle too.
const esmExternal = (id) => id === "laravel-echo" || id === "jose" || id.startsWith("jose/");
const chunkFileNames = (extension) => `chunks/[name]-[hash].${extension}`;
const ts = () => typescript({ tsconfig: "./tsconfig.build.json", outDir: undefined, declaration: false, noEmitOnError: true });
const nodeExternal = (id) => id.startsWith("node:") || builtinModules.includes(id) || id === "urlpattern-polyfill" || id.startsWith("urlpattern-polyfill/") || id === "laravel-echo";

// The whisper chunk uses modules of the core (MercureError, topics): the core exports them to it under
// short internal names, beside its public exports, rather than becoming a facade of a shared chunk.
const preserveEntrySignatures = "allow-extension";

export default [
    {
        input: "src/index.ts",
        preserveEntrySignatures,
        external: esmExternal,
        plugins: [ts()],
        output: { dir: "dist", format: "es", sourcemap: true, entryFileNames: "index.js", chunkFileNames: chunkFileNames("js") },
    },
    {
        // laravel-echo 2.5.0's own `require` entry is a .js file inside a "type": "module" package, which
        // Node.js and bundlers load as ESM, so `require("laravel-echo")` yields nothing usable. The CJS
        // build therefore carries laravel-echo's base classes inside; stock Echo accepts any connector
        // constructor, so a CJS app's own Echo still works with it.
        // The lazy JWE code is a separate chunk here too, with jose inside it (jose 6 ships ESM only, and
        // this build already carries its dependencies): Node.js loads it only when an encrypted channel
        // needs it. A bundler that follows `require` inlines that chunk; bundlers use the ESM build.
        input: "src/index.ts",
        preserveEntrySignatures,
        plugins: [nodeResolve(), ts()],
        output: { dir: "dist", format: "cjs", sourcemap: true, exports: "named", entryFileNames: "index.cjs", chunkFileNames: chunkFileNames("cjs") },
    },
    {
        input: "src/iife.ts",
        plugins: [nodeResolve({ browser: true }), ts()],
        // One file for a <script> tag: the lazy JWE code and jose are inlined (an IIFE cannot load chunks).
        output: { file: "dist/laravel-echo-mercure.iife.js", format: "iife", name: "EchoMercure", sourcemap: true, inlineDynamicImports: true },
    },
    {
        input: { index: "src/dev/index.ts", cli: "src/dev/cli.ts" },
        external: nodeExternal,
        plugins: [ts()],
        output: { dir: "dist/dev", format: "es", sourcemap: true, entryFileNames: "[name].js", chunkFileNames: "shared.js" },
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
        input: "src/dev/index.ts",
        external: nodeExternal,
        plugins: [dts()],
        output: { file: "dist/dev/index.d.ts", format: "es" },
    },
];
