// npm run bench (`npm run build && node bench/run.mjs`): every figure the project publishes comes
// from here, each next to a baseline measured in the same run, and BENCHMARKS.md is written from them.
// Everything runs against the dev stack on 127.0.0.1 (the dev hub, and for some figures the reference hub too); the
// browser figures in headless Chromium. Every loop is
// bounded and every wait has a deadline. `--quick` runs smaller plans (for working on the bench itself; its
// output is not committed).
//
//   sizes        bench/size.mjs: min+gzip of the core entry, the crypto chunk, the IIFE, a whole app, pusher-js
//   delivery     scenarios/delivery.mjs: throughput (plain and encrypted) and latency (plain and encrypted) against a raw EventSource
//   decrypt      scenarios/decrypt.mjs: the crypto chunk's per-message decryption cost against WebCrypto alone
//   join         scenarios/join.mjs: join bursts of N channels, subscribe URL lengths
//   first join   scenarios/first-join.mjs: a page's first join, sharing off and on, in the creation's tick and later
//   warm join    scenarios/warm-join.mjs: a burst of public joins on a page already connected, sharing on and off
//   sharing      scenarios/delivery.mjs (measureSharingCost): latency and main thread per message at a steady rate,
//                sharing on, off, raw, and a follower tab beside its leader, at the top rate and at 100 msg/s
//                (issue 31; the before/after comparison is bench/share-cost-compare.json, from
//                `node bench/share-cost.mjs --before=<dist> --record`)
//   first event  scenarios/first-event.mjs: construction to the first event per capability on a fresh page loading the
//                ESM build as an app bundles it (lazy chunks as requests), against the protocol by hand (issue 32)
//   continuity   scenarios/continuity.mjs: lost/duplicated messages across reopens, with and without history
//   memory       scenarios/memory.mjs: heap after GC through join/leave cycles and delivered messages
//   navigation   scenarios/navigation.mjs: issue 13's auth requests per 100 SPA navigations, sharing off and on
//   page resume  scenarios/page-resume.mjs: events lost and received twice across a multi-page app's navigation (issue 52):
//                a raw EventSource, the connector by default and with resumeAcrossPages, on the dev hub and the reference hub
//   reference    the reference Go hub (test/reference-hub/, behind the dev server's proxy, published to over HTTP):
//                the public channel's throughput and latency, join bursts and continuity, beside the dev hub's
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem, type } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { DEV_HUB, prepareReferenceHub, REFERENCE_HUB, startBenchStack } from "./lib/stack.mjs";
import { renderReport } from "./report.mjs";
import { measureContinuity } from "./scenarios/continuity.mjs";
import { measureDecryptCost } from "./scenarios/decrypt.mjs";
import { measureDelivery, measureSharingCost } from "./scenarios/delivery.mjs";
import { firstEventPlan, measureFirstEvents, startFirstEventStack } from "./scenarios/first-event.mjs";
import { measureFirstJoins } from "./scenarios/first-join.mjs";
import { measureWarmJoins } from "./scenarios/warm-join.mjs";
import { COOKIE_LIMIT, measureCookieSizes, measureJoinBursts, measurePresenceUrls, presenceChannelsUnder, REQUEST_LINE_LIMIT } from "./scenarios/join.mjs";
import { measureBrowserMemory, measureNodeMemory } from "./scenarios/memory.mjs";
import { measureNavigations } from "./scenarios/navigation.mjs";
import { measurePageResume, PAGE_RESUME_PLAN } from "./scenarios/page-resume.mjs";
import { measureSizes, readBudget, ROOT } from "./size.mjs";

const quick = process.argv.includes("--quick");

