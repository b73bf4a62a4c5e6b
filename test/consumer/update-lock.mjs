// Write test/consumer/app/package-lock.json anew: pack this build, `npm install` the consumer apps' package.json beside
// it in a temporary folder, and keep the lock without the tarball's integrity (test/consumer/support/scratch.ts writes
// that of each run's tarball). Run it after `npm run build` when test/consumer/app/package.json or the package's own
// dependencies change.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TEMPLATE = join(ROOT, "test/consumer/app");
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const dir = mkdtempSync(join(tmpdir(), "laravel-echo-mercure-lock-"));
try {
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: ROOT, env, encoding: "utf8" }));
    renameSync(join(dir, packed.filename), join(dir, "laravel-echo-mercure.tgz"));
    copyFileSync(join(TEMPLATE, "package.json"), join(dir, "package.json"));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--package-lock-only"], { cwd: dir, env, stdio: "inherit" });
    const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
    delete lock.packages["node_modules/laravel-echo-mercure"].integrity;
    writeFileSync(join(TEMPLATE, "package-lock.json"), JSON.stringify(lock, null, 2) + "\n");
    console.log("test/consumer/app/package-lock.json written");
} finally {
    rmSync(dir, { recursive: true, force: true });
}
