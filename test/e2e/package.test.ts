import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";

/** Run a snippet in a fresh Node.js process at the package root (package self-reference resolves our exports). */
function node(args: string[], code: string): string {
    return execFileSync(process.execPath, [...args, "-e", code], { encoding: "utf8", timeout: 20_000 }).trim();
}

beforeAll(() => {
    if (!existsSync("dist/index.js")) throw new Error('dist/ is missing: run "npm run build" first (npm test does).');
});

describe("the published package", () => {
    it("imports as ESM next to stock laravel-echo, and constructs on the server without touching the network", () => {
        const out = node(
            ["--input-type=module"],
            `import Echo from "laravel-echo";
             import { MercureConnector } from "laravel-echo-mercure";
             const echo = new Echo({ broadcaster: MercureConnector }); // no host, no window: server-side rendering
             const errors = [];
             echo.channel("news").error((error) => errors.push(error.code + ": " + error.message));
             // Without host, the hub is looked for in the lazy discovery chunk first: wait for the verdict.
             const deadline = Date.now() + 15_000;
             while (errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
             console.log(JSON.stringify({ status: echo.connectionStatus(), errors }));`,
        );
        const result = JSON.parse(out) as { status: string; errors: string[] };
        expect(result.status).toBe("failed");
        expect(result.errors).toHaveLength(1);
        expect(result.errors[0]).toContain("missing_platform: The `host` option is required outside a browser");
    });

    it("requires as CommonJS", () => {
        const out = node(
            [],
            `const { MercureEcho, MercureConnector } = require("laravel-echo-mercure");
             const echo = new MercureEcho({ host: "http://127.0.0.1:9/.well-known/mercure" });
             console.log(echo.connector instanceof MercureConnector, echo.connectionStatus(), typeof echo.socketId());`,
        );
        expect(out).toBe("true disconnected string");
    });

    it("bundles neither event-source-polyfill nor eventsource: optional peer dependencies, absent from every build but the dev entry", () => {
        const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
            peerDependencies: Record<string, string>;
            peerDependenciesMeta: Record<string, { optional?: boolean }>;
            dependencies?: Record<string, string>;
        };
        for (const name of ["event-source-polyfill", "eventsource"]) {
            expect(manifest.peerDependencies[name], name).toBeDefined();
            expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true);
            expect(manifest.dependencies?.[name], name).toBeUndefined();
        }
        const builds = ["dist/index.js", "dist/index.cjs", "dist/laravel-echo-mercure.iife.js", ...readdirSync("dist/chunks").filter((file) => file.endsWith(".js")).map((file) => `dist/chunks/${file}`), ...readdirSync("dist/iife").filter((file) => file.endsWith(".js")).map((file) => `dist/iife/${file}`)];
        for (const file of builds) {
            const code = readFileSync(file, "utf8");
            // The polyfill's and the eventsource package's own code, and any import of them.
            for (const marker of ["function EventSourcePolyfill", "XHRWrapper", "class EventSource ", "eventsource-parser", "event-source-polyfill\"", "from \"eventsource\"", "require(\"eventsource\")"]) {
                expect(code, `${file} contains ${marker}`).not.toContain(marker);
            }
        }
    });

    it("runs the testing kit from the built package in plain Node.js (no DOM, no test runner): the core's own connector class and lazy whisper chunk, the end-to-end stack on the dev entry", () => {
        const out = node(
            ["--input-type=module"],
            `const { MercureConnector } = await import("laravel-echo-mercure");
             const { createTestEcho } = await import("laravel-echo-mercure/testing");
             const { startTestStack } = await import("laravel-echo-mercure/testing/e2e");
             const { echo, hub } = createTestEcho();
             const received = [];
             const channel = echo.private("chat.1").listen("Posted", (payload) => received.push(payload)).listenForWhisper("typing", (payload) => received.push(payload));
             await hub.flush();
             hub.broadcast("private-chat.1", "Posted", { n: 1 });
             hub.whisper("private-chat.1", "typing", { n: 2 });
             channel.whisper("typing", { n: 3 });
             await hub.flush();
             const stack = await startTestStack();
             const ids = await stack.broadcast("news", "Posted", {});
             await stack.stop();
             echo.disconnect();
             console.log(JSON.stringify({ same: echo.connector instanceof MercureConnector, received, sent: hub.whispers("private-chat.1"), ids: ids.length }));`,
        );
        expect(JSON.parse(out)).toEqual({ same: true, received: [{ n: 1 }, { n: 2 }], sent: [{ event: "typing", payload: { n: 3 } }], ids: 1 });
        // The unit kit imports nothing of Node.js, the dev stack or a test runner; the end-to-end half reaches the dev stack through its entry.
        const kit = readFileSync("dist/testing/index.js", "utf8");
        for (const marker of ["node:", "../dev/", "vitest", "jest"]) expect(kit, marker).not.toContain(marker);
        expect(readFileSync("dist/testing/e2e.js", "utf8")).toContain("from '../dev/index.js'");
    });

    it("exposes the dev stack, the browser build and package.json", () => {
        const out = node(
            ["--input-type=module"],
            `const dev = await import("laravel-echo-mercure/dev");
             const { createRequire } = await import("node:module");
             const require = createRequire(import.meta.url);
             console.log(typeof dev.startDevHub, typeof dev.startDevServer, require.resolve("laravel-echo-mercure/iife").endsWith("dist/laravel-echo-mercure.iife.js"), require("laravel-echo-mercure/package.json").name);`,
        );
        expect(out).toBe("function function true laravel-echo-mercure");
    });

    it("exposes parseLinkHeader and discoverFromDocument, with their types, as laravel-echo-mercure/discovery and no longer from the main entry", () => {
        const out = node(
            ["--input-type=module"],
            `const discovery = await import("laravel-echo-mercure/discovery");
             const main = await import("laravel-echo-mercure");
             const links = discovery.parseLinkHeader('</hub>; rel="mercure"; last-event-id="urn:1", </x>; rel=self', "https://app.test/page");
             const page = {
                 baseURI: "https://app.test/page",
                 querySelectorAll: () => [{ getAttribute: (name) => ({ rel: "preload mercure", href: "/hub#x", "last-event-id": "urn:2" })[name] ?? null }],
             };
             const found = discovery.discoverFromDocument(page);
             console.log(JSON.stringify({
                 exports: Object.keys(discovery).sort(),
                 links: links.map((link) => [link.href, link.rel, link.params["last-event-id"] ?? null]),
                 found: [found.hub.href, found.lastEventId],
                 main: ["parseLinkHeader", "discoverFromDocument", "discoverHub"].map((name) => typeof main[name]),
             }));`,
        );
        expect(JSON.parse(out)).toEqual({
            exports: ["discoverFromDocument", "parseLinkHeader"],
            links: [
                ["https://app.test/hub", ["mercure"], "urn:1"],
                ["https://app.test/x", ["self"], null],
            ],
            found: ["https://app.test/hub", "urn:2"],
            main: ["undefined", "undefined", "function"],
        });
        const types = readFileSync("dist/discovery/index.d.ts", "utf8");
        expect(types).toMatch(/export \{[^}]*\bdiscoverFromDocument\b[^}]*\}/);
        for (const name of ["parseLinkHeader", "DocumentLike", "LinkValue", "DiscoveredHub"]) expect(types).toMatch(new RegExp(`export (type )?\\{[^}]*\\b${name}\\b`));
        const mainTypes = readFileSync("dist/index.d.ts", "utf8");
        for (const name of ["parseLinkHeader", "discoverFromDocument", "DocumentLike", "LinkValue"]) expect(mainTypes).not.toContain(name);
    });

    it("finds the hub of a connector without host from the page's <link rel=\"mercure\"> through the lazy discovery chunk, with no link parsing in dist/index.js", () => {
        const core = readFileSync("dist/index.js", "utf8");
        for (const linkCode of ["function parseLinkHeader", "function discoverFromDocument", "class FieldCursor", "link[rel][href]"]) expect(core).not.toContain(linkCode);
        const out = node(
            ["--input-type=module"],
            `globalThis.location = { href: "https://app.test/dashboard" };
             globalThis.document = {
                 baseURI: "https://app.test/dashboard",
                 querySelectorAll: (selector) => selector === "head > link[rel][href]" ? [{ getAttribute: (name) => ({ rel: "mercure", href: "https://hub.test/.well-known/mercure", "last-event-id": "urn:page" })[name] ?? null }] : [],
             };
             const { MercureConnector } = await import("laravel-echo-mercure");
             const steps = [];
             class Recorder { constructor(url) { steps.push(["stream", url]); this.readyState = 0; } addEventListener() {} close() {} }
             const fetch = async () => new Response(JSON.stringify({ channels: [{ name: "news" }], expires_in: 600, topic_prefix: "https://app.test/" }), { status: 200, headers: { "Content-Type": "application/json" } });
             const connector = new MercureConnector({ eventSource: Recorder, fetch, shareAcrossTabs: false, debug: (step, detail) => step === "hub" && steps.push([step, detail.url, detail.source]) });
             connector.channel("news");
             const deadline = Date.now() + 15_000;
             while (!steps.some(([step]) => step === "stream") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
             connector.disconnect();
             console.log(JSON.stringify(steps.map(([step, url, source]) => step === "stream" ? [step, url.split("?")[0], new URL(url).searchParams.get("last_event_id")] : [step, url, source])));`,
        );
        expect(JSON.parse(out)).toEqual([
            ["hub", "https://hub.test/.well-known/mercure", "link-element"],
            ["stream", "https://hub.test/.well-known/mercure", "urn:page"],
        ]);
    });

    it("loads the hubToken chunk from the built package (ESM and CommonJS) before the first auth: the stream's requests carry the token", () => {
        const snippet = (load: string) =>
            `(async () => {
                 const { MercureConnector } = ${load};
                 const seen = [];
                 const fetch = async (url, init) => {
                     if (url.startsWith("http://127.0.0.1:9/.well-known/mercure")) {
                         seen.push(new Headers(init.headers).get("Authorization"));
                         return new Response("", { status: 200, headers: { "Content-Type": "text/event-stream" } });
                     }
                     return new Response(JSON.stringify({ channels: [{ name: "news" }], expires_in: 600 }), { status: 200, headers: { "Content-Type": "application/json" } });
                 };
                 class Recorder { constructor(url, init) { this.readyState = 0; void init.fetch(url, {}); } addEventListener() {} close() {} }
                 const connector = new MercureConnector({ host: "http://127.0.0.1:9/.well-known/mercure", eventSource: Recorder, fetch, hubToken: () => "header.payload.signature" });
                 connector.channel("news");
                 const deadline = Date.now() + 15_000;
                 while (seen.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
                 connector.disconnect();
                 console.log(JSON.stringify(seen));
             })();`;
        expect(node(["--input-type=module"], snippet('await import("laravel-echo-mercure")'))).toBe('["Bearer header.payload.signature"]');
        expect(node([], snippet('require("laravel-echo-mercure")'))).toBe('["Bearer header.payload.signature"]');
    });

    it("keeps presence, encrypted channels (the JWE code), whispers, discovery, diagnostics, the tabs' share client and hub engine, the platform set-up (the hubToken machinery, the EventSource adapter, the checks outside a page) and the search for failing channels out of the core (dist/index.js and dist/chunks/core-*.js): chunks reached only through import()", () => {
        const allChunks = readdirSync("dist/chunks").filter((file) => file.endsWith(".js"));
        const coreChunk = allChunks.filter((file) => file.startsWith("core-"));
        expect(coreChunk).toHaveLength(1);
        // dist/index.js re-exports the public API from the core chunk, and imports nothing else.
        const entry = readFileSync("dist/index.js", "utf8");
        expect([...entry.matchAll(/^(?:import|export)\b.*?from\s+['"]([^'"]+)['"]/gm)].map((match) => match[1])).toEqual([`./chunks/${coreChunk[0]}`]);
        const core = readFileSync(`dist/chunks/${coreChunk[0]}`, "utf8");
        const chunks = allChunks.filter((file) => !coreChunk.includes(file));
        const named = (prefix: string) => {
            const found = chunks.filter((file) => file.startsWith(prefix + "-"));
            expect(found, prefix).toHaveLength(1);
            return found[0]!;
        };
        const entries = ["jwe", "crypto-capability", "whisper-capability", "presence-capability", "diagnose", "discover", "leadership", "batch-isolation", "credentials", "unheard-event", "share-platform", "protocol", "platform-setup", "stream-diagnosis", "resume-capability"].map(named);
        const [jwe, encrypted, whisper, presence, diagnose, discover, engine, isolation, credentials, unheard, share, protocol, setup, streamDiagnosis, resume] = entries as [
            string, string, string, string, string, string, string, string, string, string, string, string, string, string, string,
        ];
        // What rollup splits out as shared helpers (named after their first module) is its business; they are
        // only ever reached from the lazy chunks, never from the core.
        const shared = chunks.filter((file) => !entries.includes(file));
        const staticImports = (code: string) => [...code.matchAll(/^import\b.*?from\s+['"]([^'"]+)['"]/gm)].map((match) => match[1]!).sort();
        const read = (file: string) => readFileSync(`dist/chunks/${file}`, "utf8");
        const local = (ids: string[]) => ids.filter((id) => id !== "laravel-echo" && id !== `./${coreChunk[0]}`);
        // The core's only module edges: laravel-echo statically, the lazy entries dynamically (the tabs' protocol, which
        // the share client and the engine both import, is fetched beside them: see src/share/load.ts; the JWE code and the
        // whisper chunk's shared helpers are fetched beside their capability's chunk, issue 53: see capability-slots.ts).
        expect(staticImports(core)).toEqual(["laravel-echo"]);
        const whisperHelpers = local(staticImports(read(whisper))).map((id) => id.slice(2)).filter((file) => shared.includes(file));
        expect(whisperHelpers.length).toBeGreaterThan(0);
        expect([...core.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]).sort()).toEqual(
            [diagnose, discover, engine, isolation, encrypted, jwe, whisper, ...whisperHelpers, presence, credentials, unheard, share, protocol, setup, streamDiagnosis, resume].map((file) => `./${file}`).sort(),
        );
        // The platform set-up is loaded only where the options are not the common page's: what its checks say of a missing
        // part (outside a page), header auth (the hubToken option), the EventSource adapter.
        for (const checksText of ["is required outside a browser", "No EventSource implementation"]) expect(core).not.toContain(checksText);
        expect(read(setup)).toContain("is required outside a browser");
        for (const hubTokenCode of ["class HubTokenSource", "function withHubToken", "function tokenExpiry"]) expect(core).not.toContain(hubTokenCode);
        expect(read(setup)).toContain("class HubTokenSource");
        for (const jweCode of ["compactDecrypt", "importJWK", "subtle.importKey", "subtle.encrypt", "class JweRefusal"]) expect(core).not.toContain(jweCode);
        for (const whisperCode of ["class WhisperPublisher", "class WhisperStreams", "function readWhisper", "class Whispers"]) expect(core).not.toContain(whisperCode);
        // Issue 32: presence and the encrypted channels' keys and queue load with the first channel that needs them.
        for (const presenceCode of ["function createPresenceRooms", "function createRoster", "function fetchSnapshot", "function parseSubscriptionEvent"]) expect(core).not.toContain(presenceCode);
        expect(read(presence)).toContain("function createPresenceRooms");
        // Issue 52: resumeAcrossPages's storage loads only with the option.
        for (const resumeCode of ["function takeResume", "function saveResume", "function sessionFingerprint"]) expect(core).not.toContain(resumeCode);
        expect(read(resume)).toContain("function takeResume");
        expect(core).not.toContain("class EncryptedChannels");
        expect(read(encrypted)).toContain("class EncryptedChannels");
        for (const diagnosticsCode of ["function classify", "function probe(", "function fetchMetadata", "function locateHub"]) expect(core).not.toContain(diagnosticsCode);
        // The probe of a stream that failed for good, and what it reports, load at the first such failure.
        expect(core).not.toContain('"diagnosis"');
        expect(read(streamDiagnosis)).toContain('"diagnosis"');
        for (const engineCode of ["class HubEngine", "class AuthGateway", "class StreamMux"]) expect(core).not.toContain(engineCode);
        // Tab sharing's client and the EventSource adapter (in the platform set-up) load only where they apply (a page that
        // shares; the eventSource, fetch or hubToken option, or a global EventSource that is not the browser's).
        for (const shareCode of ["class TabLink", "class ShareClient", "function sharePlatform", "function inboxName"]) expect(core).not.toContain(shareCode);
        expect(read(share)).toContain("class TabLink");
        expect(read(protocol)).toContain("function inboxName");
        for (const adapterCode of ["function adaptEventSource", "function eventSourceKind", "lastEventIdQueryParameterName"]) expect(core).not.toContain(adapterCode);
        expect(read(setup)).toContain("function adaptEventSource");
        expect(core).not.toContain("function failingAlone");
        expect(read(isolation)).toContain("function failingAlone");
        // The JWE chunk imports jose and nothing of the core; the other lazy chunks import the core and shared helpers only.
        expect(staticImports(read(jwe))).toEqual(["jose"]);
        expect(read(jwe)).not.toMatch(/\bimport\s*\(|\brequire\s*\(/m);
        expect(read(jwe)).toContain("compactDecrypt");
        expect(read(whisper)).toContain("class WhisperPublisher");
        expect(read(engine)).toContain("class HubEngine");
        // The share client and the engine import the tabs' protocol chunk too, discovery the platform set-up (each asked
        // for beside the chunk that imports it: src/share/load.ts, src/discovery/load.ts).
        for (const chunk of [encrypted, whisper, presence, diagnose, discover, engine, isolation, credentials, unheard, share, setup, streamDiagnosis, ...shared]) {
            for (const id of local(staticImports(read(chunk)))) expect([...shared, protocol, setup].map((file) => `./${file}`), `${chunk} imports ${id}`).toContain(id);
        }
        for (const chunk of shared) expect(read(chunk)).not.toContain("class WhisperPublisher");
    });

    it("requires the dev stack from CommonJS (Node.js >= 20.19 loads its ESM through the default condition)", () => {
        const out = node(
            [],
            `const dev = require("laravel-echo-mercure/dev");
             console.log(typeof dev.startDevHub, typeof dev.startDevServer, typeof dev.startDemo);`,
        );
        expect(out).toBe("function function function");
    });

    it("depends at run time only on what the browser build runs: the dev build carries urlpattern-polyfill inside", () => {
        const manifest = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
        // jose, pinned: imported by the lazily loaded JWE chunk of encrypted channels only.
        expect(manifest.dependencies).toEqual({ jose: "6.2.18" });
        expect(manifest.optionalDependencies).toBeUndefined();
        const bareImports = (file: string) =>
            [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"'./][^"']*)["']/g)].map((match) => match[1]!);
        for (const file of ["dist/dev/index.js", "dist/dev/cli.js", "dist/dev/shared.js"]) {
            expect(bareImports(file).filter((id) => !id.startsWith("node:"))).toEqual([]);
        }
        expect(readFileSync("dist/dev/shared.js", "utf8")).toContain("urlpattern-polyfill 10.1.0 (bundled into the dev hub) | Copyright 2020 Intel Corporation | MIT");
        for (const file of ["dist/index.js", "dist/index.cjs"]) {
            expect(bareImports(file).every((id) => id === "laravel-echo")).toBe(true);
        }
        // jose only from the ESM JWE chunk; the CJS chunk carries it inside (jose 6 ships ESM only).
        for (const file of readdirSync("dist/chunks").filter((name) => /^jwe-.*\.c?js$/.test(name))) {
            expect(bareImports(`dist/chunks/${file}`), file).toEqual(file.endsWith(".cjs") ? [] : ["jose"]);
        }
    });

    it("ships source maps only for the minified browser build, with their sources inside: no map names a file the package lacks (issue 51: Vite warned once per file)", () => {
        const files = readdirSync("dist", { recursive: true, encoding: "utf8" });
        const maps = files.filter((file) => file.endsWith(".map"));
        expect(maps.length).toBeGreaterThanOrEqual(5);
        for (const file of maps) {
            expect(file === "laravel-echo-mercure.iife.js.map" || file.startsWith("iife/"), file).toBe(true);
            const map = JSON.parse(readFileSync(`dist/${file}`, "utf8")) as { sources: string[]; sourcesContent?: Array<string | null> };
            expect(map.sourcesContent?.length, file).toBe(map.sources.length);
            expect(map.sourcesContent!.every((content) => typeof content === "string" && content.length > 0), file).toBe(true);
        }
        // The other builds are not minified, and point at no map.
        for (const file of files.filter((name) => /\.c?js$/.test(name) && !maps.includes(`${name}.map`))) {
            expect(readFileSync(`dist/${file}`, "utf8"), file).not.toContain("sourceMappingURL");
        }
    });

    it("requires the testing kit from CommonJS (Jest's default mode): its CommonJS build, on the CommonJS core, with its lazy chunks loaded", () => {
        const out = node(
            [],
            `const { MercureConnector } = require("laravel-echo-mercure");
             const { createTestEcho } = require("laravel-echo-mercure/testing");
             const { echo, hub } = createTestEcho({ user: { id: 1, name: "Ada" } });
             const seen = [];
             echo.join("room.1").here((members) => seen.push(members.map((m) => m.name)));
             echo.private("chat.1").listenForWhisper("typing", (e) => seen.push(e));
             hub.flush().then(() => {
                 hub.whisper("private-chat.1", "typing", { n: 1 });
                 console.log(JSON.stringify({ same: echo.connector instanceof MercureConnector, seen, file: require.resolve("laravel-echo-mercure/testing").endsWith("dist/testing/index.cjs") }));
                 echo.disconnect();
             });`,
        );
        expect(JSON.parse(out)).toEqual({ same: true, seen: [["Ada"], { n: 1 }], file: true });
    });

    it("packs dist, the README with every file it links (docs/, BENCHMARKS.md, SECURITY.md), the licence and package.json", () => {
        const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" })) as Array<{ files: Array<{ path: string }> }>;
        const paths = pack!.files.map((file) => file.path);
        const readme = readFileSync("README.md", "utf8");
        // A relative link of the README npm shows must point at a file in the package (or an anchor of the README).
        const linked = [...readme.matchAll(/\]\((?!https?:|mailto:|#)([^)#\s]+)/g)].map((match) => decodeURI(match[1]!));
        expect(linked.length, "the README links BENCHMARKS.md at least").toBeGreaterThan(0);
        for (const target of linked) expect(paths, `README links ${target}`).toContain(target);
        const allowed = (path: string) => path.startsWith("dist/") || path.startsWith("docs/") || ["LICENSE", "README.md", "package.json", "BENCHMARKS.md", "SECURITY.md"].includes(path);
        expect(paths.filter((path) => !allowed(path))).toEqual([]);
        expect(paths).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json"]));
        for (const file of ["dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts", "dist/testing/index.cjs", "dist/testing/index.d.cts", "dist/laravel-echo-mercure.iife.js", "dist/dev/index.js", "dist/dev/cli.js"]) {
            expect(paths).toContain(file);
        }
    });
});
