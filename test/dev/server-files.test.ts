import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../src/dev/server";

// Issue 51: docs/dev-hub.md's own example passes a relative distDir ("./public/build"), which served nothing: the
// path was compared with its absolute form. Now it is resolved against the working directory, a folder that does not
// exist is refused, and the server says what it serves.

const work = mkdtempSync(join(tmpdir(), "dist-dir-test-"));
mkdirSync(join(work, "public/build"), { recursive: true });
writeFileSync(join(work, "public/build/app.js"), "console.log('app');\n");
mkdirSync(join(work, "public/build/assets"), { recursive: true });
writeFileSync(join(work, "public/build/assets/chunk-Ab3_x-9Z.js"), "export {};\n");
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("startDevServer's distDir", () => {
    it("serves a folder given relative to the working directory at /dist/, and logs the absolute folder it serves", async () => {
        const lines: string[] = [];
        const server = await startDevServer({ distDir: relative(process.cwd(), join(work, "public/build")), log: (line) => lines.push(line) });
        try {
            const response = await fetch(`${server.url}/dist/app.js`);
            expect(response.status).toBe(200);
            expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
            expect(await response.text()).toBe("console.log('app');\n");
            expect((await fetch(`${server.url}/dist/../package.json`)).status).toBe(404);
            expect(lines).toEqual([`laravel-echo-mercure dev server: serves ${join(work, "public/build")} at ${server.url}/dist/`]);
        } finally {
            await server.close();
        }
    });

    it("refuses a folder that does not exist, naming it and the working directory, before listening", async () => {
        await expect(startDevServer({ distDir: "./no/such/build", log: () => undefined })).rejects.toThrow(
            `startDevServer: distDir "./no/such/build" is not a folder (resolved against the working directory ${process.cwd()} to ${join(process.cwd(), "no/such/build")})`,
        );
        await expect(startDevServer({ distDir: join(work, "public/build/app.js"), log: () => undefined })).rejects.toThrow("is not a folder");
    });

    it("serves every file no-store, and the files cacheAssets names cacheable for good, as production serves a build's hashed files", async () => {
        const plain = await startDevServer({ distDir: join(work, "public/build"), log: () => undefined });
        const cached = await startDevServer({ distDir: join(work, "public/build"), log: () => undefined, cacheAssets: /^assets\// });
        try {
            const header = async (server: { url: string }, path: string) => (await fetch(`${server.url}/dist/${path}`)).headers.get("cache-control");
            expect(await header(plain, "assets/chunk-Ab3_x-9Z.js")).toBe("no-store");
            expect(await header(plain, "app.js")).toBe("no-store");
            expect(await header(cached, "assets/chunk-Ab3_x-9Z.js")).toBe("public, max-age=31536000, immutable");
            expect(await header(cached, "app.js")).toBe("no-store");
        } finally {
            await plain.close();
            await cached.close();
        }
    });

    it("logs nothing with the package's own build (no distDir)", async () => {
        const lines: string[] = [];
        const server = await startDevServer({ log: (line) => lines.push(line) });
        await server.close();
        expect(lines).toEqual([]);
    });
});

describe("the dev server's /favicon.ico", () => {
    it("answers 204 (no icon, and no 404 in the browser's console on every page), unless a page of that path is given", async () => {
        const server = await startDevServer({});
        const own = await startDevServer({ pages: { "/favicon.ico": "icon" } });
        try {
            const response = await fetch(`${server.url}/favicon.ico`);
            expect(response.status).toBe(204);
            expect(response.headers.get("cache-control")).toBe("max-age=86400");
            expect((await fetch(`${own.url}/favicon.ico`)).status).toBe(200);
        } finally {
            await server.close();
            await own.close();
        }
    });
});

describe("the dev server's pages with the csrf option", () => {
    it("set the session and its XSRF-TOKEN cookie, as a Laravel page does, so that a page's first auth request has a token (issue 51)", async () => {
        const guarded = await startDevServer({ app: { csrf: true }, pages: { "/": "<!doctype html>" }, channels: { news: () => true } });
        const plain = await startDevServer({ pages: { "/": "<!doctype html>" } });
        try {
            const page = await fetch(`${guarded.url}/`);
            const cookies = page.headers.getSetCookie();
            expect(cookies.map((cookie) => cookie.split("=")[0])).toEqual(["dev_session", "XSRF-TOKEN"]);
            const cookie = cookies.map((value) => value.split(";")[0]).join("; ");
            const xsrf = decodeURIComponent(/XSRF-TOKEN=([^;]*)/.exec(cookie)![1]!);
            const auth = (headers: Record<string, string>) =>
                fetch(`${guarded.url}/broadcasting/auth`, { method: "POST", headers: { "Content-Type": "application/json", Cookie: cookie, ...headers }, body: JSON.stringify({ channel_names: ["news"] }) });
            expect((await auth({})).status).toBe(419);
            expect((await auth({ "X-XSRF-TOKEN": xsrf })).status).toBe(200);
            expect((await fetch(`${plain.url}/`)).headers.getSetCookie()).toEqual([]);
            // GET /dev/user too, for a page the stack does not serve (Vite's dev server in front of it).
            expect((await fetch(`${guarded.url}/dev/user`)).headers.getSetCookie().map((value) => value.split("=")[0])).toEqual(["dev_session", "XSRF-TOKEN"]);
            expect((await fetch(`${plain.url}/dev/user`)).headers.getSetCookie()).toEqual([]);
        } finally {
            await guarded.close();
            await plain.close();
        }
    });
});
