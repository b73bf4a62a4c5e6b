// Throughput and latency in Chromium: the connector's listen() callback against a raw EventSource on the same
// topic, same hub, same messages, in the same page.
import { performance } from "node:perf_hooks";
import { BenchPage } from "../lib/page.mjs";
import { topicOf, USER } from "../lib/stack.mjs";
import { median, quantile, waitFor, withTimeout } from "../lib/stats.mjs";

/** The public channel of the plain throughput and latency runs. */
const PLAIN_CHANNEL = { kind: "public", name: "bench", topic: topicOf("bench") };

/** Wall-clock milliseconds with sub-millisecond precision, on the same clock as the page's recorder. */
const now = () => performance.timeOrigin + performance.now();

/**
 * Publish `count` messages, `update(n)` for n = 1..count, in one burst: the hub writes them to the stream in one
 * socket write (MercureHub.publishBurst), and the first arrival holds the page's main thread for `holdMs` before the
 * clock starts, so the rest waits in the page's buffers and the rate measures the receiver, not the publishing.
 * Waits until `which` received them all; resolves with its rate (messages per second from its first arrival to its
 * last) and the main thread's task time per message in µs (the hold excluded).
 */
async function flood(page, stack, which, count, update, holdMs) {
    const updates = [];
    for (let n = 1; n <= count; n++) updates.push(update(n));
    // Over HTTP the hold also covers the burst's publishing (stack.holdFor).
    const hold = stack.holdFor(count, holdMs);
    await page.run(([target, hold]) => window.bench.arm(target, false, false, hold), [count, hold]);
    const streams = stack.server.hub.stats.subscribeConnections.length;
    const before = await page.mainThreadTime();
    let failure = null;
    const published = stack.burst(updates).then(
        () => now(),
        (error) => {
            failure = error;
            return Number.POSITIVE_INFINITY;
        },
    );
    await page.waitDone([which], 120_000).catch((error) => {
        throw failure ?? error;
    });
    const busy = (await page.mainThreadTime()) - before - hold;
    // A stream opened during the burst (a reconnect, or a replay the hub cut at its 1 000-update buffer) would make
    // the rate a reconnection's delay and the count partly another burst's: a bench fault, not a figure.
    const opened = stack.server.hub.stats.subscribeConnections.length - streams;
    if (opened !== 0) throw new Error(`${which}: ${opened} stream(s) opened at the hub during a burst of ${count}`);
    const result = (await page.run(() => window.bench.result()))[which];
    return {
        rate: (result.count - 1) / ((result.last - result.first) / 1000),
        cpu: (busy * 1000) / count,
        // Over HTTP the burst takes a while to publish: when it was still publishing as the clock started (the hold
        // was too short), the rate is partly the publisher's.
        publishBound: (await published) > result.first,
        hold,
    };
}

/**
 * One repetition: the connector alone (listening on `channel`), then a raw EventSource alone on the same topic,
 * or the other way round on odd repetitions. One receiver at a time, checked at the hub (exactly one open
 * stream): two streams in one page compete for its main thread, and the one the hub writes to first wins.
 * The raw EventSource opens while the connector has the channel joined, so the hub cookie grants its topic
 * (the connector's next authorization, on leaving, mints a cookie without it; an open stream keeps its grants).
 */
async function burst(page, stack, rep, count, update, channel, holdMs) {
    const connector = async () => {
        await page.run(([k, n]) => window.bench.listen(k, n, ".tick"), [channel.kind, channel.name]);
        await alone(stack);
        const rate = await flood(page, stack, "connector", count, update, holdMs);
        await page.run(([n]) => window.bench.leaveAll([n]), [channel.name]);
        return rate;
    };
    return alternate(rep, connector, () => rawBurst(page, stack, count, update, channel, holdMs, false));
}

/** Wait until the hub has exactly one open stream (the receiver of the next burst). */
const alone = (stack) => waitFor("one open stream at the hub", () => stack.server.hub.stats.openConnections === 1);

/** Run `first` then `second`, or the other way round on odd repetitions; resolves with `{ connector, raw }` (first's, second's). */
async function alternate(rep, first, second) {
    if (rep % 2 === 0) {
        const c = await first();
        return { connector: c, raw: await second() };
    }
    const r = await second();
    return { connector: await first(), raw: r };
}

