import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { build } from "vite";
import { describe, expect, it } from "vitest";
import { DEFAULT_TOPIC_PREFIX } from "../../src/dev/laravel/options";
import { channelTopic } from "../../src/dev/laravel/topics";
import { startDevServer } from "../../src/dev/server";
import { DEV_HUB_ONLY } from "../support/hubs";
import { describeInChromium, type BrowserSuiteOptions } from "./support/suite";
import { waitUntil } from "./support/wait";

// issue 9: a React app and a Vue app, each built with Vite from test/browser/fixtures/ into a temporary app
// directory whose node_modules holds this package as an installed dependency, served by the dev server, use
// configureEcho({ broadcaster: "mercure" }) and the framework packages' hooks in Chromium.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** The lines of Vite configuration docs/react-and-vue.md's "React" and "Vue" show beside the framework's own, written as is into each app's vite.config.mjs. */
const PLUGIN_IMPORT_LINE = `import echoMercure from "laravel-echo-mercure/vite";`;
const pluginsLine = (framework: string) => `plugins: [${framework}(), echoMercure()],`;

/** Strings of pusher-js's browser build that survive minification; none may be in an app's bundle. */
const PUSHER_MARKERS = ["sockjs.pusher.com", "pusher:subscribe"];

/** The §6.5 master key, as Laravel's `encryption_key`. */
const ENCRYPTION_KEY = "base64:" + createHash("sha256").update("frameworks-test-key").digest().toString("base64");
const ANN = 1;

/** The hub topic of a channel. */
const topic = (channel: string) => channelTopic(DEFAULT_TOPIC_PREFIX, channel);

/** The `match` parameters of a recorded subscribe request. */
const matchesOf = (query: string) => new URLSearchParams(query).getAll("match");

/** The apps: their fixture folder, Vite plugin, `.env`, and the host their configureEcho must end up with. */
const APPS = [
    { name: "react", plugin: "@vitejs/plugin-react", env: "VITE_MERCURE_HUB_URL=/.well-known/mercure\n", host: (_origin: string) => "/.well-known/mercure" },
    { name: "vue", plugin: "@vitejs/plugin-vue", env: "", host: (origin: string) => `${origin}/.well-known/mercure` },
] as const;

describe("docs/react-and-vue.md's React and Vue sections", () => {
    it("show exactly the plugin lines the apps below are built with", () => {
        const readme = readFileSync(join(ROOT, "docs/react-and-vue.md"), "utf8");
        for (const [section, framework] of [["React", "react"], ["Vue", "vue"]] as const) {
            const body = readme.split(`\n## ${section}\n`)[1]?.split("\n## ")[0] ?? "";
            const lines = body.split("\n").map((line) => line.trim());
            expect(lines, section).toContain(PLUGIN_IMPORT_LINE);
            expect(lines, section).toContain(pluginsLine(framework));
        }
    });
});

/** The temporary app folder of the suite, made in its set-up. */
let work: string | undefined;

/** The apps built in the suite's set-up, before Chromium starts, and served from `work/out` by the dev server. */
const SUITE: BrowserSuiteOptions = {
    builds: ["dist/react/index.js", "dist/vue/index.js"],
    async prepare() {
        work = mkdtempSync(join(tmpdir(), "frameworks-test-"));
        installedModules(work);
        // Both builds at once: each is mostly waiting for the other core on a 2-core machine.
        await Promise.all(APPS.map((app) => buildApp(app, join(work!, app.name), join(work!, "out", app.name))));
    },
    setUpTimeout: 240_000,
    // React and Vue wiring is hub-independent, and the Vite builds are the slowest set-up of the run: the same
    // channels run on the reference hub in connector.test.ts and encrypted.test.ts.
    hubs: DEV_HUB_ONLY,
    server: () =>
        startDevServer({
            app: { users: [{ id: ANN, name: "Ann" }], encryptionKey: ENCRYPTION_KEY },
            channels: {
                "App.Models.User.{id}": (user, params) => String(user.id) === params["id"],
                "orders.{id}": (user, params) => user.id === ANN && params["id"] === "1",
                "secrets.{id}": (user, params) => user.id === ANN && params["id"] === "1",
            },
            distDir: join(work!, "out"),
        }),
    // Every page's stream is gone before the next test counts streams.
    streamsClosedWithin: 15_000,
    tearDown() {
        if (work !== undefined) rmSync(work, { recursive: true, force: true });
    },
};

