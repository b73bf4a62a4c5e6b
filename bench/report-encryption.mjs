// BENCHMARKS.md's encryption part (the summary rows and the "Encryption (Chromium)" section), from a run's results
// (`r.decrypt`: scenarios/decrypt.mjs; `r.delivery.encryptedThroughput` and `.encryptedLatency`: scenarios/delivery.mjs)
// and issue 32's recorded before/after comparison (`r.encryptionBefore`: bench/encryption-before.json).
import { median } from "./lib/stats.mjs";

/** A whole number with thousands separators. */
const int = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a");
/** A number with `digits` decimals. */
const dec = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
/** Bytes as `12,345 B`. */
const bytes = (value) => `${int(value)} B`;

/** The summary rows of the encrypted channel beside its throughput row: latency and the per-message decryption cost. */
export function encryptionSummaryRows(r) {
    const latency = r.delivery.encryptedLatency;
    const cost = r.decrypt?.ways;
    return [
        ...(latency
            ? [
                  `| Latency p50 / p99, encrypted channel, publish → callback (ms) | ${dec(latency.connector.p50)} / ${dec(latency.connector.p99)} | raw \`EventSource\`, no decryption, ${dec(latency.raw.p50)} / ${dec(latency.raw.p99)} | ${dec(latency.connector.p50 / latency.raw.p50)} / ${dec(latency.connector.p99 / latency.raw.p99)} | |`,
              ]
            : []),
        ...(cost
            ? [
                  `| Decryption per message, all started at once (µs, Chromium) | ${dec(cost.chunk.atOnce, 1)} (jose) | WebCrypto's AES-GCM alone ${dec(cost.webCrypto.atOnce, 1)} | ${dec(cost.chunk.atOnce / cost.webCrypto.atOnce)} | ${cost.jose ? `jose's \`compactDecrypt\` alone ${dec(cost.jose.atOnce, 1)}` : "jose's own cost is the difference"} |`,
              ]
            : []),
    ];
}

/** The "Encryption (Chromium)" section. */
export function encryptionSection(r) {
    const lines = ["## Encryption (Chromium)", ""];
    const cost = r.decrypt;
    if (cost) {
        const { webCrypto, jose, chunk } = cost.ways;
        lines.push(
            "The lazy crypto chunk decrypts each `private-encrypted-` broadcast with jose's `compactDecrypt` (`dir` + `A256GCM`",
            "only, no `zip`) under the channel's key, imported once when the auth response brings it, then reads the broadcast",
            `out of the plaintext. In one page (\`bench/scenarios/decrypt.mjs\`), ${int(cost.count)} sealed messages go through the chunk's`,
            "`decryptEnvelope`, through jose's `compactDecrypt` alone (the chunk's options and key, the plaintext left unread) and,",
            "as the floor, through WebCrypto's `AES-GCM` decrypt alone with every segment decoded beforehand: one at a time (each",
            "awaited before the next: one decryption's latency, WebCrypto's thread hop included) and all started at once (as the",
            `connector starts each on arrival: the cost per message at saturation). Medians of ${cost.reps} runs.`,
            "",
            "| µs per message | one at a time | all at once |",
            "|---|---|---|",
            `| WebCrypto \`AES-GCM\` alone | ${dec(webCrypto.oneByOne, 1)} | ${dec(webCrypto.atOnce, 1)} |`,
            ...(jose ? [`| jose \`compactDecrypt\` alone | ${dec(jose.oneByOne, 1)} | ${dec(jose.atOnce, 1)} |`] : []),
            `| the crypto chunk (jose \`compactDecrypt\` + the envelope) | ${dec(chunk.oneByOne, 1)} | ${dec(chunk.atOnce, 1)} |`,
            `| ratio, chunk / WebCrypto alone | ${dec(chunk.oneByOne / webCrypto.oneByOne)} | ${dec(chunk.atOnce / webCrypto.atOnce)} |`,
            ...(jose
                ? [
                      `| ratio, jose alone / WebCrypto alone | ${dec(jose.oneByOne / webCrypto.oneByOne)} | ${dec(jose.atOnce / webCrypto.atOnce)} |`,
                      `| the chunk's own work around jose (chunk − jose alone) | ${dec(chunk.oneByOne - jose.oneByOne, 1)} | ${dec(chunk.atOnce - jose.atOnce, 1)} |`,
                  ]
                : []),
            "",
        );
    }
    const latency = r.delivery.encryptedLatency;
    if (latency) {
        lines.push(
            `Latency on the encrypted channel, measured as the public channel's (${int(latency.samples)} messages, one at a time, each sealed`,
            "before it is published): the connector's callback after decryption against a raw `EventSource` on the same topic",
            "that only parses the envelope.",
            "",
            "| | p50 (ms) | p99 (ms) |",
            "|---|---|---|",
            `| connector (decrypting) | ${dec(latency.connector.p50)} | ${dec(latency.connector.p99)} |`,
            `| raw \`EventSource\` | ${dec(latency.raw.p50)} | ${dec(latency.raw.p99)} |`,
            `| added by the connector | ${dec(latency.added.p50)} | ${dec(latency.added.p99)} |`,
            "",
        );
    }
    lines.push(...beforeAfter(r.encryptionBefore));
    return lines;
}

