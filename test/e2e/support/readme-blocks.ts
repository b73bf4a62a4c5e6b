/*
 * The docs check: every fenced code block of README.md and of docs/*.md (`docFiles()`) is extracted and checked
 * by its language, so that a block or a page added later is checked without touching this file.
 *
 * - `ts`, `tsx`, `js`, `jsx`, `mjs` (and `typescript`, `javascript`): compiled with `strict` (JavaScript with
 *   `checkJs`), each block as its own module, with the imports it shows, in a throwaway app directory whose
 *   `node_modules` links to this package (so `laravel-echo-mercure` resolves through its `exports`, as in an
 *   app) and to its peer and example dependencies. Ambient declarations the README says its examples assume are
 *   in readme-globals.d.ts.
 * - `sh`, `bash`, `shell`: every command must be one the check knows, naming real things: `npm run` scripts
 *   of package.json, packages `npm install` can mean, and `laravel-echo-mercure` commands and flags the CLI
 *   parses (with shell variables expanded); `curl` with a URL, `cd`, `laravel new`, and the `php artisan`
 *   commands of ARTISAN_COMMANDS.
 * - `html`: inline `<script>` bodies are compiled as JavaScript; `<script src>` must name a file of the build.
 * - `vue`: a single-file component; its `<script setup lang="ts">` (or `<script lang="ts">`) is compiled as a `ts`
 *   block, with Vue's compiler macros (`defineProps`, …) declared as the SFC compiler provides them; the
 *   template is not checked. `tsx` blocks compile with React's automatic JSX runtime (`react-jsx`).
 * - `svelte`: a Svelte 5 component; its `<script lang="ts">` is compiled as a `ts` block, with Svelte's runes;
 *   the markup is not checked.
 * - `php`: the keys of the `mercure` connection must be keys of Laravel's mercure driver.
 * - `text`, `dotenv`, `caddyfile`, `nginx`: deliberately not checked (output, a file listing, an `.env`, another
 *   server's configuration): skipped. Give a block that is not code one of these tags; a block without a
 *   language, or with one this check does not know, fails.
 *
 * A block can also be run, by an HTML comment on the line just before its fence (invisible on GitHub):
 * - `<!-- readme-check: run -->`: a `js` block runs with Node.js in the app directory and must exit 0 with
 *   nothing on stderr; an `sh` block runs with bash (`set -e`) and must exit 0.
 * - `<!-- readme-check: run with the demo -->`: the same, with the demo stack started on a free port and
 *   `http://127.0.0.1:8000` in the block replaced by its origin.
 * - `<!-- readme-check: run in the background -->`: an `sh` block that keeps running (a hub, a subscriber); it
 *   is stopped when every block has run. When it starts a server with `--port <n>`, the port becomes 0 and the
 *   URL the server prints gives the port that replaces `127.0.0.1:<n>` in the blocks after it.
 * - `<!-- readme-check: output -->`: a `text` block holding what the nearest run block above it without an
 *   output yet prints; its non-empty lines must appear as consecutive output lines, `…` matching anything.
 * - `<!-- readme-check: file <app>/<path> -->`: the block is the file `<path>` of the consumer app `<app>`, which
 *   test/consumer/ builds and runs from the packed package (see test/consumer/support/doc-files.ts); a script block
 *   whose first line is a comment naming its file (`// react/OrderStatus.tsx`) is that file too. The README check
 *   compiles such a block under that name, so that the files of one app import each other.
 * Shell blocks run with `MERCURE_JWT_SECRET` and `APP_URL` set (the README says they come from the `.env`),
 * and `npx laravel-echo-mercure` runs this build's CLI (dist/dev/cli.js), never a download.
 * The run steps of one file share one demo and one set of announced ports; each file starts afresh.
 */
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { CliUsageError, parseCliArgs } from "../../../src/dev/cli-args";
import { DoctorUsageError, parseDoctorArgs } from "../../../src/dev/doctor/args";

