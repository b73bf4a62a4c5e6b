// BENCHMARKS.md's tab-sharing part (issue 31): what sharing one hub connection costs a page, sharing on against off
// and a raw EventSource, the first join, and a follower tab's latency against its leader's. From this run
// (`r.shareCost`: scenarios/delivery.mjs measureSharingCost; `r.firstJoins`) and from the recorded same-run comparison
// of two builds (`r.shareCostCompare`: bench/share-cost-compare.json, `node bench/share-cost.mjs --before=<dist> --record`).

/** The section's heading (bench/share-cost.mjs --record rewrites the section from it to the next heading). */
export const SHARE_COST_HEADING = "### Tab sharing at no cost (issue 31)";

/** A number with `digits` decimals. */
const dec = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
/** A check mark for a goal. */
const mark = (ok) => (ok ? "✓" : "✗");

/** The issue's goals, each a label and a test over one build's figures (`s`: sharing summary, `j`: first joins). */
export function shareCostGoals(s, j) {
    const sameOn = j.find((row) => row.share && row.delay === null && !row.latency && !row.follower);
    const sameOff = j.find((row) => !row.share && row.delay === null && !row.latency);
    const within = (a, b) => a.p99s.every((p99, i) => p99 - b.p99s[i] <= 10);
    return [
        { label: "First join in the creation's tick, `subscribed()`: sharing on ≤ 1.1 × off", ratio: sameOn.subscribed / sameOff.subscribed, ok: sameOn.subscribed <= 1.1 * sameOff.subscribed },
        ...["public", "encrypted"].flatMap((kind) =>
            ["p50", "p99"].map((q) => ({ label: `${kind} ${q}: sharing on ≤ 1.2 × off`, ratio: s[kind].on[q] / s[kind].off[q], ok: s[kind].on[q] <= 1.2 * s[kind].off[q] })),
        ),
        { label: "public p99 within 10 ms of a raw `EventSource` in every repetition", ratio: Number.NaN, ok: within(s.public.on, s.public.raw) },
        { label: "main thread per message, public: sharing on ≤ 1.2 × raw reading `lastEventId`", ratio: s.public.on.cpu / s.public.raw.cpu, ok: s.public.on.cpu <= 1.2 * s.public.raw.cpu },
        ...["public", "encrypted"].flatMap((kind) =>
            ["p50", "p99"].map((q) => ({ label: `${kind} ${q}: follower ≤ 1.5 × its leader`, ratio: s[kind].follower[q] / s[kind].leader[q], ok: s[kind].follower[q] <= 1.5 * s[kind].leader[q] })),
        ),
    ];
}

/** One build's figures as table cells, in the order of {@link figureLabels}. */
function figures(s, j) {
    const row = (share, latency = false) => j.find((entry) => entry.share === share && entry.delay === null && Boolean(entry.latency) === latency && !entry.follower);
    const follower = j.find((entry) => entry.follower);
    /** A first-join row as "auth / subscribed()", or n/a where the run had no such case (a record from before it existed). */
    const join = (share, latency) => {
        const found = row(share, latency);
        return found === undefined ? "n/a" : `${dec(found.auth)} / ${dec(found.subscribed)}`;
    };
    const lat = (v) => `${dec(v.p50, 2)} / ${dec(v.p99, 2)}`;
    return [
        join(true, false),
        join(false, false),
        join(true, true),
        join(false, true),
        follower === undefined ? "n/a" : dec(follower.subscribed),
        lat(s.public.on),
        lat(s.public.off),
        lat(s.public.raw),
        lat(s.encrypted.on),
        lat(s.encrypted.off),
        `${dec(s.public.on.cpu)} / ${dec(s.public.off.cpu)} / ${dec(s.public.raw.cpu)}`,
        `${dec(s.encrypted.on.cpu)} / ${dec(s.encrypted.off.cpu)}`,
        `${lat(s.public.leader)}; ${lat(s.public.follower)}`,
        `${lat(s.encrypted.leader)}; ${lat(s.encrypted.follower)}`,
        `${dec(s.public.leader.cpu)} / ${dec(s.public.follower.cpu)}`,
        ...["public", "encrypted"].flatMap((kind) => [
            s[kind].relayed === undefined ? "n/a" : `${lat(s[kind].relayLeader)}; ${lat(s[kind].relayed)}`,
            s[kind].relayedEach === undefined ? "n/a" : `${lat(s[kind].relayEachLeader)}; ${lat(s[kind].relayedEach)}`,
        ]),
        ...["public", "encrypted"].map((kind) => {
            const { leader, follower, relayLeader, relayed, relayEachLeader, relayedEach } = s[kind];
            const ratios = (a, b) => `${dec(a.p50 / b.p50, 2)} / ${dec(a.p99 / b.p99, 2)}`;
            return relayed === undefined || relayedEach === undefined ? "n/a" : `${ratios(follower, leader)}; ${ratios(relayed, relayLeader)}; ${ratios(relayedEach, relayEachLeader)}`;
        }),
        ...["public", "encrypted"].map((kind) => (s[kind].relayed === undefined ? "n/a" : `${dec(s[kind].relayLeader.cpu)} / ${dec(s[kind].relayEachLeader.cpu)}`)),
        ...["public", "encrypted"].map((kind) => {
            const { follower, relayed } = s[kind];
            return relayed === undefined ? "n/a" : `${dec(follower.p50 / relayed.p50, 2)} / ${dec(follower.p99 / relayed.p99, 2)}`;
        }),
    ];
}

