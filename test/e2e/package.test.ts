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
             await new Promise((resolve) => setTimeout(resolve, 10));
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

    it("keeps jose, the JWE code and the whisper code out of dist/index.js: two chunks, reached only through import()", () => {
        const core = readFileSync("dist/index.js", "utf8");
        const chunks = readdirSync("dist/chunks").filter((file) => file.endsWith(".js")).sort();
        expect(chunks.map((file) => file.replace(/-[\w-]+\.js$/, ""))).toEqual(["jwe", "whisper"]);
        const [jwe, whisper] = chunks.map((file) => readFileSync(`dist/chunks/${file}`, "utf8")) as [string, string];
        const staticImports = (code: string) => [...code.matchAll(/^import\b.*?['"]([^'"]+)['"]/gm)].map((match) => match[1]);
        // The core's only module edges: laravel-echo statically, the chunks dynamically.
        expect(staticImports(core)).toEqual(["laravel-echo"]);
        expect([...core.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]).sort()).toEqual(chunks.map((file) => `./chunks/${file}`));
        for (const jweCode of ["compactDecrypt", "CompactEncrypt", "subtle.importKey", "maxDecompressedLength"]) expect(core).not.toContain(jweCode);
        for (const whisperCode of ["class WhisperPublisher", "class WhisperStreams", "function readWhisper"]) expect(core).not.toContain(whisperCode);
        // The JWE chunk imports jose and nothing of the core; the whisper chunk only the core (MercureError, topics).
        expect(staticImports(jwe)).toEqual(["jose"]);
        expect(jwe).toContain("compactDecrypt");
        expect(staticImports(whisper)).toEqual(["../index.js", "laravel-echo"]);
        expect(whisper).toContain("class WhisperPublisher");
    });

    it("packs only dist, the README, the licence and package.json", () => {
        const [pack] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" })) as Array<{ files: Array<{ path: string }> }>;
        const paths = pack!.files.map((file) => file.path);
        expect(paths.filter((path) => !path.startsWith("dist/"))).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json"]));
        expect(paths.filter((path) => !path.startsWith("dist/")).sort()).toEqual(["LICENSE", "README.md", "package.json"]);
        for (const file of ["dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts", "dist/laravel-echo-mercure.iife.js", "dist/dev/index.js", "dist/dev/cli.js"]) {
            expect(paths).toContain(file);
        }
    });
});