/** One burst to a raw EventSource alone on the channel's topic (`readIds`: its handler also reads each event's lastEventId). */
async function rawBurst(page, stack, count, update, { kind, name, topic }, holdMs, readIds) {
    await page.run(([k, n]) => window.bench.listen(k, n, ".none"), [kind, name]);
    await page.run(([t, r]) => window.bench.openRaw([t], true, r), [topic, readIds]);
    await page.run(([n]) => window.bench.leaveAll([n]), [name]);
    await alone(stack);
    const rate = await flood(page, stack, "raw", count, update, holdMs);
    await page.run(() => window.bench.closeRaws());
    return rate;
}

/**
 * Median rates over `reps` bursts and the ratio of the medians; the same for the main thread's time per message
 * (µs), whose ratio is given as raw over connector (the share of the raw receiver's speed the connector keeps
 * when the page's main thread is what limits both).
 */
function summarize(bursts) {
    const connector = median(bursts.map((b) => b.connector.rate));
    const raw = median(bursts.map((b) => b.raw.rate));
    const cpu = { connector: median(bursts.map((b) => b.connector.cpu)), raw: median(bursts.map((b) => b.raw.cpu)) };
    return {
        connector,
        raw,
        ratio: connector / raw,
        publishBound: bursts.filter((b) => b.connector.publishBound || b.raw.publishBound).length,
        holdMs: median(bursts.flatMap((b) => [b.connector.hold, b.raw.hold])),
        cpu: { ...cpu, ratio: cpu.raw / cpu.connector },
        runs: bursts.map((b) => ({ connector: b.connector.rate, raw: b.raw.rate })),
    };
}

/**
 * Measure plain and encrypted throughput and plain latency in one page; `plan` gives the repetitions and
 * message counts (`warmup`, `reps`, `count`, `encryptedCount`, `holdMs`, `latencyReps`, `latencySamples`), and
 * `variants: false` leaves out all but the public channel's throughput and latency (the second tab, tab
 * sharing off, reading ids, the encrypted channel).
 */
export async function measureDelivery(browser, stack, plan, options = {}) {
    const page = await BenchPage.open(browser, stack.server.url, USER.id, options);
    try {
        // Plain: a public channel, through the connector and through a raw EventSource.
        const plainChannel = PLAIN_CHANNEL;
        const plainSend = (n) => stack.publish("bench", "tick", { n });
        const plainUpdate = (n) => stack.update("bench", "tick", { n });
        /** A warm-up burst, then `plan.reps` measured ones on `where`; throws on the page's uncaught errors. */
        const plainRuns = async (where) => {
            await burst(where, stack, 0, plan.warmup, plainUpdate, plainChannel, plan.holdMs);
            const runs = [];
            for (let rep = 0; rep < plan.reps; rep++) runs.push(await burst(where, stack, rep, plan.count, plainUpdate, plainChannel, plan.holdMs));
            if (where.errors.length > 0) throw new Error(`bench page errors: ${where.errors.join("; ")}`);
            return runs;
        };
        const plain = await plainRuns(page);
        const variants = plan.variants !== false ? await sharingVariants(browser, stack, page, plan, plainRuns, options) : null;

        // Both receivers at once for the latency runs.
        await page.run(() => window.bench.listen("public", "bench", ".tick"));
        await page.run(([topic]) => window.bench.openRaw([topic], true), [topicOf("bench")]);
        // Latency: one message at a time; the next is published once both receivers have the previous one.
        // The hub writes to its streams in the order they opened and the page handles them in that order, so
        // half the samples are taken with the connector's stream first and half (after a reopen) with it last.
        const latency = { connector: [], raw: [], added: [] };
        for (let rep = 0; rep < plan.latencyReps; rep++) {
            if (rep % 2 === 1) await page.run(([name]) => window.bench.listen("private", name, ".none"), [`side.latency${rep}`]);
            const run = await latencyRun(page, plan.latencySamples, plainSend);
            for (const key of Object.keys(latency)) latency[key].push(...run[key]);
        }

        await page.run(() => window.bench.closeRaws());
        await page.run(() => window.bench.leaveAll(["bench", "side.latency1", "side.latency3"]));

        const encrypted =
            plan.variants !== false
                ? { encryptedThroughput: summarize(await encryptedRuns(page, stack, plan)), encryptedLatency: await encryptedLatency(page, stack, plan) }
                : null;
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        const p = (key, q) => quantile(latency[key], q);
        return {
            throughput: summarize(plain),
            ...variants,
            ...encrypted,
            latency: {
                connector: { p50: p("connector", 0.5), p99: p("connector", 0.99) },
                raw: { p50: p("raw", 0.5), p99: p("raw", 0.99) },
                added: { p50: p("added", 0.5), p99: p("added", 0.99) },
                samples: latency.connector.length,
            },
        };
    } finally {
        await page.close();
    }
}