/** The package root (the directory of package.json). */
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url)).replace(/\/$/, "");

/** The markdown files the check reads, relative to ROOT: README.md, then every docs/*.md page by name. */
export function docFiles(): string[] {
    const pages = readdirSync(join(ROOT, "docs"))
        .filter((name) => name.endsWith(".md"))
        .sort()
        .map((name) => `docs/${name}`);
    return ["README.md", ...pages];
}

/** Every fenced code block of every file of {@link docFiles}, in file order; each block's `index` is unique across them. */
export function extractAllBlocks(files: readonly string[] = docFiles()): ReadmeBlock[] {
    const blocks: ReadmeBlock[] = [];
    for (const file of files) blocks.push(...extractBlocks(readFileSync(join(ROOT, file), "utf8"), file, blocks.length));
    return blocks;
}

/** Languages compiled as TypeScript or JavaScript, and the file extension each gets. */
const SCRIPT_LANGUAGES: Record<string, string> = { ts: ".ts", typescript: ".ts", tsx: ".tsx", js: ".js", javascript: ".js", mjs: ".js", jsx: ".jsx" };
/** Languages whose commands are checked. */
const SHELL_LANGUAGES = new Set(["sh", "bash", "shell"]);
/** Languages that are deliberately not checked: not code, or another program's configuration. */
const SKIPPED_LANGUAGES = new Set(["text", "dotenv", "caddyfile", "nginx"]);
/** Other languages with a check of their own. */
const OTHER_LANGUAGES = new Set(["html", "php", "vue", "svelte"]);

/** What a `<!-- readme-check: … -->` comment asks for. */
export type Directive = "run" | "run with the demo" | "run in the background" | "output" | `file ${string}`;
const DIRECTIVES: readonly string[] = ["run", "run with the demo", "run in the background", "output"];
/** The file directive: `file <app>/<path>`, a relative path of letters, digits, `.`, `-` and `_` (no `..`). */
const FILE_DIRECTIVE = /^file ((?:[\w-]+\/)+[\w-]+(?:\.[\w-]+)+)$/;
/** The first line of a script block that names its file: `// react/OrderStatus.tsx`. */
const NAMED_FIRST_LINE = /^\/\/ ([\w-]+(?:\/[\w.-]+)*\.(?:tsx?|jsx?|c?js|mjs))\n/;

/** One fenced code block of a markdown file. */
export interface ReadmeBlock {
    /** The markdown file it is in, relative to ROOT (`README.md`, `docs/deploying.md`). */
    readonly file: string;
    /** Its position among the blocks extracted together (0-based). */
    readonly index: number;
    /** The file's line of the opening fence (1-based). */
    readonly line: number;
    /** The language tag, lower-cased; `""` when none. */
    readonly language: string;
    /** The block's text, without the fences. */
    readonly code: string;
    /** The `<!-- readme-check: … -->` directive on the line before the fence, if any. */
    readonly directive: string | null;
    /** The heading the block is under. */
    readonly heading: string;
}

/** A short name for a block in test titles and messages. */
export function describeBlock(block: ReadmeBlock): string {
    return `${block.file}:${block.line} (${block.language || "no language"}, under "${block.heading}")`;
}