/** The rows of {@link figures}. */
function figureLabels(s) {
    return [
        "First join in the creation's tick, sharing on: until the auth request leaves / until `subscribed()` (ms)",
        "The same, sharing off (ms)",
        "The same with 20 ms added to every response of the page (Chromium's network emulation), sharing on (ms)",
        "The same with 20 ms added, sharing off (ms)",
        "A second tab's first join in its creation's tick, while a tab of the same browser leads: until `subscribed()` (ms)",
        `Public channel at ${s.public.rate.toLocaleString("en-US")} msg/s, sharing on (a lone leading tab): p50 / p99 (ms)`,
        "The same, sharing off (ms)",
        "The same, raw `EventSource` reading `lastEventId` (ms)",
        `Encrypted channel at ${s.encrypted.rate.toLocaleString("en-US")} msg/s, sharing on: p50 / p99 (ms)`,
        "The same, sharing off (ms)",
        "Main thread per message, public: on / off / raw reading ids (µs)",
        "Main thread per message, encrypted: on / off (µs)",
        "Public, a leading tab and a follower tab on the channel: leader p50 / p99; follower p50 / p99 (ms)",
        "Encrypted, the same (ms)",
        "Main thread per message, public, leader / follower (µs)",
        "Public, the platform's floor for that hand-over, per task (the leading tab's listener queues each number and posts those of one task to a second tab on a plain `BroadcastChannel` a task later): leader p50 / p99; second tab p50 / p99 (ms)",
        "Public, the same floor, per message (one `BroadcastChannel` message per number, at once) (ms)",
        "Encrypted, the floor per task (ms)",
        "Encrypted, the floor per message (ms)",
        "Public, second tab / leading tab, p50 / p99: follower; floor per task; floor per message",
        "Encrypted, the same ratios",
        "Main thread per message of the leading tab, public, floor per task / per message (µs)",
        "The same, encrypted (µs)",
        "Public, the follower's latency over the per-task floor's second tab, p50 / p99 (what the connector adds to the hand-over)",
        "The same, encrypted (the follower decrypts for itself; the floor's second tab gets plain numbers)",
    ];
}

