import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";

/** Run an ES module snippet in a fresh Node.js process at the package root (self-reference resolves our exports). */
function node(code: string): string {
    return execFileSync(process.execPath, ["--input-type=module", "-e", code], { encoding: "utf8", timeout: 20_000 }).trim();
}

beforeAll(() => {
    if (!existsSync("dist/react/index.js")) throw new Error('dist/ is missing: run "npm run build" first (npm test does).');
});

describe.each(["react", "vue"])("laravel-echo-mercure/%s, as published", (framework) => {
    it("configures the framework package's Echo on the core's own MercureConnector, without a host on the server", () => {
        const out = node(
            `import { MercureConnector, MercureError } from "laravel-echo-mercure";
             import { configureEcho, echo, echoIsConfigured } from "laravel-echo-mercure/${framework}";
             configureEcho({ broadcaster: "mercure", authEndpoint: "/api/broadcasting/auth", namespace: false });
             const first = echo();
             configureEcho({});
             let refused = null;
             try { configureEcho({ broadcaster: "reverb" }); } catch (error) { refused = error instanceof MercureError ? error.code : String(error); }
             console.log(JSON.stringify({
                 configured: echoIsConfigured(),
                 mercure: first.connector instanceof MercureConnector,
                 host: first.connector.options.host ?? null,
                 authEndpoint: first.connector.options.authEndpoint,
                 fresh: echo() !== first,
                 refused,
             }));`,
        );
        expect(JSON.parse(out)).toEqual({ configured: true, mercure: true, host: null, authEndpoint: "/api/broadcasting/auth", fresh: true, refused: "invalid_option" });
    });

    it("imports the core from ../index.js (through the shared framework code) instead of carrying a copy", () => {
        const entry = readFileSync(`dist/${framework}/index.js`, "utf8");
        const shared = readFileSync("dist/frameworks/shared.js", "utf8");
        expect(entry).toContain(`from '../frameworks/shared.js'`);
        expect(shared).toContain(`from '../index.js'`);
        for (const code of [entry, shared]) expect(code).not.toContain("class MercureConnector");
    });
});

describe("laravel-echo-mercure/no-pusher", () => {
    it("stands in for pusher-js: constructing it throws unsupported, naming the alias to remove", () => {
        const out = node(
            `import NoPusher from "laravel-echo-mercure/no-pusher";
             try { new NoPusher("key", {}); } catch (error) { console.log(error.code + ": " + error.message); }`,
        );
        expect(out).toMatch(/^unsupported: pusher-js is aliased to laravel-echo-mercure\/no-pusher .*remove the alias/);
    });
});

describe("laravel-echo-mercure/svelte, as published", () => {
    it("builds a MercureEcho of the core's own class from configureEcho(), a fresh one after reconfiguring, and refuses other broadcasters", () => {
        // Node.js resolves svelte's server build: configuring and echo() need no component.
        const out = node(
            `import { MercureEcho, MercureError } from "laravel-echo-mercure";
             import { configureEcho, echo, echoIsConfigured } from "laravel-echo-mercure/svelte";
             const before = echoIsConfigured();
             let unconfigured = null;
             try { echo(); } catch (error) { unconfigured = error.code; }
             configureEcho({ broadcaster: "mercure", host: "https://hub.test/.well-known/mercure", authEndpoint: "/api/broadcasting/auth" });
             const first = echo();
             configureEcho({ host: "https://hub.test/.well-known/mercure" });
             let refused = null;
             try { configureEcho({ broadcaster: "reverb" }); } catch (error) { refused = error instanceof MercureError ? error.code : String(error); }
             console.log(JSON.stringify({ before, unconfigured, mercure: first instanceof MercureEcho, same: echo() === echo(), fresh: echo() !== first, authEndpoint: first.connector.options.authEndpoint, refused }));`,
        );
        expect(JSON.parse(out)).toEqual({ before: false, unconfigured: "invalid_option", mercure: true, same: true, fresh: true, authEndpoint: "/api/broadcasting/auth", refused: "invalid_option" });
    });

    it("imports the core from ../index.js and the shared framework code, carrying no copy of either", () => {
        const entry = readFileSync("dist/svelte/index.js", "utf8");
        expect(entry).toContain(`from '../index.js'`);
        expect(entry).toContain(`from '../frameworks/shared.js'`);
        expect(entry).not.toContain("class MercureConnector");
        expect(entry).not.toContain("class EncryptedSubscriptions");
    });
});

describe("laravel-echo-mercure/http, as published", () => {
    it("resolves through the package's exports, with its types, and imports nothing (not even the core)", () => {
        const out = node(
            `import { socketIdHeaders, withSocketId, socketIdInterceptor, inertiaSocketId, sendsSocketId } from "laravel-echo-mercure/http";
             const echo = { socketId: () => "1.2" };
             console.log(JSON.stringify({ headers: socketIdHeaders(echo), kinds: [withSocketId, socketIdInterceptor, inertiaSocketId].map((f) => typeof f), noPage: sendsSocketId("/x") }));`,
        );
        expect(JSON.parse(out)).toEqual({ headers: { "X-Socket-ID": "1.2" }, kinds: ["function", "function", "function"], noPage: false });
        expect(readFileSync("dist/http/index.js", "utf8")).not.toMatch(/^import /m);
        expect(readFileSync("dist/http/index.d.ts", "utf8")).toContain("declare function withSocketId(echo: SocketIdSource");
    });
});

describe("laravel-echo-mercure/svelte in server-side rendering", () => {
    it("renders a component on the server with svelte/server, joining no channel and opening nothing", () => {
        // The component is compiled for the server, as SvelteKit or Inertia's SSR does, into .cache/ (inside the
        // package, so that its imports resolve as in an app), rendered, and removed.
        const out = node(
            `import { mkdirSync, rmSync, writeFileSync } from "node:fs";
             import { compile } from "svelte/compiler";
             import { render } from "svelte/server";
             import { configureEcho, echo } from "laravel-echo-mercure/svelte";
             const source = \`<script>
                 import { useEcho, useEchoEncrypted, useEchoPresenceMembers } from "laravel-echo-mercure/svelte";
                 const orders = useEcho("orders.1", "OrderShipped", () => {});
                 const secret = useEchoEncrypted("secrets.1", "SecretShared", () => {});
                 const members = useEchoPresenceMembers("room");
             </script>
             <p>{orders.channel() === null && secret.channel() === null ? "no channel" : "joined"}, {members.current.length} members</p>\`;
             configureEcho({ host: "https://hub.test/.well-known/mercure" });
             mkdirSync(".cache", { recursive: true });
             const file = ".cache/svelte-ssr-" + process.pid + ".js";
             writeFileSync(file, compile(source, { generate: "server" }).js.code);
             const { default: Component } = await import(process.cwd() + "/" + file);
             const { body } = render(Component);
             rmSync(file);
             console.log(JSON.stringify({ body: body.replace(/<!--.*?-->/g, ""), channels: Object.keys(echo().connector.channels), status: echo().connectionStatus() }));`,
        );
        expect(JSON.parse(out)).toEqual({ body: "<p>no channel, 0 members</p>", channels: [], status: "disconnected" });
    });
});