/**
 * The variants of the public channel's throughput (in a second tab of `page`, with tab sharing off, a raw
 * EventSource reading ids); `plainRuns(page)` measures the public channel's bursts in a page.
 */
async function sharingVariants(browser, stack, page, plan, plainRuns, options) {
    const plainChannel = PLAIN_CHANNEL;
    const plainUpdate = (n) => stack.update("bench", "tick", { n });
    // The same in a second tab of the page's browser profile: the first tab leads and holds the one hub connection, so
    // this tab's connector receives each event from the leading tab over BroadcastChannel (a structured clone per
    // event); its raw EventSource, opened in this tab, is its baseline.
    const tab = await page.openTab(stack.server.url, options);
    const follower = await plainRuns(tab).finally(() => tab.closeTab());

    // The same with tab sharing off (`shareAcrossTabs: false`, as outside a browser or without Web Locks): the
    // connector's own stream, without the hand-over from the leading tab's hub engine. A page of its own.
    const alonePage = await BenchPage.open(browser, stack.server.url, USER.id, { ...options, shareAcrossTabs: false });
    const alone = await plainRuns(alonePage);
    // What reading each event's id costs a raw EventSource (the connector reads it for its cursor and its
    // once-per-channel ledger): a raw handler that also reads lastEventId against the plain one, in the same page.
    const ids = [];
    try {
        for (let rep = 0; rep < plan.reps; rep++) {
            const withIds = () => rawBurst(alonePage, stack, plan.count, plainUpdate, plainChannel, plan.holdMs, true);
            ids.push(await alternate(rep, withIds, () => rawBurst(alonePage, stack, plan.count, plainUpdate, plainChannel, plan.holdMs, false)));
        }
        if (alonePage.errors.length > 0) throw new Error(`bench page errors: ${alonePage.errors.join("; ")}`);
    } finally {
        await alonePage.close();
    }

    return {
        throughputAlone: summarize(alone),
        throughputFollower: summarize(follower),
        // `connector` here is the raw EventSource that reads each event's id.
        rawIds: summarize(ids),
    };
}

/** The encrypted channel of the throughput and latency runs. */
const ENCRYPTED_CHANNEL = { kind: "encrypted", name: "secure", topic: topicOf("private-encrypted-secure") };

/**
 * The encrypted channel alone, in a page of its own (the bench's encryption part, `bench/encryption.mjs`): its
 * throughput and latency as {@link measureDelivery} measures them, on the build `stack` serves.
 */
export async function measureEncryptedDelivery(browser, stack, plan) {
    const page = await BenchPage.open(browser, stack.server.url, USER.id);
    try {
        const throughput = summarize(await encryptedRuns(page, stack, plan));
        const latency = await encryptedLatency(page, stack, plan);
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        return { encryptedThroughput: throughput, encryptedLatency: latency };
    } finally {
        await page.close();
    }
}

/** The encrypted channel's throughput in `page`: the connector decrypting against a raw EventSource parsing the envelope. */
async function encryptedRuns(page, stack, plan) {
    // Encrypted: a private-encrypted channel through the connector (decrypting) against a raw EventSource
    // on the same topic (parsing the envelope only). Messages are sealed before the clock starts.
    const encryptedChannel = ENCRYPTED_CHANNEL;
    const sealed = [];
    for (let n = 1; n <= Math.max(plan.encryptedCount, plan.warmup); n++) sealed.push(stack.sealed("private-encrypted-secure", "tick", { n }));
    const encryptedUpdate = (n) => stack.updateData("private-encrypted-secure", sealed[n - 1]);
    await burst(page, stack, 0, Math.min(plan.warmup, plan.encryptedCount), encryptedUpdate, encryptedChannel, plan.holdMs);
    const encrypted = [];
    for (let rep = 0; rep < plan.reps; rep++) encrypted.push(await burst(page, stack, rep, plan.encryptedCount, encryptedUpdate, encryptedChannel, plan.holdMs));

    return encrypted;
}