/** How much each scenario does; the full plan keeps the whole run around 8 minutes on 2 busy cores. */
const PLAN = {
    delivery: quick
        ? { warmup: 500, reps: 3, count: 3_000, encryptedCount: 1_000, holdMs: 300, latencyReps: 2, latencySamples: 100 }
        : { warmup: 1_000, reps: 15, count: 3_000, encryptedCount: 2_000, holdMs: 300, latencyReps: 2, latencySamples: 250 },
    decrypt: { count: 2_000, reps: quick ? 3 : 7 },
    join: { kinds: ["public", "private"], sizes: [1, 10, 50, 100], reps: quick ? 1 : 5, settleMs: 300, windowMs: 4_000 },
    firstJoin: { reps: quick ? 2 : 7, laterMs: 200, latencyMs: 20, follower: true },
    warmJoin: { sizes: [1, 10, 50], reps: quick ? 2 : 7, pauseMs: 300 },
    // 7 repetitions: a stall of the shared machine lands in one variant's run at random (9 runs each of sharing on and
    // off showed p99s of 29.7 and 46.4 ms in the same round), and a median of 3 p99s follows a single one.
    sharing: { reps: quick ? 1 : 7, durationMs: quick ? 600 : 1_000, rates: { public: 5_000, encrypted: 2_500 } },
    // Issue 31's follower at an app's rate, where no tab's queue grows: what the hand-over itself adds.
    sharingTypical: { reps: quick ? 1 : 3, durationMs: quick ? 600 : 2_000, rates: { public: 100, encrypted: 100 }, only: ["follower", "relay"] },
    firstEvent: firstEventPlan(quick),
    cookieSizes: [1, 10, 20, 50, 100],
    presenceUrls: [10, 50, 100],
    continuity: { rate: 200, reopens: 20, reopenEveryMs: 250, leadMs: 500 },
    memory: {
        batch: 100,
        privatePerBatch: 10,
        cycles: quick ? 1_000 : 10_000,
        messages: quick ? 10_000 : 100_000,
        messageBatch: 5_000,
    },
    navigation: { navigations: 100, dwellMs: 50 },
    pageResume: PAGE_RESUME_PLAN,
    // The reference hub: the public channel only, bursts of fewer messages, published over HTTP (1 to 2 ms per
    // message on 16 connections on the 2 busy cores): the hold adapts to the publishing (stack.holdFor).
    reference: {
        delivery: quick
            ? { variants: false, warmup: 300, reps: 3, count: 1_000, holdMs: 300, latencyReps: 2, latencySamples: 100 }
            : { variants: false, warmup: 300, reps: 7, count: 1_000, holdMs: 300, latencyReps: 2, latencySamples: 250 },
        join: { kinds: ["public", "private"], sizes: [1, 10, 100], reps: quick ? 1 : 3, settleMs: 300, windowMs: 4_000 },
    },
};

const versionOf = (name) => JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")).version;

const started = Date.now();
/** Run one section, logging its duration. */
async function section(name, body) {
    const at = Date.now();
    process.stdout.write(`${name.padEnd(12)} … `);
    const result = await body();
    console.log(`${((Date.now() - at) / 1000).toFixed(1)} s`);
    return result;
}

