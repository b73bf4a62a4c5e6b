// The script-tag build (dist/laravel-echo-mercure.iife.js) without the parts a page may never use: what the page runs
// at once is the IIFE; each lazily loaded part (presence, encrypted channels, whispers, the tabs' engine, discovery,
// diagnostics, ...) is an ES module beside it in dist/iife/, which the IIFE loads with import() on first use, as the
// ESM build's lazy chunks are. A sibling shares the IIFE's own module instances (the channel classes it checks with
// instanceof, MercureError, the stream class): the IIFE puts the modules the siblings import into one global slot
// (SLOT below), and each such import of a sibling reads its bindings from there instead of carrying a copy.
import { basename, resolve } from "node:path";
import { rollup } from "rollup";

/** The IIFE's entry module. */
const ENTRY = resolve("src/iife.ts");

/** The global slot (a registered symbol, so no page name can clash with it) holding the modules siblings import. */
const SLOT = 'globalThis[Symbol.for("laravel-echo-mercure/iife")]';

/** The prefix of the virtual module that stands, in a sibling, for one module of the IIFE. */
const BRIDGE = "\0iife-bridge:";

/**
 * The module graph of the IIFE, read by a build of src/iife.ts with `plugins` (resolve and TypeScript): the modules it
 * runs at once (its static imports, transitively), the lazily loaded entries (every import() target outside them), and
 * the modules of the first kind the second kind import, with their export names, in a stable order.
 */
export async function iifeGraph(plugins) {
    let graph;
    const bundle = await rollup({
        input: ENTRY,
        onwarn: () => undefined,
        plugins: [
            ...plugins,
            {
                name: "iife-graph",
                buildEnd() {
                    const eager = new Set();
                    const visit = (id) => {
                        const info = this.getModuleInfo(id);
                        if (info === null || eager.has(id)) return;
                        eager.add(id);
                        for (const imported of info.importedIds) visit(imported);
                    };
                    visit(ENTRY);
                    const lazy = new Set();
                    const shared = new Set();
                    for (const id of this.getModuleIds()) {
                        const info = this.getModuleInfo(id);
                        for (const target of info.dynamicallyImportedIds) if (!eager.has(target)) lazy.add(target);
                        if (!eager.has(id)) for (const imported of info.importedIds) if (eager.has(imported)) shared.add(imported);
                    }
                    const exposed = [...shared].sort();
                    graph = {
                        lazy: [...lazy].sort(),
                        exposed,
                        slotOf: new Map(exposed.map((id, slot) => [id, slot])),
                        exportsOf: new Map(exposed.map((id) => [id, this.getModuleInfo(id).exports ?? []])),
                    };
                },
            },
        ],
    });
    await bundle.close();
    return graph;
}

/** The file name of a lazily loaded entry in dist/iife/: its module's name (an `index` module's is its folder's). */
function siblingName(id) {
    const name = basename(id).replace(/\.[cm]?[jt]s$/, "");
    return name === "index" ? basename(resolve(id, "..")) : name;
}

/** The inputs of the siblings' build: each lazily loaded entry under its {@link siblingName}. */
export function siblingInputs(graph) {
    return Object.fromEntries(graph.lazy.map((id) => [siblingName(id), id]));
}

/**
 * The plugin of the siblings' build: an import of a module the IIFE runs becomes a virtual module that reads that
 * module's bindings from the IIFE's slot (read when the sibling loads, after the IIFE ran).
 */
export function iifeBridge(graph) {
    return {
        name: "iife-bridge",
        async resolveId(source, importer) {
            if (importer === undefined || importer.startsWith("\0")) return null;
            const resolved = await this.resolve(source, importer, { skipSelf: true });
            const slot = resolved === null ? undefined : graph.slotOf.get(resolved.id);
            return slot === undefined ? null : BRIDGE + slot;
        },
        load(id) {
            if (!id.startsWith(BRIDGE)) return null;
            const slot = Number(id.slice(BRIDGE.length));
            const names = graph.exportsOf.get(graph.exposed[slot]);
            const lines = [`const m = ${SLOT}.m[${slot}];`];
            for (const name of names) lines.push(name === "default" ? "export default m.default;" : `export const ${name} = m.${name};`);
            return lines.join("\n");
        },
    };
}

/**
 * The siblings' chunk of what they read from the IIFE (the bridges into the slot), which every sibling imports. The IIFE
 * asks for it beside the first sibling it loads (the slot's `u`), so that no sibling waits a second round trip for it.
 */
export const IIFE_SHARED = "iife-modules";

/** The IIFE build's entry: src/iife.ts, then the modules the siblings import put into the slot. */
export const IIFE_INPUT = "\0iife-entry";

/**
 * The plugin of the IIFE's build: its entry ({@link IIFE_INPUT}) exports src/iife.ts and puts the modules the siblings
 * import into the slot, and import() of a lazily loaded entry loads its sibling from dist/iife/, resolved against the
 * IIFE's own URL (the script's src when it ran).
 *
 * That URL is read through `Document.prototype`'s `currentScript` getter, never `document.currentScript`: an element
 * named `currentScript` above the script (`<img name="currentScript" src="https://evil.example/">`, DOM clobbering)
 * shadows the document's own property, and every part would be imported from the URL it names. It is taken only from
 * a real `HTMLScriptElement` with a `src`; without one (the file inlined, run as a module or by `eval`) no part loads
 * and no request leaves: each import() rejects, and the channel that needed the part reports `load_failed` saying so.
 */
export function iifeSiblings(graph) {
    const lazy = new Set(graph.lazy);
    return {
        name: "iife-siblings",
        resolveId: (source) => (source === IIFE_INPUT ? IIFE_INPUT : null),
        load(id) {
            if (id !== IIFE_INPUT) return null;
            const imports = graph.exposed.map((module, slot) => `import * as iifeModule${slot} from ${JSON.stringify(module)};`).join("\n");
            const modules = graph.exposed.map((_, slot) => `iifeModule${slot}`).join(", ");
            return `export * from ${JSON.stringify(ENTRY)};
${imports}
const iifeScript = typeof Document == "function" ? Object.getOwnPropertyDescriptor(Document.prototype, "currentScript")?.get?.call(document) : null;
const iifeBase = typeof HTMLScriptElement == "function" && iifeScript instanceof HTMLScriptElement && iifeScript.src ? iifeScript.src : null;
let iifeShared;
${SLOT} = {
    m: [${modules}],
    l: (path) => {
        if (iifeBase === null) return Promise.reject(new Error("the script-tag build has no <script src> of its own to load it beside"));
        iifeShared = iifeShared || import(new URL("./iife/${IIFE_SHARED}.js", iifeBase).href).catch(() => undefined);
        return import(new URL(path, iifeBase).href);
    },
};
`;
        },
        async resolveDynamicImport(specifier, importer) {
            if (typeof specifier !== "string") return null;
            const resolved = await this.resolve(specifier, importer, { skipSelf: true });
            return resolved !== null && lazy.has(resolved.id) ? { id: `./iife/${siblingName(resolved.id)}.js`, external: true } : null;
        },
        renderDynamicImport({ targetModuleId }) {
            return targetModuleId?.startsWith("./iife/") ? { left: `${SLOT}.l(`, right: ")" } : null;
        },
    };
}
