import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/readme-blocks";

// docs/configuration.md's Options table has a row for every property of MercureConnectorOptions (read with the
// TypeScript compiler, so an option added later is caught), and no row for an option that does not exist.

/** Echo's own options the table documents beside the connector's. */
const ECHO_OPTIONS = ["withoutInterceptors"];

/** The property names of `MercureConnectorOptions` in src/connector/options.ts. */
function connectorOptions(): string[] {
    const file = join(ROOT, "src/connector/options.ts");
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
    const options = source.statements.find((statement): statement is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(statement) && statement.name.text === "MercureConnectorOptions");
    if (options === undefined) throw new Error("src/connector/options.ts declares no MercureConnectorOptions");
    return options.members.filter(ts.isPropertySignature).map((member) => member.name.getText(source));
}

/** The option names of the rows of the table under `## Options`. */
function documentedOptions(markdown: string): string[] {
    const section = markdown.split(/^## Options$/m)[1]?.split(/^## /m)[0] ?? "";
    return [...section.matchAll(/^\| `([A-Za-z]+)` \|/gm)].map((match) => match[1]!);
}

describe("docs/configuration.md", () => {
    const options = connectorOptions();
    const documented = documentedOptions(readFileSync(join(ROOT, "docs/configuration.md"), "utf8"));

    it("reads the options of MercureConnectorOptions", () => {
        expect(options).toEqual(expect.arrayContaining(["host", "hubToken", "shareAcrossTabs"]));
    });

    it("has a row for every option, and none for an option that does not exist", () => {
        expect(options.filter((option) => !documented.includes(option))).toEqual([]);
        expect(documented.filter((option) => !options.includes(option) && !ECHO_OPTIONS.includes(option))).toEqual([]);
    });
});
