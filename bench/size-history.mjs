// node bench/size-history.mjs: the core entry's min+gzip size at the main-line commits where features landed,
// so BENCHMARKS.md can say what each feature cost. Not part of npm run bench (it builds a dozen commits);
// it writes bench/size-history.json, which npm run bench reads.
//
// Each commit is checked out in a temporary `git worktree` under the OS temp directory (removed afterwards),
// with this package's node_modules linked in, and only the ESM core entry is built (src/index.ts, laravel-echo
// and jose external, TypeScript through tsconfig.build.json), the way rollup.config.mjs builds dist/index.js.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { minGzip, ROOT, TERSER_OPTIONS } from "./size.mjs";

/** The main-line commits measured, oldest first, each with what it brought to the core entry. */
const COMMITS = [
    { commit: "ad32759", feature: "core connector: public and private channels (first benchmark)" },
    { commit: "59b07e7", feature: "review pass of the core" },
    { commit: "bcafd75", feature: "crypto module added (not wired yet)" },
    { commit: "8e5b415", feature: "presence modules merged (not wired yet)" },
    { commit: "76e1071", feature: "core hardening merged (issue 14)" },
    { commit: "088a9f1", feature: "whisper modules merged (not wired yet)" },
    { commit: "021f00b", feature: "error codes for encrypted, presence and whispers" },
    { commit: "213cdfd", feature: "encrypted channels wired" },
    { commit: "c91b32b", feature: "presence channels wired" },
    { commit: "103fee4", feature: "issue 12: typed callbacks, fetch option passed to EventSource, stream status in errors" },
    { commit: "05cc970", feature: "whispers (issue 6) and discovery and diagnostics (issue 10) wired" },
    { commit: "5e2acaa", feature: "issue 8: the EventSource adapter and hubToken" },
    { commit: "ebc9668", feature: "issue 17: the tabs' sharing client (the hub engine is a lazy chunk)" },
    { commit: "ff7856f", feature: "issue 13: a refused stream after a shared-grant answer re-authorizes at once" },
    { commit: "944590c", feature: "issue 11: the per-message path allocates less (delivery ledger, the tabs' hand-over)" },
    { commit: "0bcbbe3", feature: "issue 11: a connector without host locates its hub in the lazy discovery chunk" },
    { commit: "ba67515", feature: "issue 11: parseLinkHeader and discoverFromDocument move to laravel-echo-mercure/discovery" },
    { commit: "24d43e6", feature: "issue 11: the hubToken machinery becomes a lazy chunk" },
    { commit: "822ac66", feature: "issue 11: our own JWE code instead of jose (a lazy chunk: the core does not change)" },
    { commit: "b93cafe", feature: "one auth request for the joins made while the hub is located" },
    { commit: "e533c9d", feature: "review: the engine's forwarded ids in a DeliveryLedger, one dispatch path" },
    { commit: "3f4158d", feature: "tabs: events to other tabs batched per task (MessageChannel hop); the page's share environment found once" },
    { commit: "8a232a9", feature: "tabs: a leading tab steps down on freeze" },
    { commit: "8032a69", feature: "issue 11: structure (#private in status, auth, channel registry, hub locator; shared helpers)" },
    { commit: "4c25d6f", feature: "one deadline race for the core and the lazy chunks" },
    { commit: "cb19511", feature: "issue 11: #private in transport, share, dispatch and whisper" },
    { commit: "1278387", feature: "review: the dispatcher reads each event's id once" },
    { commit: "34ec6e6", feature: "tabs: a connector created with host queues for the lead at once" },
    { commit: "9814db1", feature: "tabs: a late virtual stream resumes from its own cursor (the engine's replay is lazy)" },
    { commit: "39c46ad", feature: "issue 11: structure, third pass (one parseJson, Echo's own channel methods by interface merging, constants local to their reader)" },
    { commit: "53f6ced", feature: "the envelope parsed with parseJson" },
    { commit: "21f6695", feature: "issue 11: #private for constructor-parameter properties in share, transport, dispatch" },
    { commit: "71ecdbf", feature: "tabs: a catch-up stream for a cursor older than what the engine keeps (in the lazy engine chunk)" },
    { commit: "e69d6c0", feature: "presence: a channel left and joined again in one refresh is seeded again (spec audit)" },
    { commit: "7ef8f5e", feature: "cookie renewal: no renewal loop without a hub write timeout; hubToken call deadline (spec audit)" },
];

/** A rollup config that builds only dist/index.js as rollup.config.mjs does. */
const CONFIG = `import typescript from "@rollup/plugin-typescript";
export default {
    input: "src/index.ts",
    // As rollup.config.mjs: the entry keeps its own code when lazy chunks split off (no facade re-exporting a chunk).
    preserveEntrySignatures: "allow-extension",
    external: (id) => id === "laravel-echo" || id === "jose" || id.startsWith("jose/"), // jose: older commits used it
    plugins: [typescript({ tsconfig: "./tsconfig.build.json", outDir: undefined, declaration: false, noEmitOnError: false })],
    output: { dir: "size-dist", format: "es", entryFileNames: "index.js", chunkFileNames: "chunks/[name]-[hash].js" },
};
`;

const git = (...args) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

const results = [];
const base = mkdtempSync(join(tmpdir(), "lem-size-"));
try {
    for (const { commit, feature } of COMMITS) {
        const dir = join(base, commit);
        git("worktree", "add", "--detach", "--quiet", dir, commit);
        try {
            symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
            writeFileSync(join(dir, "size.rollup.mjs"), CONFIG);
            execFileSync(join(ROOT, "node_modules", ".bin", "rollup"), ["-c", "size.rollup.mjs", "--silent"], { cwd: dir, stdio: "pipe" });
            const size = await minGzip(readFileSync(join(dir, "size-dist", "index.js"), "utf8"));
            const subject = git("log", "-1", "--format=%s", commit);
            results.push({ commit, feature, subject, ...size });
            console.log(`${commit}  ${String(size.gzip).padStart(6)} B  ${feature}`);
        } finally {
            git("worktree", "remove", "--force", dir);
        }
    }
} finally {
    rmSync(base, { recursive: true, force: true });
}
writeFileSync(
    join(ROOT, "bench", "size-history.json"),
    JSON.stringify({ measuredAt: new Date().toISOString().slice(0, 10), terser: TERSER_OPTIONS, gzipLevel: 9, commits: results }, null, 2) + "\n",
);
console.log("written to bench/size-history.json");
