import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import type { Plugin } from "vite";

/*
 * `laravel-echo-mercure/vite`: the Vite plugin of a Mercure app built with `@laravel/echo-react` or
 * `@laravel/echo-vue`. Those packages import `pusher-js` at module top, as an optional peer; in an app that does not
 * install it, `vite build` succeeds and the page then throws `Could not resolve "pusher-js"` when it loads (a blank
 * page). The plugin points `pusher-js` at `laravel-echo-mercure/no-pusher` instead, unless the app installed
 * `pusher-js` (it then also uses Pusher or Reverb, and keeps it). Vitest runs a package of `node_modules` in Node.js
 * as it is (it "externalises" it), where no alias applies: a component test importing `laravel-echo-mercure/react`
 * then fails with `Cannot find package 'pusher-js'`. So the plugin also has Vitest process this package and the
 * framework packages through Vite (`test.server.deps.inline`), where the alias applies.
 */

/** What the plugin does with `pusher-js`. */
export interface EchoMercurePluginOptions {
    /**
     * `"auto"` (default): alias `pusher-js` to `laravel-echo-mercure/no-pusher` when the app cannot resolve
     * `pusher-js` from its root; `"alias"`: always; `"keep"`: never (the app uses Pusher or Reverb too).
     */
    pusher?: "auto" | "alias" | "keep";
}

/** The module a Mercure-only app gets where the framework packages import `pusher-js`. */
export const NO_PUSHER = "laravel-echo-mercure/no-pusher";

/**
 * The packages Vitest must run through Vite for the alias to reach `@laravel/echo-react`'s and `@laravel/echo-vue`'s
 * `import "pusher-js"`: those two, and this package, which imports them.
 */
export const VITEST_INLINE = ["laravel-echo-mercure", "@laravel/echo-react", "@laravel/echo-vue"] as const;

/** What the plugin adds to the app's config: Vite's alias, and Vitest's `test` key (which Vite's types do not know). */
export interface EchoMercureConfig {
    /** `pusher-js` → `laravel-echo-mercure/no-pusher`. */
    resolve: { alias: Array<{ find: RegExp; replacement: string }> };
    /** Vitest's option: the packages it processes through Vite rather than loading them in Node.js as they are. */
    test: { server: { deps: { inline: string[] } } };
}

/** Whether `pusher-js` resolves from `root`, as the app's own imports would. */
export function resolvesPusher(root: string): boolean {
    try {
        createRequire(join(resolve(root), "package.json")).resolve("pusher-js");
        return true;
    } catch {
        return false;
    }
}

/**
 * The plugin: add it to `plugins` in `vite.config.*` beside the framework's own
 * (`plugins: [laravel(…), react(), echoMercure()]`).
 */
export default function echoMercure(options: EchoMercurePluginOptions = {}): Plugin {
    const mode = options.pusher ?? "auto";
    return {
        name: "laravel-echo-mercure",
        enforce: "pre",
        config(config) {
            const alias = mode === "alias" || (mode === "auto" && !resolvesPusher(config.root ?? process.cwd()));
            if (!alias) return undefined;
            const added: EchoMercureConfig = {
                // An exact match, so that `pusher-js/with-encryption` and the like are left to fail loudly.
                resolve: { alias: [{ find: /^pusher-js$/, replacement: NO_PUSHER }] },
                // Vite merges these lists with the app's own.
                test: { server: { deps: { inline: [...VITEST_INLINE] } } },
            };
            return added;
        },
    };
}

export { echoMercure };
