import { svelte } from "@sveltejs/vite-plugin-svelte";
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        reporters: ["default", "./test/support/summary-reporter.ts"],
        // Builds the reference Mercure hubs (Go) once per run; see test/support/reference-hub.ts.
        globalSetup: ["./test/support/global-setup.ts"],
        // Two files at a time on the 2-core machine when vitest runs alone. Vitest runs the browser project (one file
        // at a time, see below) after all the others, so `npm test` (test/support/run-all.mjs) runs it in a process
        // of its own, beside a second one for the other projects.
        maxWorkers: 2,
        projects: [
            {
                // Compiles the Svelte components of test/unit/svelte/ (laravel-echo-mercure/svelte's component tests).
                plugins: [svelte({ configFile: false })],
                // Svelte's client build (mount, onDestroy in components), as a browser bundler resolves it.
                resolve: { conditions: ["browser"] },
                test: {
                    name: "unit",
                    include: ["test/unit/**/*.test.ts"],
                    setupFiles: ["./test/support/loaded-capabilities.ts", "./test/support/loaded-adapter.ts"],
                    environment: "happy-dom",
                    environmentOptions: { happyDOM: { url: "https://app.test/dashboard" } },
                },
            },
            {
                // The seeded simulation (test/sim/, issue 49): tabs of several users on one in-memory hub, random actions,
                // invariants after each step. Its own project: it loads the lazy chunks through its own loader
                // (test/sim/chunks.ts), which a page's loads fail or delay on purpose, instead of the unit project's preloaded ones.
                resolve: { conditions: ["browser"] },
                test: {
                    name: "sim",
                    include: ["test/sim/**/*.test.ts"],
                    environment: "happy-dom",
                    environmentOptions: { happyDOM: { url: "https://app.test/dashboard" } },
                    testTimeout: 600_000,
                },
            },
            // The testing kit (laravel-echo-mercure/testing) and the README's component tests written with it, once
            // under happy-dom and once under jsdom: the kit must behave the same in both.
            ...(["happy-dom", "jsdom"] as const).map((environment) => ({
                // The examples import the package by name, as an app does: from the sources here (no build needed).
                resolve: {
                    alias: [
                        { find: /^laravel-echo-mercure\/(testing|react|vue)$/, replacement: resolve("src/$1/index.ts") },
                        { find: /^laravel-echo-mercure$/, replacement: resolve("src/index.ts") },
                    ],
                },
                test: {
                    name: `kit-${environment}`,
                    include: ["test/kit/**/*.test.{ts,tsx}"],
                    environment,
                },
            })),
            {
                test: {
                    name: "dev",
                    include: ["test/dev/**/*.test.ts"],
                    environment: "node",
                },
            },
            {
                test: {
                    name: "e2e",
                    include: ["test/e2e/**/*.test.ts"],
                    setupFiles: ["./test/support/reference-hub-log.ts"],
                    environment: "node",
                    testTimeout: 30_000,
                    hookTimeout: 30_000,
                },
            },
            {
                // Apps built from the packed package in a folder outside the repository (issue 51): one npm install, one
                // Chromium, files after one another. `npm test` runs this project in the lane that finishes first.
                test: {
                    name: "consumer",
                    include: ["test/consumer/**/*.test.ts"],
                    environment: "node",
                    testTimeout: 240_000,
                    hookTimeout: 600_000,
                    fileParallelism: false,
                },
            },
            {
                test: {
                    name: "browser",
                    include: ["test/browser/**/*.test.ts"],
                    setupFiles: ["./test/support/reference-hub-log.ts"],
                    environment: "node",
                    testTimeout: 60_000,
                    hookTimeout: 60_000,
                    fileParallelism: false,
                },
            },
        ],
    },
});