/**
 * The encrypted channel's latency in `page`, measured like the public channel's: the connector's callback (after
 * decryption) against a raw EventSource on the same topic that only parses the envelope, one message at a time,
 * half the samples with the connector's stream first. Each message is sealed before it is published.
 */
async function encryptedLatency(page, stack, plan) {
    const { name, topic } = ENCRYPTED_CHANNEL;
    const side = [];
    await page.run(([n]) => window.bench.listen("encrypted", n, ".tick"), [name]);
    await page.run(([t]) => window.bench.openRaw([t], true), [topic]);
    const latency = { connector: [], raw: [], added: [] };
    try {
        for (let rep = 0; rep < plan.latencyReps; rep++) {
            if (rep % 2 === 1) {
                side.push(`side.encrypted${rep}`);
                await page.run(([n]) => window.bench.listen("private", n, ".none"), [side.at(-1)]);
            }
            const sealed = Array.from({ length: plan.latencySamples }, (_, i) => stack.sealed("private-encrypted-secure", "tick", { n: i + 1 }));
            // The raw receiver cannot read n inside the ciphertext: messages go one at a time, so its arrival is the current one.
            const run = await latencyRun(page, plan.latencySamples, (n) => stack.publishData("private-encrypted-secure", sealed[n - 1]), true);
            for (const key of Object.keys(latency)) latency[key].push(...run[key]);
        }
    } finally {
        await page.run(() => window.bench.closeRaws());
        await page.run(([names]) => window.bench.leaveAll(names), [[name, ...side]]);
    }
    const p = (key, q) => quantile(latency[key], q);
    return {
        connector: { p50: p("connector", 0.5), p99: p("connector", 0.99) },
        raw: { p50: p("raw", 0.5), p99: p("raw", 0.99) },
        added: { p50: p("added", 0.5), p99: p("added", 0.99) },
        samples: latency.connector.length,
    };
}

/**
 * One latency run of `samples` messages: publish-to-callback times for both receivers, and their difference.
 * `rawUnnumbered`: the raw receiver cannot see the message number (an encrypted payload), so any arrival it
 * reports is taken as the current message (messages go one at a time).
 */
async function latencyRun(page, samples, send, rawUnnumbered = false) {
    const run = { connector: [], raw: [], added: [] };
    await page.run(() => window.bench.arm(Number.POSITIVE_INFINITY, true, false));
    try {
        for (let n = 1; n <= samples; n++) {
            const arrived = {};
            const both = new Promise((resolve) => {
                page.onArrival = (which, number, at) => {
                    if (number !== n && !(rawUnnumbered && which === "raw" && number == null)) return;
                    arrived[which] = at;
                    if (arrived.connector !== undefined && arrived.raw !== undefined) resolve();
                };
            });
            const sentAt = now();
            // In-process on the dev hub; over HTTP on the reference hub, where the POST is part of the latency.
            let failure = null;
            Promise.resolve(send(n)).catch((error) => (failure = error));
            await withTimeout(both, 10_000, `message ${n} in both receivers`).catch((error) => {
                throw failure ?? error;
            });
            run.connector.push(arrived.connector - sentAt);
            run.raw.push(arrived.raw - sentAt);
            run.added.push(arrived.connector - arrived.raw);
        }
    } finally {
        page.onArrival = () => undefined;
        await page.run(() => window.bench.arm(0, false, false));
    }
    return run;
}