const env = {
    date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
    cpu: cpus()[0]?.model.trim() ?? "unknown CPU",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${type()} ${release()}`,
    node: process.version,
    playwright: versionOf("playwright-core"),
    terser: versionOf("terser"),
    rollup: versionOf("rollup"),
    loadStart: loadavg()[0],
};

/**
 * `--only=page-resume` measures that section alone, on both hubs, into the last full run's results
 * (.bench-results/latest.json), and writes BENCHMARKS.md again from them; the section says when it was measured.
 */
const only = process.argv.find((arg) => arg.startsWith("--only="))?.slice("--only=".length) ?? null;
if (only !== null) {
    if (only !== "page-resume") throw new Error(`--only knows page-resume, not "${only}"`);
    const file = join(ROOT, ".bench-results", "latest.json");
    if (!existsSync(file)) throw new Error(`${file} is missing: run the whole bench (npm run bench) first`);
    const results = JSON.parse(readFileSync(file, "utf8"));
    const browser = await launchChromium();
    try {
        results.plan.pageResume = PLAN.pageResume;
        results.pageResume = await section("page resume", () => measurePageResume(browser, PLAN.pageResume, DEV_HUB));
        const prepared = prepareReferenceHub();
        if (prepared.ok && results.reference?.skipped === null) {
            results.reference.pageResume = await section("page resume (reference)", () => measurePageResume(browser, PLAN.pageResume, REFERENCE_HUB));
        }
        results.pageResumeMeasured = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", load: loadavg()[0] };
    } finally {
        await browser.close();
    }
    writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
    writeFileSync(join(ROOT, "BENCHMARKS.md"), renderReport(results));
    console.log("\nBENCHMARKS.md written again with the page resume section measured now");
    process.exit(0);
}

const sizes = await section("sizes", () => measureSizes());
const budget = readBudget();
const history = JSON.parse(readFileSync(join(ROOT, "bench", "size-history.json"), "utf8"));
/** Issue 32's before/after comparison of the JWE code (recorded once: the earlier code is gone). */
const encryptionBefore = JSON.parse(readFileSync(join(ROOT, "bench", "encryption-before.json"), "utf8"));
/** Issue 32's first-event figures before the capabilities became lazy chunks (recorded once: `node bench/first-event.mjs --record`). */
const firstEventBefore = existsSync(join(ROOT, "bench", "first-event-before.json")) ? JSON.parse(readFileSync(join(ROOT, "bench", "first-event-before.json"), "utf8")) : null;

const browser = await launchChromium();
env.chromium = browser.version();
/** Issue 31's same-run before/after comparison of tab sharing's cost (recorded once: `node bench/share-cost.mjs --before=<dist> --record`). */
const shareCostCompare = existsSync(join(ROOT, "bench", "share-cost-compare.json")) ? JSON.parse(readFileSync(join(ROOT, "bench", "share-cost-compare.json"), "utf8")) : null;
const results = { env, plan: PLAN, requestLineLimit: REQUEST_LINE_LIMIT, cookieLimit: COOKIE_LIMIT, sizes, budget, history, encryptionBefore, firstEventBefore, shareCostCompare };
try {
    await measureDevHub(browser, results);
    results.reference = await section("reference", () => measureReferenceHub(browser));
} finally {
    await browser.close();
}
env.loadEnd = loadavg()[0];
env.seconds = (Date.now() - started) / 1000;

mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
writeFileSync(join(ROOT, ".bench-results", quick ? "quick.json" : "latest.json"), JSON.stringify(results, null, 2) + "\n");
const report = renderReport(results);
if (quick) {
    writeFileSync(join(ROOT, ".bench-results", "BENCHMARKS.quick.md"), report);
    console.log(`\n--quick: written to .bench-results/BENCHMARKS.quick.md in ${env.seconds.toFixed(0)} s (BENCHMARKS.md untouched)`);
} else {
    writeFileSync(join(ROOT, "BENCHMARKS.md"), report);
    console.log(`\nBENCHMARKS.md written in ${env.seconds.toFixed(0)} s`);
}

/**
 * The reference hub's figures (delivery, join bursts, continuity) with the same scenarios as the dev hub's, or
 * why there are none (no Go toolchain). Its stack keeps no history except in the continuity run that asks for it:
 * the Go hub's bolt history writes each publish to disk, which would make the HTTP publishing slower still.
 */
async function measureReferenceHub(browser) {
    const prepared = prepareReferenceHub();
    if (!prepared.ok) return { hub: REFERENCE_HUB.name, skipped: prepared.reason };
    const reference = await startBenchStack({ history: false, hub: REFERENCE_HUB });
    try {
        return {
            hub: REFERENCE_HUB.name,
            skipped: null,
            delivery: await measureDelivery(browser, reference, PLAN.reference.delivery),
            joins: await measureJoinBursts(browser, reference, PLAN.reference.join),
            continuity: await measureContinuity(browser, PLAN.continuity, REFERENCE_HUB),
            pageResume: await measurePageResume(browser, PLAN.pageResume, REFERENCE_HUB),
        };
    } finally {
        await reference.server.close();
    }
}

/** The first-event figures, on a stack of their own that serves the app as a bundler ships it (no hub history). */
async function measureFirstEventsOnOwnStack(browser) {
    const { stack, files } = await startFirstEventStack();
    try {
        return await measureFirstEvents(browser, stack, PLAN.firstEvent, files);
    } finally {
        await stack.server.close();
    }
}

/** Every dev hub figure but the sizes, into `results`. */
async function measureDevHub(browser, results) {
    // Delivery, sharing and memory run on a hub without history, as on the reference hub: the connector leaves and
    // rejoins between bursts, and its rejoin's last_event_id would replay the raw receiver's burst from history (cut
    // at 1 000 updates per connection, then a 3 s reconnect). The rest runs on a hub that keeps history.
    const quiet = await startBenchStack({ history: false });
    const stack = await startBenchStack({ history: true });
    try {
        results.delivery = await section("delivery", () => measureDelivery(browser, quiet, PLAN.delivery));
        results.decrypt = await section("decrypt", () => measureDecryptCost(browser, PLAN.decrypt));
        results.cookies = await section("cookies", async () => [
            await measureCookieSizes(stack, "private", PLAN.cookieSizes),
            await measureCookieSizes(stack, "presence", PLAN.cookieSizes),
        ]);
        results.joins = await section("join", () => measureJoinBursts(browser, stack, PLAN.join));
        results.firstJoins = await section("first join", () => measureFirstJoins(browser, stack, PLAN.firstJoin));
        results.warmJoins = await section("warm join", () => measureWarmJoins(browser, stack, PLAN.warmJoin));
        results.firstEvents = await section("first event", () => measureFirstEventsOnOwnStack(browser));
        results.presenceUrls = await section("urls", () => measurePresenceUrls(browser, stack, PLAN.presenceUrls));
        results.presenceUnderLimit = presenceChannelsUnder(stack, REQUEST_LINE_LIMIT);
        results.continuity = await section("continuity", () => measureContinuity(browser, PLAN.continuity));
        results.navigation = await section("navigation", async () => ({
            before: await measureNavigations(browser, stack, PLAN.navigation, { shareAcrossTabs: false }),
            after: await measureNavigations(browser, stack, PLAN.navigation),
        }));
        results.pageResume = await section("page resume", () => measurePageResume(browser, PLAN.pageResume, DEV_HUB));
        // Without history the memory runs measure what stays in the client's memory.
        results.shareCost = await section("sharing", () => measureSharingCost(browser, quiet, PLAN.sharing));
        results.shareCostTypical = await section("sharing, typical rate", () => measureSharingCost(browser, quiet, PLAN.sharingTypical));
        results.memory = {
            browser: await section("memory (C)", () => measureBrowserMemory(browser, quiet, PLAN.memory)),
            node: await section("memory (N)", () => measureNodeMemory(quiet, { ...PLAN.memory, cyclesLong: PLAN.memory.cycles * 4 })),
        };
    } finally {
        results.refusals = [...quiet.refusals, ...stack.refusals];
        await quiet.server.close();
        await stack.server.close();
    }
}
