// Which bindings the first-render chunk exports only for lazy chunks (unused inside it).
import { rollup } from "rollup";
import nodeResolve from "@rollup/plugin-node-resolve";
import ts from "typescript";
import { existsSync } from "node:fs";
import { minify } from "terser";
import { gzipSync } from "node:zlib";
const ROOT = process.argv[2] ?? "/work/main";
const tsPlugin = { name: "ts", resolveId(id, importer) { if (importer && id.startsWith(".")) { const p = new URL(id, "file://" + importer).pathname; for (const c of [p + ".ts", p + "/index.ts", p]) if (existsSync(c) && !c.endsWith("/")) return c; } return null; },
  transform(code, id) { if (!id.endsWith(".ts")) return null; return ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, useDefineForClassFields: true } }).outputText; } };
const V = "\0app"; const app = { name: "app", resolveId: (id) => id === V ? V : id === "laravel-echo-mercure" ? ROOT + "/src/index.ts" : null, load: (id) => id === V ? `import { MercureConnector } from "laravel-echo-mercure";\nwindow.MercureConnector = MercureConnector;\n` : null };
const b = await rollup({ input: V, onwarn: () => {}, external: (id) => id === "laravel-echo" || id.startsWith("jose"), plugins: [app, tsPlugin, nodeResolve({ browser: true })] });
const out = (await b.generate({ format: "es" })).output.filter((c) => c.type === "chunk");
const entry = out.find((c) => c.isEntry);
const code = entry.code;
const m = code.match(/export \{([^}]*)\};?\s*$/);
const exps = m[1].split(",").map(s => s.trim().split(/\s+as\s+/)[0]);
const body = code.slice(0, m.index);
const dead = [];
for (const name of exps) {
  const re = new RegExp("(?<![\\w$.])" + name.replace(/\$/g, "\\$") + "(?![\\w$])", "g");
  const n = (body.match(re) ?? []).length;
  if (n <= 1) dead.push(name);
}
console.log("exports", exps.length, "used only by lazy chunks:", dead.join(" "));
// who imports them
for (const c of out) if (!c.isEntry) { const used = dead.filter(d => c.importedBindings[entry.fileName]?.includes(d) || false); }
const full = (await minify(code, { compress: true, mangle: true, module: true })).code;
console.log("entry gz", gzipSync(full, { level: 9 }).length);
