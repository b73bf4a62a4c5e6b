import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The layers of src/, bottom-up (issue 32; README "Layout"). A file may import files of its own part, of a lower
// layer, and of an earlier part of its own layer; never upward, and no circle between parts.
const LAYERS: readonly (readonly string[])[] = [
    // foundations
    ["errors.ts", "error-messages.ts", "timers.ts", "bounded-wait.ts", "json.ts", "fetch.ts", "lazy-chunk.ts", "topic/"],
    // auth, then transport (transport's platform reads auth's hub-token and auth-result types)
    ["auth/"],
    ["transport/"],
    // channel, dispatch, status
    ["channel/", "dispatch/", "status/"],
    // capabilities
    ["presence/", "whisper/", "crypto/", "share/", "discovery/"],
    ["connector/"],
    // entries
    ["index.ts", "iife.ts", "no-pusher.ts", "frameworks/", "react/", "vue/", "svelte/", "http/", "vite/"],
    // the testing kit, built on the main entry (laravel-echo-mercure/testing)
    ["testing/"],
];

/**
 * Node-only entries beside the dev stack that build on its own public entry (dev/index.ts): the testing kit's
 * end-to-end half (laravel-echo-mercure/testing/e2e, startTestStack). Nothing else outside src/dev/ imports it.
 */
const DEV_CLIENTS = new Set(["testing/e2e.ts → dev/index.ts"]);

/** The package's public entries (package.json "exports"): all `src/dev/` may import of the browser code. */
const PUBLIC_ENTRIES = ["index.ts", "discovery/public.ts", "no-pusher.ts", "react/index.ts", "vue/index.ts", "svelte/index.ts", "http/index.ts", "testing/index.ts", "vite/index.ts"];

/**
 * The dev doctor's imports of the discovery and transport internals it shares with the lazy diagnostics chunk (the
 * probe, the classification, the metadata fetch, the link parsers): none of them is a public entry yet. Listed one by
 * one so that no new internal import from src/dev/ goes unseen; a public diagnostics entry would empty this list.
 */
const DEV_INTERNALS_PENDING = new Set([
    "dev/doctor/checks.ts → discovery/advice.ts",
    "dev/doctor/checks.ts → discovery/classify.ts",
    "dev/doctor/checks.ts → discovery/cookie-reach.ts",
    "dev/doctor/checks.ts → discovery/metadata.ts",
    "dev/doctor/checks.ts → discovery/probe.ts",
    "dev/doctor/checks.ts → discovery/token-claims.ts",
    "dev/doctor/doctor.ts → discovery/metadata.ts",
    "dev/doctor/doctor.ts → discovery/probe.ts",
    "dev/doctor/doctor.ts → transport/platform.ts",
    "dev/doctor/find-hub.ts → discovery/html-links.ts",
    "dev/doctor/find-hub.ts → discovery/link-header.ts",
    "dev/doctor/find-hub.ts → discovery/link-element.ts",
    "dev/doctor/find-hub.ts → discovery/metadata.ts",
    "dev/doctor/find-hub.ts → discovery/probe.ts",
    "dev/doctor/find-hub.ts → discovery/response.ts",
    "dev/doctor/find-hub.ts → transport/platform.ts",
    "dev/doctor/find-hub.ts → transport/deadline.ts",
    "dev/doctor/history.ts → discovery/probe.ts",
    "dev/doctor/history.ts → transport/platform.ts",
]);

const SRC = resolve(__dirname, "../../src");

function sourceFiles(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? sourceFiles(path) : /\.tsx?$/.test(name) ? [path] : [];
    });
}

/** A file's part: its top folder under src/ ("auth/") or its own name for a top-level file ("errors.ts"). */
function partOf(file: string): string {
    const path = relative(SRC, file).replace(/\\/g, "/");
    return path.includes("/") ? path.slice(0, path.indexOf("/") + 1) : path;
}

function resolveImport(from: string, specifier: string): string | null {
    if (!specifier.startsWith(".")) return null;
    const base = resolve(dirname(from), specifier);
    for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
        try {
            if (statSync(candidate).isFile()) return candidate;
        } catch {
            // not this one
        }
    }
    throw new Error(`${relative(SRC, from)} imports ${specifier}, which does not resolve`);
}

