import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { UserConfig } from "vite";
import { afterAll, describe, expect, it } from "vitest";
import echoMercure, { NO_PUSHER, resolvesPusher, VITEST_INLINE } from "../../dist/vite/index.js";

// laravel-echo-mercure/vite, as published: it points pusher-js at no-pusher in an app that does not install
// pusher-js, and leaves an installed one alone. (test/browser/frameworks.test.ts builds and runs apps with it.)

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "vite-plugin-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** An app folder with a package.json and, when `withPusher`, an installed pusher-js. */
function app(name: string, withPusher: boolean): string {
    const root = join(work, name);
    mkdirSync(root);
    writeFileSync(join(root, "package.json"), JSON.stringify({ name, private: true }));
    if (withPusher) {
        const pusher = join(root, "node_modules", "pusher-js");
        mkdirSync(pusher, { recursive: true });
        writeFileSync(join(pusher, "package.json"), JSON.stringify({ name: "pusher-js", version: "8.0.0", main: "index.js" }));
        writeFileSync(join(pusher, "index.js"), "module.exports = class Pusher {};\n");
    }
    return root;
}

/** What the plugin's config hook adds for an app at `root`. */
function configFor(root: string, options?: Parameters<typeof echoMercure>[0]): unknown {
    const plugin = echoMercure(options);
    const hook = plugin.config;
    if (typeof hook !== "function") throw new Error("the plugin has no config hook");
    return hook.call({} as never, { root } as UserConfig, { command: "build", mode: "production" });
}

describe("laravel-echo-mercure/vite", () => {
    const bare = app("mercure-only", false);
    const withPusher = app("reverb-too", true);

    it("tells whether pusher-js resolves from the app's root", () => {
        expect(resolvesPusher(bare)).toBe(false);
        expect(resolvesPusher(withPusher)).toBe(true);
        expect(resolvesPusher(ROOT), "this repository installs pusher-js").toBe(true);
    });

    it("aliases exactly pusher-js to no-pusher when the app does not install it, and nothing when it does", () => {
        const added = configFor(bare) as { resolve: { alias: Array<{ find: RegExp; replacement: string }> } };
        expect(added.resolve.alias).toHaveLength(1);
        const [alias] = added.resolve.alias;
        expect(alias!.replacement).toBe(NO_PUSHER);
        expect(alias!.find.test("pusher-js")).toBe(true);
        expect(alias!.find.test("pusher-js/with-encryption")).toBe(false);
        expect(configFor(withPusher)).toBeUndefined();
    });

    it("has Vitest run this package and the framework packages through Vite where the alias is added (issue 51: Vitest loads node_modules in Node.js as they are, where no alias applies)", () => {
        const added = configFor(bare) as { test: { server: { deps: { inline: string[] } } } };
        expect(added.test.server.deps.inline).toEqual(["laravel-echo-mercure", "@laravel/echo-react", "@laravel/echo-vue"]);
        expect(VITEST_INLINE).toEqual(added.test.server.deps.inline);
    });

    it("follows an explicit choice over what is installed", () => {
        expect(configFor(withPusher, { pusher: "alias" })).toEqual({
            resolve: { alias: [{ find: /^pusher-js$/, replacement: NO_PUSHER }] },
            test: { server: { deps: { inline: [...VITEST_INLINE] } } },
        });
        expect(configFor(bare, { pusher: "keep" })).toBeUndefined();
    });

    it("is a pre plugin named after the package, and NO_PUSHER is an export of the package", async () => {
        const plugin = echoMercure();
        expect(plugin.name).toBe("laravel-echo-mercure");
        expect(plugin.enforce).toBe("pre");
        const manifest = (await import("../../package.json", { with: { type: "json" } })).default as { exports: Record<string, unknown> };
        expect(Object.keys(manifest.exports)).toContain("./" + NO_PUSHER.split("/")[1]);
        expect(Object.keys(manifest.exports)).toContain("./vite");
    });
});
