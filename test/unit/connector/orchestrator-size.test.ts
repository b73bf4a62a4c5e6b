import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** The most lines `mercure-connector.ts` may have (issue 32: the connector orchestrates, modules do the work). */
const MAX_LINES = 450;

/**
 * The longest line allowed there: the longest today is 156 characters; a limit a little above it keeps the line count
 * honest (joining statements onto one line would not make the connector smaller).
 */
const MAX_LINE_LENGTH = 180;

/** What keeps `text` (a connector's source) from counting as an orchestrator; empty when nothing does. */
function orchestratorProblems(text: string): string[] {
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop(); // A final newline ends the last line; it does not start another.
    const problems = lines.length > MAX_LINES ? [`${lines.length} lines, over ${MAX_LINES}: move a cohesive piece into its own module in src/connector/`] : [];
    lines.forEach((line, index) => {
        if (line.length > MAX_LINE_LENGTH) problems.push(`line ${index + 1} has ${line.length} characters, over ${MAX_LINE_LENGTH}`);
    });
    return problems;
}

describe("MercureConnector stays an orchestrator (issue 32)", () => {
    it(`keeps mercure-connector.ts at ${MAX_LINES} lines or fewer, none longer than ${MAX_LINE_LENGTH} characters`, () => {
        const source = readFileSync(resolve(__dirname, "../../../src/connector/mercure-connector.ts"), "utf8");
        expect(orchestratorProblems(source)).toEqual([]);
    });

    it("sees a connector one line too long, and a line joined past the limit", () => {
        const line = "    this.step();";
        expect(orchestratorProblems(`${Array(MAX_LINES).fill(line).join("\n")}\n`)).toEqual([]);
        expect(orchestratorProblems(`${Array(MAX_LINES + 1).fill(line).join("\n")}\n`)).toEqual([
            `${MAX_LINES + 1} lines, over ${MAX_LINES}: move a cohesive piece into its own module in src/connector/`,
        ]);
        expect(orchestratorProblems(`${line}\n${line.repeat(12)}\n`)).toEqual([`line 2 has ${line.length * 12} characters, over ${MAX_LINE_LENGTH}`]);
    });
});
