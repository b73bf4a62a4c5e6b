import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import type { Plugin } from "vite";

/*
 * `laravel-echo-mercure/vite`: the Vite plugin of a Mercure app built with `@laravel/echo-react` or
 * `@laravel/echo-vue`. Those packages import `pusher-js` at module top, as an optional peer; in an app that does not
 * install it, `vite build` succeeds and the page then throws `Could not resolve "pusher-js"` when it loads (a blank
 * page). The plugin points `pusher-js` at `laravel-echo-mercure/no-pusher` instead, unless the app installed
 * `pusher-js` (it then also uses Pusher or Reverb, and keeps it).
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
            // An exact match, so that `pusher-js/with-encryption` and the like are left to fail loudly.
            return { resolve: { alias: [{ find: /^pusher-js$/, replacement: NO_PUSHER }] } };
        },
    };
}

export { echoMercure };
