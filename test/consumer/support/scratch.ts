/*
 * The consumer apps' scratch folder: outside the repository (under the system's temporary folder), with what an app
 * installs and nothing of ours but the packed package. test/consumer/app/package.json lists every package the apps
 * need from the npm registry, at exact versions (no pusher-js), and `laravel-echo-mercure` as `file:` the tarball that
 * `npm pack` makes of this build; test/consumer/app/package-lock.json pins the whole tree, so `npm ci` installs the
 * same files every time (from npm's cache once it has them). The lock holds no integrity for the tarball, which
 * changes with every build: it is written in here, from the tarball packed now. After a change of those dependencies
 * (or of the package's own), `node test/consumer/update-lock.mjs` writes the lock anew.
 *
 * Each app's files are the docs' own blocks (see doc-files.ts): a doc example that stops working fails here.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { docAppFiles } from "./doc-files";

/** The repository root. */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");
/** The consumer apps' manifest and lock. */
export const APP_TEMPLATE = join(ROOT, "test/consumer/app");
/** The tarball's name in the scratch folder, as package.json's `file:` dependency names it. */
export const TARBALL = "laravel-echo-mercure.tgz";

/** The environment of the npm commands run here: without what `npm test` sets for this repository's own run. */
export function npmEnvironment(): NodeJS.ProcessEnv {
    return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

/** Pack this build (`npm pack`, as `npm publish` would) into `folder` as {@link TARBALL}; returns its path. */
export function packInto(folder: string): string {
    if (!existsSync(join(ROOT, "dist/index.js"))) throw new Error('dist/ is missing: run "npm run build" first (npm test does).');
    const output = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", folder], { cwd: ROOT, env: npmEnvironment(), encoding: "utf8" });
    const [packed] = JSON.parse(output) as Array<{ filename: string }>;
    const tarball = join(folder, TARBALL);
    renameSync(join(folder, packed!.filename), tarball);
    return tarball;
}

/** The lock with the tarball's integrity, as `npm install` would have written it for this tarball. */
export function lockFor(tarball: string): string {
    const lock = JSON.parse(readFileSync(join(APP_TEMPLATE, "package-lock.json"), "utf8")) as { packages: Record<string, Record<string, unknown>> };
    const entry = lock.packages["node_modules/laravel-echo-mercure"];
    if (entry === undefined) throw new Error("test/consumer/app/package-lock.json has no laravel-echo-mercure: run node test/consumer/update-lock.mjs");
    entry["integrity"] = "sha512-" + createHash("sha512").update(readFileSync(tarball)).digest("base64");
    return JSON.stringify(lock, null, 2) + "\n";
}

/** A scratch folder with the apps installed. */
export interface Scratch {
    /** The folder (its package.json, node_modules and one folder per app). */
    readonly dir: string;
    /** The packed package. */
    readonly tarball: string;
    /** How long packing and `npm ci` took, in ms. */
    readonly installMs: number;
    /** Remove the folder. */
    dispose(): void;
}

/**
 * Pack this build, install it with the apps' dependencies in a new folder under the system's temporary folder
 * (`npm ci --prefer-offline`: npm's cache serves what it has), and write every app file the docs show.
 */
export function prepareScratch(): Scratch {
    const started = Date.now();
    const dir = mkdtempSync(join(tmpdir(), "laravel-echo-mercure-apps-"));
    try {
        const tarball = packInto(dir);
        copyFileSync(join(APP_TEMPLATE, "package.json"), join(dir, "package.json"));
        writeFileSync(join(dir, "package-lock.json"), lockFor(tarball));
        try {
            execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, env: npmEnvironment(), encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
        } catch (error) {
            const { stderr } = error as { stderr?: string };
            throw new Error(`npm ci failed in the consumer apps' folder (if test/consumer/app/package.json or the package's dependencies changed, run node test/consumer/update-lock.mjs):\n${stderr ?? String(error)}`);
        }
        for (const [path, file] of docAppFiles()) {
            mkdirSync(dirname(join(dir, path)), { recursive: true });
            writeFileSync(join(dir, path), file.content);
        }
        return { dir, tarball, installMs: Date.now() - started, dispose: () => rmSync(dir, { recursive: true, force: true }) };
    } catch (error) {
        rmSync(dir, { recursive: true, force: true });
        throw error;
    }
}