describeInChromium("configureEcho({ broadcaster: \"mercure\" }) in Vite-built React and Vue apps (Chromium)", SUITE, ({ dev, newPage }) => {
    /** Ann, logged in, on the built app `name`, connected with every component's channel subscribed. */
    async function openApp(name: string): Promise<Page> {
        const page = await newPage();
        const login = await page.request.post(`${dev().url}/dev/login?user=${ANN}`);
        expect(login.status()).toBe(200);
        const response = await page.goto(`${dev().url}/dist/${name}/index.html`);
        expect(response?.status()).toBe(200);
        await waitUntil("#status to say connected", async () => (await page.textContent("#status")) === "connected", { timeout: 20_000 });
        return page;
    }

    /** What the page's hooks received so far. */
    const received = (page: Page) => page.evaluate(() => (window as unknown as { received: Array<[string, unknown]> }).received);

    /** The current Echo instance's host and joined channels. */
    const echoState = (page: Page) => page.evaluate(() => (window as unknown as { echoState(): { host: unknown; channels: string[] } }).echoState());

    describe.each(APPS)("the $name app", (app) => {
        it("bundles no pusher-js: the Vite plugin puts laravel-echo-mercure/no-pusher in its place", () => {
            const pusher = readFileSync(join(ROOT, "node_modules/pusher-js/dist/web/pusher.js"), "utf8");
            for (const marker of PUSHER_MARKERS) expect(pusher, "the markers are pusher-js's").toContain(marker);
            const assets = join(work!, "out", app.name, "assets");
            const bundle = readdirSync(assets)
                .filter((file) => file.endsWith(".js"))
                .map((file) => readFileSync(join(assets, file), "utf8"))
                .join("\n");
            for (const marker of PUSHER_MARKERS) expect(bundle.includes(marker), marker).toBe(false);
            // no-pusher's class, not Vite's stub for a missing optional peer (which throws when the page loads).
            expect(bundle).toContain("aliased to laravel-echo-mercure/no-pusher");
            expect(bundle).not.toContain("Could not resolve");
            expect(bundle).toContain("laravel-echo-mercure/no-pusher");
        });

        it("delivers a private broadcast to useEcho, a public one to useEchoPublic, a notification to useEchoNotification and an encrypted one to useEchoEncrypted; useConnectionStatus shows connected", async () => {
            const page = await openApp(app.name);
            expect(await echoState(page)).toEqual({
                host: app.host(dev().url),
                channels: expect.arrayContaining(["private-orders.1", "news", "private-App.Models.User.1", "private-encrypted-secrets.1"]),
            });
            // One stream carries the four channels.
            await waitUntil("one stream with the four channels", () => {
                const last = dev().hub.stats.subscribeConnections.at(-1);
                const matches = matchesOf(last?.query ?? "");
                return ["private-orders.1", "news", "private-App.Models.User.1", "private-encrypted-secrets.1"].every((name) => matches.includes(topic(name)));
            }, { timeout: 15_000 });

            await dev().broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { id: 1 } });
            await dev().broadcast({ channels: ["news"], event: "headline", payload: { title: "hello" } });
            await dev().broadcast({
                channels: ["private-App.Models.User.1"],
                event: "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated",
                payload: { id: "n1", type: "App\\Notifications\\InvoicePaid" },
            });
            await dev().broadcast({ channels: ["private-encrypted-secrets.1"], event: "App\\Events\\SecretShared", payload: { secret: "s1" } });

            const all = await waitUntil("the four callbacks", async () => {
                const seen = await received(page);
                return seen.length >= 4 ? seen : null;
            }, { timeout: 15_000 });
            expect([...all].sort((a, b) => a[0].localeCompare(b[0]))).toEqual([
                ["useEcho", { id: 1 }],
                ["useEchoEncrypted", { secret: "s1" }],
                ["useEchoNotification", { id: "n1", type: "App\\Notifications\\InvoicePaid" }],
                ["useEchoPublic", { title: "hello" }],
            ]);
            expect(await page.textContent("#status")).toBe("connected");
        });

        it("leaves a component's channel when it unmounts: the stream reopens without it", async () => {
            const page = await openApp(app.name);
            await waitUntil("the stream with orders.1", () => matchesOf(dev().hub.stats.subscribeConnections.at(-1)?.query ?? "").includes(topic("private-orders.1")), { timeout: 15_000 });
            const before = dev().hub.stats.subscribeConnections.length;

            await page.click("#hide-orders");

            const reopened = await waitUntil("a stream opened without orders.1", () => {
                const later = dev().hub.stats.subscribeConnections.slice(before);
                return later.find((connection) => !matchesOf(connection.query).includes(topic("private-orders.1"))) ?? null;
            }, { timeout: 15_000 });
            expect(matchesOf(reopened.query)).toEqual(expect.arrayContaining(["news", "private-App.Models.User.1", "private-encrypted-secrets.1"].map(topic)));
            expect((await echoState(page)).channels).not.toContain("private-orders.1");
            await waitUntil("#status to say connected again", async () => (await page.textContent("#status")) === "connected", { timeout: 15_000 });
        });

        it("calling configureEcho again disconnects the previous instance and leaves its channels", async () => {
            const page = await openApp(app.name);
            expect(dev().hub.stats.openConnections).toBe(1);

            await page.click("#reconfigure");

            // The old connector's stream closes; the new instance opens nothing until a component joins a channel.
            await waitUntil("the previous instance's stream to close", () => dev().hub.stats.openConnections === 0, { timeout: 15_000 });
            expect((await echoState(page)).channels).toEqual([]);
        });
    });
});