/**
 * Issue 31: what tab sharing costs a page under load. At a steady publish rate (`plan.rates.public`,
 * `plan.rates.encrypted` messages per second for `plan.durationMs`, published in small in-process bursts every few
 * ms), each message's latency (publish → the listener's callback, the message's own number matched in the page) and
 * the page's main-thread time per message, for one receiver at a time:
 * - `on`: the connector of a page that leads (tab sharing on, the default), alone in its browser context;
 * - `leader` and `follower`: the same with a second tab of that context listening on the same channel, which the
 *   leading tab's engine forwards each event to over BroadcastChannel (their latencies in the same run);
 * - `relayLeader` and `relayed`: the platform's floor for the same hand-over, a second tab that joins nothing while the
 *   leading tab's listener posts the numbers to it on a plain BroadcastChannel, those of one task in one message a
 *   task later (both in one run); `relayEachLeader` and `relayedEach`: the same, one message per number at once;
 * - `off`: the connector of a page with `shareAcrossTabs: false`;
 * - `raw`: a raw `EventSource` in that page whose handler also reads `lastEventId` (public channel only: a raw
 *   receiver cannot read the number inside the ciphertext).
 * On a hub without history (a rejoin's `last_event_id` would replay the previous runs' numbers).
 * `plan.reps` repetitions (after one warm-up), the variants' order rotating; per variant, the medians over the
 * repetitions of each repetition's p50 and p99, every repetition's p99, and the median main-thread µs per message.
 */
export async function measureSharingCost(browser, stack, plan) {
    const pages = await openSharingPages(browser, stack);
    try {
        return summarizeSharing(await sharingRuns(pages, stack, plan), plan);
    } finally {
        await pages.on.close();
        await pages.off.close();
    }
}

/** The variants of {@link measureSharingCost} measured in two tabs: the keys of their first tab's and second tab's receivers. */
const PAIRS = { follower: ["leader", "follower"], relay: ["relayLeader", "relayed"], relayEach: ["relayEachLeader", "relayedEach"] };

/** The runs of {@link measureSharingCost} in `pages` (see {@link openSharingPages}), by kind and receiver, unsummarized. */
export async function sharingRuns(pages, stack, plan) {
    const sealedCount = Math.ceil((plan.rates.encrypted * plan.durationMs) / 1000);
    const sealed = Array.from({ length: sealedCount }, (_, i) => stack.sealed("private-encrypted-secure", "tick", { n: i + 1 }));
    const kinds = {
        public: { channel: PLAIN_CHANNEL, rate: plan.rates.public, update: (n) => stack.update("bench", "tick", { n }) },
        encrypted: { channel: ENCRYPTED_CHANNEL, rate: plan.rates.encrypted, update: (n) => stack.updateData("private-encrypted-secure", sealed[n - 1]) },
    };
    const runs = {};
    for (const [kind, spec] of Object.entries(kinds)) {
        const variants = (kind === "public" ? ["on", "follower", "relay", "relayEach", "off", "raw"] : ["on", "follower", "relay", "relayEach", "off"]).filter((v) => plan.only === undefined || plan.only.includes(v));
        runs[kind] = Object.fromEntries(variants.flatMap((v) => (v in PAIRS ? PAIRS[v].map((key) => [key, []]) : [[v, []]])));
        for (let rep = -1; rep < plan.reps; rep++) {
            for (let i = 0; i < variants.length; i++) {
                const variant = variants[(i + Math.max(rep, 0) + (plan.offset ?? 0)) % variants.length];
                const result = await loadedRun(pages, stack, spec, variant, rep < 0 ? Math.min(plan.durationMs, 300) : plan.durationMs);
                if (rep < 0) continue;
                for (const [key, value] of Object.entries(result)) runs[kind][key].push(value);
            }
        }
    }
    for (const page of [pages.on, pages.off]) if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
    return runs;
}

/** Merge the runs of several {@link sharingRuns} calls (repetitions of the same plan). */
export function mergeSharingRuns(list) {
    const merged = {};
    for (const runs of list)
        for (const [kind, variants] of Object.entries(runs))
            for (const [variant, entries] of Object.entries(variants)) ((merged[kind] ??= {})[variant] ??= []).push(...entries);
    return merged;
}

/** Per kind and receiver: the medians over the repetitions of p50, p99 and main-thread µs per message, and every p99. */
export function summarizeSharing(runs, plan) {
    const summary = {};
    for (const [kind, variants] of Object.entries(runs)) {
        summary[kind] = { rate: plan.rates[kind], durationMs: plan.durationMs };
        for (const [variant, list] of Object.entries(variants)) {
            summary[kind][variant] = {
                p50: median(list.map((run) => run.p50)),
                p99: median(list.map((run) => run.p99)),
                p99s: list.map((run) => run.p99),
                cpu: median(list.map((run) => run.cpu)),
                reps: list.length,
            };
        }
    }
    return summary;
}