/** Every import of every file under src/ (static, type-only, re-exports and dynamic `import()`), resolved to files. */
function importGraph(): { from: string; to: string }[] {
    return sourceFiles(SRC).flatMap((from) => {
        const info = ts.preProcessFile(readFileSync(from, "utf8"), true, true);
        return info.importedFiles.flatMap(({ fileName }) => {
            const to = resolveImport(from, fileName);
            return to === null ? [] : [{ from, to }];
        });
    });
}

/** The position of a part in {@link LAYERS}: [layer, index within the layer]. */
function rankOf(part: string): [number, number] {
    const layer = LAYERS.findIndex((parts) => parts.includes(part));
    return [layer, layer < 0 ? -1 : LAYERS[layer]!.indexOf(part)];
}

const name = (file: string) => relative(SRC, file).replace(/\\/g, "/");

/** The imports between parts that break the layer order (`edges`: file-level imports). */
export function layerViolations(edges: readonly { from: string; to: string }[]): string[] {
    const problems: string[] = [];
    const partEdges = new Map<string, Set<string>>();
    for (const { from, to } of edges) {
        const source = partOf(from);
        const target = partOf(to);
        if (source === target) continue;
        if (source === "dev/") {
            if (!PUBLIC_ENTRIES.includes(name(to)) && !DEV_INTERNALS_PENDING.has(`${name(from)} → ${name(to)}`)) problems.push(`${name(from)} imports ${name(to)}: src/dev/ uses the browser code through the package's public entries only`);
            continue;
        }
        if (target === "dev/") {
            if (DEV_CLIENTS.has(`${name(from)} → ${name(to)}`)) continue;
            problems.push(`${name(from)} imports ${name(to)}: nothing outside src/dev/ imports it`);
            continue;
        }
        const [sourceLayer] = rankOf(source);
        const [targetLayer] = rankOf(target);
        if (sourceLayer < 0 || targetLayer < 0) {
            problems.push(`${name(from)} imports ${name(to)}: place ${sourceLayer < 0 ? source : target} in a layer (test/unit/layers.test.ts)`);
            continue;
        }
        if (targetLayer > sourceLayer) problems.push(`${name(from)} imports ${name(to)}: upward, from ${source} to ${target}`);
        if (!partEdges.has(source)) partEdges.set(source, new Set());
        partEdges.get(source)!.add(target);
    }
    // A circle between parts (within one layer: the upward check above finds those across layers).
    const state = new Map<string, "open" | "done">();
    const visit = (part: string, path: string[]): void => {
        if (state.get(part) === "done") return;
        if (state.get(part) === "open") {
            problems.push(`import circle between folders: ${[...path.slice(path.indexOf(part)), part].join(" → ")}`);
            return;
        }
        state.set(part, "open");
        for (const next of partEdges.get(part) ?? []) visit(next, [...path, part]);
        state.set(part, "done");
    };
    for (const part of partEdges.keys()) visit(part, []);
    return problems;
}

describe("the layers of src/ point one way (issue 32)", () => {
    const edges = importGraph();

    it("has no upward import, no import circle between folders, and src/dev/ reaches the browser code through public entries only", () => {
        expect(layerViolations(edges)).toEqual([]);
    });

    it("places every part of src/ in a layer", () => {
        const parts = new Set(sourceFiles(SRC).map(partOf));
        const unplaced = [...parts].filter((part) => part !== "dev/" && rankOf(part)[0] < 0);
        expect(unplaced).toEqual([]);
    });

    it("sees an upward import, a circle between folders and a dev import of an internal file", () => {
        const at = (path: string) => join(SRC, path);
        expect(layerViolations([{ from: at("errors.ts"), to: at("discovery/classify.ts") }])).toEqual(["errors.ts imports discovery/classify.ts: upward, from errors.ts to discovery/"]);
        expect(layerViolations([
            { from: at("presence/a.ts"), to: at("whisper/b.ts") },
            { from: at("whisper/b.ts"), to: at("presence/c.ts") },
        ])).toEqual(["import circle between folders: presence/ → whisper/ → presence/"]);
        expect(layerViolations([{ from: at("dev/doctor/x.ts"), to: at("discovery/probe.ts") }])).toHaveLength(1);
        expect(layerViolations([{ from: at("dev/doctor/x.ts"), to: at("index.ts") }])).toEqual([]);
        expect(layerViolations([{ from: at("connector/x.ts"), to: at("dev/server.ts") }])).toHaveLength(1);
    });
});
