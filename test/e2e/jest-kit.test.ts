import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/readme-blocks";

// Issue 34: the testing kit works in Jest too. test/jest/kit.test.mjs runs the built kit (dist/testing/index.js) with
// Jest 30 in its ESM mode (Node's --experimental-vm-modules) and jsdom, and must pass all its tests.
describe("the testing kit under Jest", () => {
    it("passes test/jest/kit.test.mjs with jsdom, Jest's fake timers included", () => {
        const run = spawnSync(
            process.execPath,
            ["--experimental-vm-modules", join(ROOT, "node_modules/jest/bin/jest.js"), "--rootDir", join(ROOT, "test/jest"), "--testEnvironment", "jsdom", "--testMatch", "**/*.test.mjs", "--transform", "{}", "--ci"],
            { cwd: ROOT, encoding: "utf8", timeout: 120_000 },
        );
        expect({ status: run.status, output: run.stderr }).toMatchObject({ status: 0 });
        expect(run.stderr).toMatch(/Tests:\s+4 passed, 4 total/);
    }, 150_000);
});
