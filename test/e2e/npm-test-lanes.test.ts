import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config";
import { ROOT } from "./support/readme-blocks";

// `npm test` (test/support/run-all.mjs) runs the vitest projects in three lanes: `browser`, the other projects it
// names (OTHER_PROJECTS), and `consumer`. A project added to vitest.config.ts and to no lane would never run.

/** Whether vitest's `--project` pattern (a `*` wildcard) matches `name`. */
const matches = (pattern: string, name: string) => new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(name);

describe("npm test's lanes", () => {
    it("run every project of vitest.config.ts exactly once", () => {
        const names = (config.test?.projects as Array<{ test: { name: string } }>).map((project) => project.test.name);
        const script = readFileSync(join(ROOT, "test/support/run-all.mjs"), "utf8");
        const others = JSON.parse(/const OTHER_PROJECTS = (\[[^\]]*\]);/.exec(script)![1]!) as string[];
        const lanes = [["browser"], others, ["consumer"]];
        expect(names.length).toBeGreaterThanOrEqual(7);
        for (const name of names) expect(lanes.filter((lane) => lane.some((pattern) => matches(pattern, name))).length, name).toBe(1);
        expect(script).toContain('vitest(["--project", "browser"], true)');
        expect(script).toContain('vitest(["--project", "consumer"], false)');
    });
});