/** Extract every fenced code block of `markdown` (the text of `file`), in order, numbered from `firstIndex`. */
export function extractBlocks(markdown: string, file = "README.md", firstIndex = 0): ReadmeBlock[] {
    const lines = markdown.split("\n");
    const blocks: ReadmeBlock[] = [];
    let heading = "(top)";
    for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        const title = /^#{1,6}\s+(.*)$/.exec(line);
        if (title !== null) heading = title[1]!.trim();
        const open = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/.exec(line);
        if (open === null) continue;
        const fence = open[1]!;
        const body: string[] = [];
        let j = i + 1;
        for (; j < lines.length; j++) {
            const closing = lines[j]!.trim();
            if (closing.startsWith(fence) && /^(`+|~+)$/.test(closing) && closing[0] === fence[0]) break;
            body.push(lines[j]!);
        }
        let before = i - 1;
        while (before >= 0 && lines[before]!.trim() === "") before--;
        const marker = before >= 0 ? /^<!--\s*readme-check:\s*(.*?)\s*-->$/.exec(lines[before]!.trim()) : null;
        blocks.push({ file, index: firstIndex + blocks.length, line: i + 1, language: open[2]!.toLowerCase(), code: body.join("\n"), directive: marker?.[1] ?? null, heading });
        i = j;
    }
    return blocks;
}

/** How a block is checked, by its language; `null` (with a reason) when the check does not know it. */
export function blockKind(block: ReadmeBlock): "script" | "shell" | "skipped" | "html" | "php" | "vue" | "svelte" | null {
    const { language } = block;
    if (language in SCRIPT_LANGUAGES) return "script";
    if (SHELL_LANGUAGES.has(language)) return "shell";
    if (SKIPPED_LANGUAGES.has(language)) return "skipped";
    if (OTHER_LANGUAGES.has(language)) return language as "html" | "php" | "vue" | "svelte";
    // A Blade view: checked as PHP (the `config()` keys it reads).
    if (language === "blade") return "php";
    return null;
}

/**
 * The file a block is, when it says so: the path of its `file` directive (`react/vite.config.ts`), else the name on the
 * first line of a script block (`// react/OrderStatus.tsx`); `null` otherwise.
 */
export function blockFile(block: ReadmeBlock): string | null {
    const directed = FILE_DIRECTIVE.exec(block.directive ?? "")?.[1];
    if (directed !== undefined) return directed;
    return blockKind(block) === "script" ? (NAMED_FIRST_LINE.exec(block.code)?.[1] ?? null) : null;
}

/** Problems with a block's `readme-check` directive (unknown, or on a block it cannot apply to). */
export function directiveProblems(block: ReadmeBlock): string[] {
    const { directive } = block;
    if (directive === null) return [];
    if (directive.startsWith("file ")) {
        if (!FILE_DIRECTIVE.test(directive)) return [`"readme-check: ${directive}": name the file as <app>/<path>, without ..`];
        const kind = blockKind(block);
        return kind === "script" || kind === "vue" || kind === "svelte" || kind === "html" ? [] : ["only script, vue, svelte and html blocks are app files"];
    }
    if (!DIRECTIVES.includes(directive)) return [`unknown directive "readme-check: ${directive}" (known: ${DIRECTIVES.join(", ")}, file <app>/<path>)`];
    if (directive === "output" && block.language !== "text") return ["an output block must be tagged text"];
    if (directive === "run in the background" && blockKind(block) !== "shell") return ["only sh blocks run in the background"];
    if (directive.startsWith("run") && !(blockKind(block) === "shell" || (blockKind(block) === "script" && block.language !== "ts" && block.language !== "tsx"))) {
        return ["only js and sh blocks can run"];
    }
    return [];
}

/**
 * A throwaway app directory: `node_modules` links to this package and to the packages the examples import,
 * so imports resolve as they do in an app that installed them. Removed by `dispose()`.
 */
export function createAppDir(): { dir: string; dispose(): void } {
    const dir = mkdtempSync(join(tmpdir(), "readme-check-"));
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "laravel-echo-mercure"), "dir");
    // The framework examples (README "React", "Vue") import these too; scoped folders are linked whole.
    // README "Testing your app" imports the test runners and libraries an app's tests use.
    for (const name of ["laravel-echo", "eventsource", "event-source-polyfill", "react", "vue", "vite", "@laravel", "@types", "@vitejs", "@sveltejs", "svelte", "axios", "@inertiajs", "vitest", "@testing-library", "@playwright", "playwright", "playwright-core", "@jest"]) {
        symlinkSync(join(ROOT, "node_modules", name), join(dir, "node_modules", name), "dir");
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-check-app", private: true, type: "module" }));
    return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A script compiled by the check: a block, or an inline script of an html block. */
interface ScriptUnit {
    /** The block it comes from. */
    readonly block: ReadmeBlock;
    /** The file name in the app directory. */
    readonly file: string;
    /** The markdown file's line of the unit's first line. */
    readonly firstLine: number;
}

/** Where {@link typeCheck} compiles: the repository's own packages by default, or an app's (test/consumer/). */
export interface TypeCheckSetting {
    /** The declaration files of what the examples assume (default: readme-globals.d.ts). */
    readonly globals: readonly string[];
    /** Where `@types` packages are found (default: the repository's). */
    readonly typeRoots: readonly string[];
    /** TypeScript's `skipLibCheck` (default: true). */
    readonly skipLibCheck: boolean;
    /** Declare Vue's compiler macros (default: true); Vue's own declarations have them once a file imports `vue`. */
    readonly vueMacros?: boolean;
}

/** The README check's setting: this repository's packages, with the globals of readme-globals.d.ts. */
const REPOSITORY_SETTING: TypeCheckSetting = {
    globals: [join(ROOT, "test/e2e/support/readme-globals.d.ts"), join(ROOT, "test/e2e/support/readme-shims.d.ts")],
    typeRoots: [join(ROOT, "node_modules/@types")],
    skipLibCheck: true,
};

/**
 * Compile every script block (and every inline script of html blocks) as its own module in `appDir`, with
 * `strict`; returns the diagnostics of each block, as `<file>:<line>: <message>`, by block index. Diagnostics outside
 * the blocks go to every block, except those `ignore` accepts (in files of libraries, where `skipLibCheck` is off).
 */
export function typeCheck(
    blocks: readonly ReadmeBlock[],
    appDir: string,
    setting: TypeCheckSetting = REPOSITORY_SETTING,
    ignore: (diagnostic: ts.Diagnostic) => boolean = () => false,
): Map<number, string[]> {
    const units: ScriptUnit[] = [];
    for (const block of blocks) {
        const kind = blockKind(block);
        if (kind === "script") {
            // A block that names its file (its file directive, or its first line: `// react/OrderStatus.tsx`) is
            // written there, so that the blocks of one example import each other as the app's files do.
            const named = blockFile(block);
            const file = named === null ? join(appDir, `block-${block.index}-${block.line}${SCRIPT_LANGUAGES[block.language]!}`) : join(appDir, named);
            mkdirSync(dirname(file), { recursive: true });
            writeFileSync(file, block.code);
            units.push({ block, file, firstLine: block.line + 1 });
        } else if (kind === "vue" || kind === "svelte") {
            for (const script of sfcScripts(block.code)) {
                const file = join(appDir, `block-${block.index}-${block.line}-${script.offset}.ts`);
                writeFileSync(file, script.code);
                units.push({ block, file, firstLine: block.line + 1 + script.offset });
            }
        } else if (kind === "html") {
            for (const script of inlineScripts(block.code)) {
                const file = join(appDir, `block-${block.index}-${block.line}-${script.offset}.js`);
                writeFileSync(file, script.code);
                units.push({ block, file, firstLine: block.line + 1 + script.offset });
            }
        }
    }
    const macros = join(appDir, "vue-macros.d.ts");
    writeFileSync(macros, setting.vueMacros === false ? "export {};\n" : VUE_MACROS);
    const program = ts.createProgram({
        rootNames: [...units.map((unit) => unit.file), ...setting.globals, macros],
        options: {
            strict: true,
            noEmit: true,
            target: ts.ScriptTarget.ES2022,
            module: ts.ModuleKind.ESNext,
            moduleResolution: ts.ModuleResolutionKind.Bundler,
            moduleDetection: ts.ModuleDetectionKind.Force,
            lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
            types: ["node"],
            typeRoots: [...setting.typeRoots],
            allowJs: true,
            checkJs: true,
            jsx: ts.JsxEmit.ReactJSX,
            skipLibCheck: setting.skipLibCheck,
            esModuleInterop: true,
        },
    });
    const byFile = new Map(units.map((unit) => [unit.file, unit]));
    const result = new Map<number, string[]>();
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
        if (ignore(diagnostic)) continue;
        const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
        const unit = diagnostic.file === undefined ? undefined : byFile.get(resolve(diagnostic.file.fileName));
        if (unit === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
            // A diagnostic outside the blocks (the globals file, a library): report it on every block.
            for (const block of blocks) result.set(block.index, [...(result.get(block.index) ?? []), `TS${diagnostic.code}: ${message}`]);
            continue;
        }
        const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
        const list = result.get(unit.block.index) ?? [];
        list.push(`${unit.block.file}:${unit.firstLine + line}: TS${diagnostic.code}: ${message}`);
        result.set(unit.block.index, list);
    }
    return result;
}

/** Vue's compiler macros, which a `<script setup>` uses without importing them, typed as `vue` exports them. */
const VUE_MACROS = `import type * as Vue from "vue";
declare global {
    const defineProps: typeof Vue.defineProps;
    const defineEmits: typeof Vue.defineEmits;
    const defineModel: typeof Vue.defineModel;
    const withDefaults: typeof Vue.withDefaults;
}
export {};
`;

/** The TypeScript `<script>` parts of a Vue single-file component, with the line offset of each one's first line. */
export function sfcScripts(sfc: string): Array<{ code: string; offset: number }> {
    const scripts: Array<{ code: string; offset: number }> = [];
    for (const match of sfc.matchAll(/<script(\s[^>]*)>([\s\S]*?)<\/script>/g)) {
        if (!/\blang\s*=\s*"ts"/.test(match[1]!)) continue;
        const start = match.index + match[0].indexOf(">") + 1;
        scripts.push({ code: match[2]!, offset: sfc.slice(0, start).split("\n").length - 1 });
    }
    return scripts;
}

/** The inline scripts of an html block, with the line offset of each script's first line in the block. */
export function inlineScripts(html: string): Array<{ code: string; offset: number }> {
    const scripts: Array<{ code: string; offset: number }> = [];
    for (const match of html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/g)) {
        if (/\bsrc\s*=/.test(match[1] ?? "")) continue;
        const start = match.index + match[0].indexOf(">") + 1;
        scripts.push({ code: match[2]!, offset: html.slice(0, start).split("\n").length - 1 });
    }
    return scripts;
}

/** The file names the html block's `<script src>` elements load. */
export function scriptSources(html: string): string[] {
    return [...html.matchAll(/<script\s[^>]*\bsrc\s*=\s*"([^"]+)"/g)].map((match) => match[1]!.split("/").at(-1)!);
}

/** The keys of Laravel's mercure broadcasting connection (laravel-mercure §1.1), and of its `claims`. */
export const MERCURE_CONNECTION_KEYS = new Set([
    "driver",
    "url",
    "public_url",
    "secret",
    "subscribe_secret",
    "publish_secret",
    "algorithm",
    "subscribe_algorithm",
    "publish_algorithm",
    "passphrase",
    "subscribe_passphrase",
    "publish_passphrase",
    "subscribe_expiration",
    "publish_expiration",
    "cookie_name",
    "claims",
    "client_options",
    "encryption_key",
    "topic_prefix",
    "client_events",
    "iss",
    "aud",
    "sub",
    "client_id",
]);

/** Problems of a php block: array keys inside its `'mercure' => [...]` that the driver does not know. */
export function phpProblems(code: string): string[] {
    const start = code.indexOf("'mercure' =>");
    if (start === -1) return [];
    const keys = [...code.slice(start + "'mercure' =>".length).matchAll(/'([a-z_]+)'\s*=>/g)].map((match) => match[1]!);
    return keys.filter((key) => !MERCURE_CONNECTION_KEYS.has(key)).map((key) => `'${key}' is not a key of Laravel's mercure connection`);
}

/** One simple command of a shell block: its words after expansion, and the line it starts on in the block. */
export interface ShellCommand {
    readonly words: string[];
    readonly line: number;
}

/** A placeholder for what a command substitution prints. */
const SUBSTITUTED = "substituted-value";

/**
 * Split a shell block into simple commands (on newlines, `;`, `&&`, `||`, `|`, `&`), with quotes removed and
 * variables expanded from `env` and from assignments earlier in the block; the commands inside `$(…)` are
 * returned too. Enough shell for README examples, not a shell.
 */
export function shellCommands(script: string, env: Readonly<Record<string, string>>): ShellCommand[] {
    const variables: Record<string, string> = { ...env };
    const commands: ShellCommand[] = [];
    const source = script.replace(/\\\n/g, "  ");
    let words: string[] = [];
    let word: string | null = null;
    let line = 1;
    let commandLine = 1;
    const endWord = () => {
        if (word !== null) words.push(word);
        word = null;
    };
    const endCommand = () => {
        endWord();
        // Leading NAME=value words are assignments.
        while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
            const assignment = words.shift()!;
            const eq = assignment.indexOf("=");
            variables[assignment.slice(0, eq)] = assignment.slice(eq + 1);
        }
        if (words.length > 0) commands.push({ words, line: commandLine });
        words = [];
        commandLine = line;
    };
    const expand = (at: number): { value: string; next: number } => {
        if (source[at + 1] === "(") {
            let depth = 0;
            let end = at + 1;
            for (; end < source.length; end++) {
                if (source[end] === "(") depth++;
                if (source[end] === ")" && --depth === 0) break;
            }
            for (const inner of shellCommands(source.slice(at + 2, end), variables)) commands.push({ words: inner.words, line: commandLine });
            return { value: SUBSTITUTED, next: end + 1 };
        }
        const match = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(source.slice(at));
        if (match === null) return { value: "$", next: at + 1 };
        const name = match[1] ?? match[2]!;
        return { value: variables[name] ?? `value-of-${name}`, next: at + match[0].length };
    };
    for (let i = 0; i < source.length; ) {
        const char = source[i]!;
        if (char === "\n") {
            endCommand();
            line++;
            commandLine = line;
            i++;
        } else if (char === " " || char === "\t") {
            endWord();
            i++;
        } else if (char === "#" && word === null) {
            while (i < source.length && source[i] !== "\n") i++;
        } else if (char === ";" || char === "|" || char === "&") {
            endCommand();
            i += source[i + 1] === char ? 2 : 1;
        } else if (char === "'") {
            const end = source.indexOf("'", i + 1);
            word = (word ?? "") + source.slice(i + 1, end);
            i = end + 1;
        } else if (char === '"') {
            word = word ?? "";
            i++;
            while (i < source.length && source[i] !== '"') {
                if (source[i] === "\\" && i + 1 < source.length) {
                    word += source[i + 1];
                    i += 2;
                } else if (source[i] === "$") {
                    const { value, next } = expand(i);
                    word += value;
                    i = next;
                } else {
                    word += source[i];
                    i++;
                }
            }
            i++;
        } else if (char === "$") {
            const { value, next } = expand(i);
            word = (word ?? "") + value;
            i = next;
        } else if (char === "\\") {
            word = (word ?? "") + (source[i + 1] ?? "");
            i += 2;
        } else {
            word = (word ?? "") + char;
            i++;
        }
    }
    endCommand();
    return commands;
}

/** The parts of package.json the shell check reads. */
export interface PackageManifest {
    name: string;
    scripts: Record<string, string>;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
}

/** The `php artisan` commands the docs may name: Laravel 13's own commands (and Tinker's). */
const ARTISAN_COMMANDS = new Set(["serve", "config:publish", "make:event", "queue:work", "tinker"]);

/** Problems of one shell command: an unknown program, script, package, CLI command or flag. */
export function commandProblems(command: ShellCommand, manifest: PackageManifest): string[] {
    const [program, ...args] = command.words;
    const at = `line ${command.line} (${command.words.join(" ")})`;
    switch (program) {
        case "npm": {
            const [sub, ...rest] = args;
            if (sub === "ci" || sub === "test") return sub === "test" && manifest.scripts["test"] === undefined ? [`${at}: package.json has no test script`] : [];
            if (sub === "run") return rest[0] !== undefined && manifest.scripts[rest[0]] !== undefined ? [] : [`${at}: package.json has no script "${rest[0]}"`];
            if (sub === "install" || sub === "i") {
                const known = new Set([manifest.name, ...Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies })]);
                return rest.filter((name) => !name.startsWith("-") && !known.has(name.replace(/(.)@.*$/, "$1"))).map((name) => `${at}: "${name}" is neither this package nor one of its dependencies`);
            }
            return [`${at}: the README check does not know "npm ${sub}"`];
        }
        case "npx": {
            const [tool, ...rest] = args;
            // Vite, a peer dependency the docs' own-page walkthrough installs: its build, or its dev server.
            if (tool === "vite" && manifest.peerDependencies?.["vite"] !== undefined) return rest.length === 0 || (rest[0] === "build" && rest.length === 1) ? [] : [`${at}: the docs check knows "npx vite" and "npx vite build"`];
            if (tool !== manifest.name) return [`${at}: the README check only knows "npx ${manifest.name}" and "npx vite"`];
            try {
                // `doctor` parses its own arguments, as the CLI does (src/dev/cli.ts).
                if (rest[0] === "doctor") parseDoctorArgs(rest.slice(1));
                else parseCliArgs(rest);
                return [];
            } catch (error) {
                if (error instanceof CliUsageError || error instanceof DoctorUsageError) return [`${at}: the CLI refuses it: ${error.message}`];
                throw error;
            }
        }
        case "curl":
            return args.some((arg) => arg.startsWith("http://") || arg.startsWith("https://") || arg.startsWith("value-of-")) ? [] : [`${at}: curl without a URL`];
        case "cd":
            return [];
        case "node":
            // A script of the example beside the block (`node server.mjs`).
            return args.length === 1 && /^[\w-]+\.(?:mjs|cjs|js)$/.test(args[0]!) ? [] : [`${at}: the docs check knows "node <script>.mjs"`];
        case "laravel":
            return args[0] === "new" && args[1] !== undefined ? [] : [`${at}: the docs check only knows "laravel new <name>"`];
        case "php":
            return args[0] === "artisan" && ARTISAN_COMMANDS.has(args[1] ?? "") ? [] : [`${at}: the docs check knows "php artisan" with ${[...ARTISAN_COMMANDS].join(", ")}; teach it another command in test/e2e/support/readme-blocks.ts`];
        default:
            return [`${at}: the README check does not know the command "${program}"; teach it in test/e2e/support/readme-blocks.ts`];
    }
}

/**
 * Whether `output` contains `expected`'s non-empty lines as consecutive non-empty lines (`…` matches anything).
 */
export function outputMatches(output: string, expected: string): boolean {
    const lines = (text: string) => text.split("\n").map((line) => line.trimEnd()).filter((line) => line !== "");
    const want = lines(expected).map((line) => new RegExp("^" + line.split("…").map(escapeRegExp).join(".*") + "$"));
    const got = lines(output);
    for (let start = 0; start + want.length <= got.length; start++) {
        if (want.every((pattern, k) => pattern.test(got[start + k]!))) return true;
    }
    return false;
}

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