/**
 * An app directory's `node_modules`: every package this repository installed, linked, and this package as an
 * app installs it (its package.json and a link to its dist/), so that `laravel-echo-mercure/react` and the
 * framework packages resolve from the app's node_modules as they do after `npm install`.
 */
function installedModules(work: string): void {
    const modules = join(work, "node_modules");
    mkdirSync(modules, { recursive: true });
    for (const name of readdirSync(join(ROOT, "node_modules"))) {
        // pusher-js too: a Mercure-only app does not install it (the plugin then points it at no-pusher).
        if (name.startsWith(".") || name === "laravel-echo-mercure" || name === "pusher-js") continue;
        symlinkSync(join(ROOT, "node_modules", name), join(modules, name), "dir");
    }
    const self = join(modules, "laravel-echo-mercure");
    mkdirSync(self);
    cpSync(join(ROOT, "package.json"), join(self, "package.json"));
    symlinkSync(join(ROOT, "dist"), join(self, "dist"), "dir");

}

/**
 * Copy the fixture app `app.name` into `dir` (beside the work directory's node_modules), give it its `.env` and the `vite.config.mjs` docs/react-and-vue.md
 * shows (its framework plugin and `echoMercure()`), and build it into `outDir` for `/dist/<name>/`.
 */
async function buildApp(app: (typeof APPS)[number], dir: string, outDir: string): Promise<void> {
    cpSync(join(FIXTURES, `${app.name}-app`), dir, { recursive: true });
    writeFileSync(join(dir, ".env"), app.env);
    const plugin = app.name === "react" ? "react" : "vue";
    writeFileSync(
        join(dir, "vite.config.mjs"),
        `import { defineConfig } from "vite";\nimport ${plugin} from "${app.plugin}";\n${PLUGIN_IMPORT_LINE}\n\nexport default defineConfig({\n    ${pluginsLine(plugin)}\n});\n`,
    );
    await build({
        root: dir,
        configFile: join(dir, "vite.config.mjs"),
        base: `/dist/${app.name}/`,
        logLevel: "warn",
        // Test plumbing, merged into the app's config: paths stay under the app's node_modules (links), as in
        // an installed app, and the output goes where the dev server serves it.
        resolve: { preserveSymlinks: true },
        build: { outDir, emptyOutDir: true },
    });
}
