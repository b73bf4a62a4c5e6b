// Builds every published file from src/ (see "exports" in package.json):
//   dist/index.js                         the connector (ESM), laravel-echo left external (a peer dependency)
//   dist/index.cjs                        the connector (CJS), laravel-echo's base classes inside (see below)
//   dist/index.d.ts + dist/index.d.cts    bundled types for ESM and CJS consumers
//   dist/laravel-echo-mercure.iife.js     self-contained browser build, laravel-echo inside: window.EchoMercure
//   dist/dev/index.js + .d.ts, cli.js     the Node-only dev stack (hub, Laravel-compatible server, CLI)
import nodeResolve from "@rollup/plugin-node-resolve";
import typescript from "@rollup/plugin-typescript";
import { builtinModules } from "node:module";
import { dts } from "rollup-plugin-dts";

const ts = () => typescript({ tsconfig: "./tsconfig.build.json", outDir: undefined, declaration: false, noEmitOnError: true });
const nodeExternal = (id) => id.startsWith("node:") || builtinModules.includes(id) || id === "urlpattern-polyfill" || id.startsWith("urlpattern-polyfill/") || id === "laravel-echo";

export default [
    {
        input: "src/index.ts",
        external: ["laravel-echo"],
        plugins: [ts()],
        output: { file: "dist/index.js", format: "es", sourcemap: true },
    },
    {
        // laravel-echo 2.5.0's own `require` entry is a .js file inside a "type": "module" package, which
        // Node.js and bundlers load as ESM, so `require("laravel-echo")` yields nothing usable. The CJS
        // build therefore carries laravel-echo's base classes inside; stock Echo accepts any connector
        // constructor, so a CJS app's own Echo still works with it.
        input: "src/index.ts",
        plugins: [nodeResolve(), ts()],
        output: { file: "dist/index.cjs", format: "cjs", sourcemap: true, exports: "named" },
    },
    {
        input: "src/iife.ts",
        plugins: [nodeResolve({ browser: true }), ts()],
        output: { file: "dist/laravel-echo-mercure.iife.js", format: "iife", name: "EchoMercure", sourcemap: true },
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