/** The two pages {@link measureSharingCost} measures in: one with tab sharing on (the default), one with it off. */
export async function openSharingPages(browser, stack) {
    const on = await BenchPage.open(browser, stack.server.url, USER.id, {});
    const off = await BenchPage.open(browser, stack.server.url, USER.id, { shareAcrossTabs: false });
    return { on, off, origin: stack.server.url };
}

/**
 * One loaded run of `variant` (see {@link measureSharingCost}) on the channel of `spec` for `durationMs`: resolves with the
 * p50, p99 and main-thread µs per message of each receiver measured (`leader` and `follower` for the variant with a
 * second tab).
 */
async function loadedRun(pages, stack, spec, variant, durationMs) {
    const { kind, name, topic } = spec.channel;
    const count = Math.max(1, Math.floor((spec.rate * durationMs) / 1000));
    const page = variant === "off" || variant === "raw" ? pages.off : pages.on;
    let tab = null;
    const receivers = [];
    try {
        if (variant === "raw") {
            await page.run(([k, n]) => window.bench.listen(k, n, ".none"), [kind, name]);
            await page.run(([t]) => window.bench.openRaw([t], true, true), [topic]);
            await page.run(([n]) => window.bench.leaveAll([n]), [name]);
            receivers.push({ key: "raw", page, which: "raw" });
        } else {
            await page.run(([k, n]) => window.bench.listen(k, n, ".tick"), [kind, name]);
            const [first, second] = PAIRS[variant] ?? [variant];
            receivers.push({ key: first, page, which: "connector" });
            if (second !== undefined) {
                tab = await page.openTab(pages.origin, {});
                // follower: the second tab joins too, and the first tab's engine forwards each event to it; relay: the
                // second tab joins nothing, and the first tab's listener posts each number to it on a BroadcastChannel.
                if (variant === "follower") await tab.run(([k, n]) => window.bench.listen(k, n, ".tick"), [kind, name]);
                else await Promise.all([page.run(([m]) => window.bench.relaySend(m), [variant === "relay" ? "task" : "each"]), tab.run(() => window.bench.relayHear(true))]);
                receivers.push({ key: second, page: tab, which: "connector" });
            }
        }
        await waitFor("one open stream at the hub", () => stack.server.hub.stats.openConnections === 1);
        for (const r of receivers) await r.page.run(([target]) => window.bench.arm(target, false, false, 0, true), [count]);
        const before = await Promise.all(receivers.map((r) => r.page.mainThreadTime()));
        const sent = await steadyPublish(stack, count, spec.rate, spec.update);
        for (const r of receivers) await r.page.waitDone([r.which], 60_000);
        const busy = await Promise.all(receivers.map((r) => r.page.mainThreadTime()));
        const out = {};
        for (const [i, r] of receivers.entries()) {
            const { times } = (await r.page.run(() => window.bench.result()))[r.which];
            const latencies = [];
            for (let n = 1; n <= count; n++) if (typeof times[n] === "number") latencies.push(times[n] - sent[n]);
            out[r.key] = { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), cpu: ((busy[i] - before[i]) * 1000) / count };
        }
        return out;
    } finally {
        if (variant === "raw") await page.run(() => window.bench.closeRaws());
        else await page.run(([n]) => window.bench.leaveAll([n]), [name]);
        if (variant in PAIRS && variant !== "follower") await page.run(() => window.bench.relaySend(null));
        if (tab !== null) {
            await tab.run(([n]) => window.bench.leaveAll([n]), [name]);
            await tab.closeTab();
        }
        await waitFor("no open stream at the hub", () => stack.server.hub.stats.openConnections === 0);
    }
}

/**
 * Publish `count` updates (`update(n)`, n = 1..count) at `rate` per second: every couple of ms, the ones due by then in
 * one in-process burst. Resolves with each message's publish time (wall clock, as the page's recorder).
 */
async function steadyPublish(stack, count, rate, update) {
    const sent = new Float64Array(count + 1);
    const start = now();
    let n = 0;
    while (n < count) {
        const due = Math.min(count, Math.floor(((now() - start) * rate) / 1000) + 1);
        if (due > n) {
            const batch = [];
            while (n < due) batch.push(update(++n));
            const at = now();
            for (let m = n - batch.length + 1; m <= n; m++) sent[m] = at;
            await stack.burst(batch);
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return sent;
}
