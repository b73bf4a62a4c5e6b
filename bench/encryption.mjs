// The bench's encryption part on its own (after `npm run build`): `node bench/encryption.mjs [--compare=<dist>] [--quick]`.
// Measures, in headless Chromium on the dev hub, the per-message decryption cost of the lazy crypto chunk against
// WebCrypto alone (scenarios/decrypt.mjs) and the encrypted channel's throughput and latency against a raw
// EventSource (scenarios/delivery.mjs), the same figures `npm run bench` writes into BENCHMARKS.md. With
// `--compare=<dist>`, another build is measured in the same run, interleaved with this one (its crypto chunk in the
// same page, its IIFE behind a stack of its own): how issue 32's "before" figures were taken, against a build of
// the commit before jose. Prints the figures as JSON and writes them to .bench-results/encryption.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { startBenchStack } from "./lib/stack.mjs";
import { measureDecryptCost } from "./scenarios/decrypt.mjs";
import { measureEncryptedDelivery } from "./scenarios/delivery.mjs";
import { bundleApp, coreEntrySize, cryptoChunkFile, gzipOnly, ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");
const compare = process.argv.find((arg) => arg.startsWith("--compare="))?.slice("--compare=".length);

/** The plan: the encrypted parts of run.mjs's delivery plan, in several rounds so that two builds interleave. */
const PLAN = quick
    ? { rounds: 1, decrypt: { count: 2_000, reps: 3 }, delivery: { warmup: 500, reps: 3, encryptedCount: 1_000, holdMs: 300, latencyReps: 2, latencySamples: 100 } }
    : { rounds: 3, decrypt: { count: 2_000, reps: 7 }, delivery: { warmup: 1_000, reps: 5, encryptedCount: 2_000, holdMs: 300, latencyReps: 2, latencySamples: 250 } };

const builds = { current: join(ROOT, "dist"), ...(compare === undefined ? {} : { compare }) };
const results = { loadStart: loadavg()[0], plan: PLAN, sizes: null, decrypt: null, delivery: {} };
// Min+gzip as BENCHMARKS.md's size table gives them: the crypto chunk as an app's bundler emits it (jose included),
// the IIFE's gzip, the core entry.
results.sizes = {};
for (const [name, distDir] of Object.entries(builds)) {
    results.sizes[name] = {
        chunk: (await bundleApp(`export * from ${JSON.stringify(cryptoChunkFile(distDir))};`)).entry.gzip,
        iife: gzipOnly(join(distDir, "laravel-echo-mercure.iife.js")).gzip,
        core: (await coreEntrySize(distDir)).gzip,
    };
}

const browser = await launchChromium();
try {
    results.decrypt = await measureDecryptCost(browser, { builds, ...PLAN.decrypt });
    for (let round = 0; round < PLAN.rounds; round++) {
        const order = round % 2 === 0 ? Object.keys(builds) : Object.keys(builds).reverse();
        for (const name of order) {
            const stack = await startBenchStack({ history: false, distDir: builds[name] });
            try {
                (results.delivery[name] ??= []).push(await measureEncryptedDelivery(browser, stack, PLAN.delivery));
            } finally {
                await stack.server.close();
            }
        }
    }
} finally {
    await browser.close();
}
results.loadEnd = loadavg()[0];
mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
writeFileSync(join(ROOT, ".bench-results", "encryption.json"), JSON.stringify(results, null, 2) + "\n");
console.log(JSON.stringify(results, null, 2));
