import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/readme-blocks";

// docs/troubleshooting.md has one entry per MercureError code, and no entry for a code that does not exist. The codes
// come from the `MercureErrorCode` type as the compiler sees it, so the unions it is made of in other files
// (`DiagnosisCode`, …) count, and a code added anywhere in that type is caught.

/** Every string literal of the `MercureErrorCode` union of `src/errors.ts`, resolved by the TypeScript compiler. */
function mercureErrorCodes(): string[] {
    const file = join(ROOT, "src/errors.ts");
    const program = ts.createProgram({ rootNames: [file], options: { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler, module: ts.ModuleKind.ESNext } });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(file)!;
    const alias = source.statements.find((statement): statement is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(statement) && statement.name.text === "MercureErrorCode");
    if (alias === undefined) throw new Error("src/errors.ts declares no MercureErrorCode type");
    const type = checker.getTypeAtLocation(alias.name);
    const members = type.isUnion() ? type.types : [type];
    return members.map((member) => {
        if (!member.isStringLiteral()) throw new Error(`MercureErrorCode has a member that is not a string literal: ${checker.typeToString(member)}`);
        return member.value;
    });
}

/** The codes of the entries of docs/troubleshooting.md: its headings that are a code span alone, such as `### `auth_denied``. */
function troubleshootingEntries(markdown: string): string[] {
    const codes: string[] = [];
    let inFence = false;
    for (const line of markdown.split("\n")) {
        if (/^ {0,3}(`{3,}|~{3,})/.test(line)) inFence = !inFence;
        const entry = inFence ? null : /^#{2,4}\s+`([a-z_]+)`\s*$/.exec(line);
        if (entry !== null) codes.push(entry[1]!);
    }
    return codes;
}

describe("docs/troubleshooting.md", () => {
    const markdown = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");
    const codes = mercureErrorCodes();
    const entries = troubleshootingEntries(markdown);

    it("reads the codes of MercureErrorCode, those of DiagnosisCode (another file) included", () => {
        expect(codes).toContain("auth_denied");
        expect(codes).toContain("cookie_missing");
        expect(codes.length).toBeGreaterThanOrEqual(25);
    });

    it("has an entry for every MercureError code", () => {
        expect(codes.filter((code) => !entries.includes(code))).toEqual([]);
    });

    it("has no entry for a code that does not exist, and none twice", () => {
        expect(entries.filter((code) => !codes.includes(code))).toEqual([]);
        expect(entries.filter((code, index) => entries.indexOf(code) !== index)).toEqual([]);
    });

    it("says in every entry what the user sees, the usual cause, the fix and what doctor prints", () => {
        const sections = markdown.split(/^#{2,4}\s+`[a-z_]+`\s*$/m).slice(1);
        const missing = sections.flatMap((section, index) =>
            ["**You see:**", "**Usual cause:**", "**Fix:**", "**`doctor`:**"].filter((label) => !section.includes(label)).map((label) => `${entries[index]}: ${label}`),
        );
        expect(missing).toEqual([]);
    });
});

describe("docs/troubleshooting.md beyond MercureError codes (issue 51)", () => {
    const markdown = readFileSync(join(ROOT, "docs/troubleshooting.md"), "utf8");

    it("has an entry for laravel-echo's own error when stock Echo is given broadcaster: \"mercure\", under its exact message", () => {
        // What laravel-echo 2.5.0 throws (dist/echo.js): `Broadcaster ${typeof broadcaster} ${String(broadcaster)} is not supported.`
        const source = readFileSync(join(ROOT, "node_modules/laravel-echo/dist/echo.js"), "utf8");
        expect(source).toContain("Broadcaster ${typeof this.options.broadcaster} ${String(this.options.broadcaster)} is not supported.");
        const message = `Broadcaster ${typeof "mercure"} ${String("mercure")} is not supported.`;
        expect(markdown).toContain(`### \`${message}\``);
        const entry = markdown.slice(markdown.indexOf(`### \`${message}\``)).split(/^#{2,3} /m)[1]!;
        for (const label of ["**You see:**", "**Usual cause:**", "**Fix:**", "**`doctor`:**"]) expect(entry).toContain(label);
        expect(entry).toContain("MercureConnector");
    });

    it("tells localhost from 127.0.0.1 apart: one host name on both sides", () => {
        expect(markdown).toMatch(/^### One host name on both sides$/m);
    });
});
