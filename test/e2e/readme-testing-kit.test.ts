import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractBlocks, ROOT } from "./support/readme-blocks";

// issue 34: docs/testing.md shows the component tests that run in npm test (the kit-happy-dom and
// kit-jsdom projects run test/kit/examples/): each block that names its file (its first line) is that file, as is.

const EXAMPLES = ["react/OrderStatus.tsx", "react/OrderStatus.test.tsx", "vue/OrderStatus.ts", "vue/OrderStatus.test.ts"];

describe('docs/testing.md', () => {
    const readme = readFileSync(join(ROOT, "docs/testing.md"), "utf8");
    const named = new Map(extractBlocks(readme).flatMap((block) => {
        const name = /^\/\/ (\S+)\n/.exec(block.code)?.[1];
        // A block holds its lines without the last newline, which the file ends with.
        return name === undefined ? [] : [[name, block.code + "\n"] as const];
    }));

    it.each(EXAMPLES)("shows test/kit/examples/%s exactly", (file) => {
        expect(named.get(file), `docs/testing.md block "// ${file}"`).toBe(readFileSync(join(ROOT, "test/kit/examples", file), "utf8"));
    });
});