/** The section: the recorded before/after comparison (same run), then this run's figures when measured. */
export function shareCostSection(r) {
    const compare = r.shareCostCompare;
    const lines = [
        SHARE_COST_HEADING,
        "",
        "What sharing one hub connection costs a page (`bench/share-cost.mjs`; `scenarios/delivery.mjs` measureSharingCost,",
        "`scenarios/first-join.mjs`). Latency is publish → the listener's callback for every message of a steady publish (the dev",
        "hub in-process, small bursts every 2 ms, on a hub without history), each message matched by its number; p50 and p99",
        "per repetition, medians over the repetitions. One receiver at a time: sharing on (the page leads alone), sharing off",
        "(`shareAcrossTabs: false`), a raw `EventSource` whose handler reads `lastEventId`, and a leading page with a second tab",
        "of its browser context on the same channel (the follower: the leader's engine forwards each event over",
        "`BroadcastChannel`). Beside it, the platform's floor for that hand-over: the same leading page whose listener posts each",
        "number to a second tab on a plain `BroadcastChannel` (no engine), the numbers of one task in one message a task later,",
        "or one message per number at once. The rates are the highest at which two tabs of the 2 busy cores keep up: above them the",
        "follower's queue grows for as long as the publishing lasts, and p50 measures the run's length. Main thread: CDP",
        "`TaskDuration` over the run, per message.",
        "",
    ];
    if (compare) {
        const [before, after] = [compare.builds.before, compare.builds.after];
        lines.push(
            `Before (main, \`${compare.beforeCommit}\`) and after (this branch), measured in one run (${compare.date}, Chromium ${compare.chromium},`,
            `load average ${dec(compare.loadStart, 2)} → ${dec(compare.loadEnd, 2)}), the two builds alternating round by round: ${compare.plan.rounds} rounds of`,
            `${compare.plan.sharing.reps} runs of ${compare.plan.sharing.durationMs} ms per receiver and ${compare.plan.firstJoin.reps} fresh pages per first-join case, per build.`,
            "",
            "| Figure | Before | After |",
            "|---|---|---|",
            // A row neither build measured (a record from before the bench had it) is left out.
            ...figureLabels(after.sharing).flatMap((label, i) => {
                const [was, is] = [figures(before.sharing, before.firstJoins)[i], figures(after.sharing, after.firstJoins)[i]];
                return was === "n/a" && is === "n/a" ? [] : [`| ${label} | ${was} | ${is} |`];
            }),
            "",
            "| Goal (issue 31) | Before | After |",
            "|---|---|---|",
            ...shareCostGoals(after.sharing, after.firstJoins).map((goal, i) => {
                const was = shareCostGoals(before.sharing, before.firstJoins)[i];
                const cell = (g) => `${Number.isFinite(g.ratio) ? dec(g.ratio, 2) + " " : ""}${mark(g.ok)}`;
                return `| ${goal.label} | ${cell(was)} | ${cell(goal)} |`;
            }),
            "",
            `Every repetition's public p99, sharing on / raw (after): ${after.sharing.public.on.p99s.map((p99, i) => `${dec(p99)} / ${dec(after.sharing.public.raw.p99s[i])}`).join("; ")} ms.`,
            "",
        );
        if (compare.notes) lines.push(...compare.notes, "");
    }
    if (r.shareCost && r.firstJoins) {
        lines.push(
            `This run (\`npm run bench\`, ${r.plan.sharing.reps} runs of ${r.plan.sharing.durationMs} ms per receiver; first joins as above):`,
            "",
            "| Figure | This run |",
            "|---|---|",
            ...figureLabels(r.shareCost).map((label, i) => `| ${label} | ${figures(r.shareCost, r.firstJoins)[i]} |`),
            "",
        );
    }
    if (r.shareCostTypical) lines.push(...typicalRate(r.shareCostTypical, r.plan.sharingTypical));
    return lines;
}

/**
 * The follower at an app's rate (`plan.rates`, where neither tab's queue grows): its latency against its leader's,
 * beside the platform's per-task floor for the same hand-over, and the milliseconds each hand-over adds.
 */
function typicalRate(s, plan) {
    const lat = (v) => `${dec(v.p50, 2)} / ${dec(v.p99, 2)}`;
    const added = (a, b) => `${dec(a.p50 - b.p50, 2)} / ${dec(a.p99 - b.p99, 2)}`;
    const ratio = (a, b) => `${dec(a.p50 / b.p50, 2)} ${mark(a.p50 <= 1.5 * b.p50)} / ${dec(a.p99 / b.p99, 2)} ${mark(a.p99 <= 1.5 * b.p99)}`;
    return [
        `The follower at ${s.public.rate} messages/s (a busy app's rate, at which neither tab's queue grows), ${plan.reps} runs of ${plan.durationMs} ms`,
        "per receiver: the same leader / follower pair and the platform's per-task floor as above. At this rate the difference",
        "is what the hand-over from one renderer process to another costs on this machine.",
        "",
        "| Figure | Public | Encrypted |",
        "|---|---|---|",
        `| Leader p50 / p99; follower p50 / p99 (ms) | ${lat(s.public.leader)}; ${lat(s.public.follower)} | ${lat(s.encrypted.leader)}; ${lat(s.encrypted.follower)} |`,
        `| The floor: leading tab p50 / p99; second tab p50 / p99 (ms) | ${lat(s.public.relayLeader)}; ${lat(s.public.relayed)} | ${lat(s.encrypted.relayLeader)}; ${lat(s.encrypted.relayed)} |`,
        `| What the hand-over adds, p50 / p99: follower − leader; floor's second tab − its leading tab (ms) | ${added(s.public.follower, s.public.leader)}; ${added(s.public.relayed, s.public.relayLeader)} | ${added(s.encrypted.follower, s.encrypted.leader)}; ${added(s.encrypted.relayed, s.encrypted.relayLeader)} |`,
        `| Follower / leader, p50 / p99 (issue 31's goal ≤ 1.5) | ${ratio(s.public.follower, s.public.leader)} | ${ratio(s.encrypted.follower, s.encrypted.leader)} |`,
        `| The floor's second tab / its leading tab, p50 / p99 | ${ratio(s.public.relayed, s.public.relayLeader)} | ${ratio(s.encrypted.relayed, s.encrypted.relayLeader)} |`,
        "",
    ];
}