/** Issue 32's recorded comparison: the hand-written JWE code against jose, measured interleaved in one run. */
function beforeAfter(record) {
    if (!record) return [];
    const { before, after } = record.builds;
    const delivery = (name) => record.delivery[name];
    const pick = (name, get) => median(delivery(name).map(get));
    const show = (value, digits) => (digits === 0 ? int(value) : dec(value, digits));
    const row = (label, get, digits = 1, ratio = true) =>
        `| ${label} | ${show(get("compare"), digits)} | ${show(get("current"), digits)} | ${ratio ? dec(get("current") / get("compare")) : ""} |`;
    const ways = (name, how) => record.decrypt.ways[name][how];
    return [
        `### Before and after jose (issue 32, recorded ${record.date})`,
        "",
        `${before} against ${after}, measured interleaved in one run of \`node bench/encryption.mjs --compare=<the earlier build's dist>\``,
        `(both crypto chunks in the same page, alternating; ${record.plan.rounds} rounds of each build's IIFE on a stack of its own, alternating;`,
        `load average ${dec(record.loadStart)} at the start and ${dec(record.loadEnd)} at the end on the 2 shared cores, so read the ratios).`,
        "Not regenerated by `npm run bench`: the earlier code is gone (`bench/encryption-before.json`).",
        "",
        "| | before: our own JWE code | after: jose | after / before |",
        "|---|---|---|---|",
        row("decryption per message, one at a time (µs)", (name) => ways(name, "oneByOne")),
        row("decryption per message, all at once (µs)", (name) => ways(name, "atOnce")),
        `| WebCrypto \`AES-GCM\` alone in the same runs, one at a time / all at once (µs) | ${dec(ways("webCrypto", "oneByOne"), 1)} / ${dec(ways("webCrypto", "atOnce"), 1)} | same | |`,
        ...(record.decrypt.ways.jose
            ? [
                  `| jose \`compactDecrypt\` alone in the same runs, one at a time / all at once (µs) | | ${dec(ways("jose", "oneByOne"), 1)} / ${dec(ways("jose", "atOnce"), 1)} | ${dec(ways("jose", "oneByOne") / ways("compare", "oneByOne"))} / ${dec(ways("jose", "atOnce") / ways("compare", "atOnce"))} |`,
              ]
            : []),
        row("encrypted throughput (msg/s, median of the rounds' medians)", (name) => pick(name, (d) => d.encryptedThroughput.connector), 0),
        row("main thread per message at saturation (µs)", (name) => pick(name, (d) => d.encryptedThroughput.cpu.connector)),
        row("raw `EventSource` beside it, no decryption (msg/s)", (name) => pick(name, (d) => d.encryptedThroughput.raw), 0),
        row("latency p50, publish → callback (ms)", (name) => pick(name, (d) => d.encryptedLatency.connector.p50), 2),
        row("latency p99 (ms)", (name) => pick(name, (d) => d.encryptedLatency.connector.p99), 2),
        `| raw \`EventSource\` beside it, latency p50 / p99 (ms) | ${dec(pick("compare", (d) => d.encryptedLatency.raw.p50))} / ${dec(pick("compare", (d) => d.encryptedLatency.raw.p99))} | ${dec(pick("current", (d) => d.encryptedLatency.raw.p50))} / ${dec(pick("current", (d) => d.encryptedLatency.raw.p99))} | |`,
        row("latency added over raw, p50 (ms)", (name) => pick(name, (d) => d.encryptedLatency.added.p50), 2, false),
        row("latency added over raw, p99 (ms)", (name) => pick(name, (d) => d.encryptedLatency.added.p99), 2, false),
        `| lazy crypto chunk, min+gzip, as an app's bundler emits it | ${bytes(record.sizes.compare.chunk)} | ${bytes(record.sizes.current.chunk)} | ${dec(record.sizes.current.chunk / record.sizes.compare.chunk)} |`,
        `| IIFE, gzip (laravel-echo inside; the crypto code inlined before, loaded from a sibling file after) | ${bytes(record.sizes.compare.iife)} | ${bytes(record.sizes.current.iife)} | ${dec(record.sizes.current.iife / record.sizes.compare.iife)} |`,
        `| core entry \`dist/index.js\`, min+gzip | ${bytes(record.sizes.compare.core)} | ${bytes(record.sizes.current.core)} | ${dec(record.sizes.current.core / record.sizes.compare.core)} |`,
        "",
        ...record.notes,
        "",
    ];
}
