// BENCHMARKS.md's first-event part (issue 32): construction to the first event per capability, from this run
// (`r.firstEvents`: scenarios/first-event.mjs) beside the recorded "before" figures (`r.firstEventBefore`:
// bench/first-event-before.json, taken with `node bench/first-event.mjs --record`).
import { LATENCY_MODES, LOAD_WINDOW_MS, MODES } from "./scenarios/first-event.mjs";

/** The section's heading (bench/first-event.mjs --record rewrites the section from it to the next heading). */
export const FIRST_EVENT_HEADING = "### Construction to first event, per capability (issue 32)";

/** A number with `digits` decimals. */
const dec = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a");
/** A whole number with thousands separators. */
const int = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a");

const MODE_LABELS = { raw: "by hand (baseline)", on: "connector, sharing on", off: "connector, sharing off", second: "connector, a second tab while the first leads",
    "navigate-raw": "by hand on the tab's next page (a navigation's baseline)",
    navigate: "connector with `resumeAcrossPages` on the tab's next page",
};

/** The rows that exist for some capabilities only, and not in runs recorded before them (issue 53). */
const EXTRA_MODES = ["second", "navigate-raw", "navigate"];

/** A run's row of `kind` × `mode` at `latencyMs` of added latency (rows recorded before the latency rows had none). */
function findRow(run, kind, mode, latencyMs) {
    return run?.rows.find((entry) => entry.kind === kind && entry.mode === mode && (entry.latencyMs ?? 0) === latencyMs);
}

/** One run's cells: the median in ms and its ratio to the baseline row of the same capability, or why there is none. */
function cell(run, kind, mode, latencyMs, key) {
    const row = findRow(run, kind, mode, latencyMs);
    // A navigation's connector row compares with the protocol by hand on the same next page.
    const base = findRow(run, kind, mode === "navigate" ? "navigate-raw" : "raw", latencyMs);
    if (!row) return ["not measured", ""];
    if (row.reps === 0) return [`failed (${row.failures[0]})`, ""];
    const partial = row.failures.length > 0 ? ` (${row.reps} of ${row.reps + row.failures.length} pages)` : "";
    return [`${dec(row[key])}${partial}`, mode === "raw" || mode === "navigate-raw" ? "1" : dec(row[key] / base?.[key], 2)];
}

/** One run's median time until `subscribed()` (the hub stream open), or nothing when the row failed. */
function subscribedCell(run, kind, mode, latencyMs) {
    const row = findRow(run, kind, mode, latencyMs);
    return row && row.reps > 0 ? dec(row.subscribed) : "";
}

/** The requests after the construction of a row, as `modules, auth, streams, other`. */
function requestCell(row) {
    if (!row || row.reps === 0) return "";
    const { module, auth, stream, snapshot, publish, other } = row.requests;
    const extra = [snapshot > 0 ? `${snapshot} snapshot` : "", publish > 0 ? `${publish} publish` : "", other > 0 ? `${other} other` : ""].filter(Boolean);
    return `${module}, ${auth}, ${stream}${extra.length > 0 ? " + " + extra.join(", ") : ""}`;
}

/** How a row's way reads, with its added latency. */
function wayOf(row) {
    return MODE_LABELS[row.mode] + ((row.latencyMs ?? 0) > 0 ? `, +${row.latencyMs} ms per request` : "");
}

/** A row's waterfall: its median page's requests (start → first byte) and events, ms from the construction. */
function waterfallLine(row) {
    const page = row.page;
    const steps = page.requests.map((entry) => `${entry.name} ${dec(entry.start)}→${dec(entry.firstByte)}`);
    const joined = Number.isFinite(page.joined) ? `constructed and joined ${dec(page.joined)}; ` : "";
    const here = page.here !== null && Number.isFinite(page.here) ? `, \`here()\` ${dec(page.here)}` : "";
    const subscribed = page.subscribed === null ? "`subscribed` not yet" : `\`subscribed\` ${dec(page.subscribed)}`;
    return `- ${row.label}, ${wayOf(row)}: ${joined}${steps.join(", ")}; ${subscribed}${here}, first event ${dec(page.first)}`;
}

/** One table: each capability's rows in `modes` at `latencyMs`, one group of columns per run. */
function table(runs, shown, modes, latencyMs, now) {
    const header = runs.flatMap(([name, run]) => {
        const label = name === "before" ? `before (\`${run.commit}\`)` : "this run";
        return [`First event, ${label} (ms)`, "× baseline", `\`subscribed()\`, ${label} (ms)`];
    });
    const lines = [
        `| First use | Way | ${header.join(" | ")} | Requests after construction${now ? "" : " (before)"}: module files, auth, streams |`,
        `|---|---|${header.map(() => "---|").join("")}---|`,
    ];
    for (const capability of shown.rows.filter((row) => row.mode === "raw" && (row.latencyMs ?? 0) === 0)) {
        for (const mode of [...modes, ...EXTRA_MODES]) {
            if (EXTRA_MODES.includes(mode) && !runs.some(([, run]) => findRow(run, capability.kind, mode, latencyMs))) continue;
            const row = findRow(shown, capability.kind, mode, latencyMs);
            const cells = runs.flatMap(([, run]) => [...cell(run, capability.kind, mode, latencyMs, "first"), subscribedCell(run, capability.kind, mode, latencyMs)]);
            lines.push(`| ${capability.label}: first event | ${MODE_LABELS[mode]} | ${cells.join(" | ")} | ${requestCell(row)} |`);
            if (capability.kind === "presence") {
                const hereCells = runs.flatMap(([, run]) => [...cell(run, capability.kind, mode, latencyMs, "here"), ""]);
                lines.push(`| presence channel: first \`here()\` | ${MODE_LABELS[mode]} | ${hereCells.join(" | ")} | |`);
            }
        }
    }
    return lines;
}

/** The section: the tables, the waterfalls, what the figures say. */
export function firstEventSection(r) {
    const now = r.firstEvents ?? null;
    const before = r.firstEventBefore ?? null;
    if (now === null && before === null) return [];
    const shown = now ?? before;
    const runs = [before ? ["before", before] : null, now ? ["this run", now] : null].filter(Boolean);
    const latency = shown.plan.latencyMs ?? 0;
    const lines = [
        FIRST_EVENT_HEADING,
        "",
        "A fresh page (a new browser context per page: empty HTTP cache and cookie jar, so every module file is downloaded",
        "cold) loads the app as a code-splitting bundler ships it (`bench/lib/app-site.mjs`: rollup + node-resolve over",
        "`dist/index.js`, laravel-echo in the entry, each chunk minified and served as its own file by the dev server, so a lazy",
        "chunk is a real request), logs in, carries the session's CSRF token in `<meta name=\"csrf-token\">` as a Blade layout",
        "renders it (laravel-echo reads it and the connector sends it), then in one tick constructs `new Echo({ broadcaster: MercureConnector, host })`",
        "and makes the capability's first use. Times run from just before the construction to the first event delivered to",
        "the listener (presence: also to the first `here()`); the event is published through the dev app's `/dev/broadcast`",
        "once the channel fired `subscribed()`; a whisper comes from a second page (its own cookie) that publishes whispers",
        `to the channel's whisper topic one after another, each POST awaited and ${shown.plan.whisperEveryMs} ms apart, while the row runs (part of a`,
        "whisper row is the wait for the next whisper: up to one POST and that gap). The baseline of each",
        "capability is the same page doing the protocol by hand on the same hub: the batch auth `fetch` for the one channel",
        "(without a token: the route `Broadcast::routes()` registers is exempt from the CSRF check),",
        "then one `EventSource` with its `match` (presence: with its `match_urlpattern` and the snapshot `fetch` on open;",
        "encrypted: WebCrypto's AES-GCM with the key from the auth response; whisper: the whisper topic alone), publishing on",
        `its \`open\`. Dev hub on 127.0.0.1, medians of ${shown.plan.reps} pages per row, the rows' order rotating between repetitions`,
        "(`node bench/first-event.mjs` runs this part alone).",
        "",
        ...table(runs, shown, MODES, 0, now),
    ];
    if (latency > 0) {
        lines.push(
            "",
            `On 127.0.0.1 a request costs the page about a millisecond plus the server's work, so a lazy chunk on the path barely`,
            `shows. The same pages again with ${latency} ms added to every request of the page (Chromium's network emulation: each response`,
            `starts ${latency} ms later, as over a network with that round trip; the page's own publish request too, the whisper sender's not),`,
            `by hand and with the default options, ${shown.plan.latencyReps} pages per row: each request on the first event's path in series now costs`,
            `at least ${latency} ms.`,
            "",
            ...table(runs, shown, LATENCY_MODES, latency, now),
        );
    }
    const loaded = shown.rows.find((row) => row.reps > 0)?.modulesAtLoad;
    const eager = shown.files.filter((file) => !file.lazy);
    const lazy = shown.files.filter((file) => file.lazy);
    lines.push(
        "",
        `Before the construction each page loaded ${loaded ?? "n/a"} module files (${eager.map((file) => `\`${file.file}\` ${int(file.bytes)} B`).join(", ")}, minified, not`,
        `gzipped by the dev server); the app module had run ${dec(shown.readyAt)} ms after the navigation started (median, no added latency). Lazy files: ${lazy.map((file) => `\`${file.file.replace(/^chunks\//, "").replace(/-[A-Za-z0-9_-]{8}\.js$/, "")}\` ${int(file.bytes)} B`).join(", ")}.`,
        ...scriptBytesLines(shown),
        "",
        `Waterfall of the median page of each row${now ? "" : " (before)"}: each request's start → first byte, ms from the construction (module files by chunk name):`,
        "",
        ...shown.rows.filter((row) => row.page).map(waterfallLine),
        "",
    );
    const errors = shown.rows.filter((row) => row.errors.length > 0);
    if (errors.length > 0) lines.push(...errors.map((row) => `${row.label}, ${wayOf(row)}: the channel reported ${row.errors.join("; ")}`), "");
    const failed = shown.rows.filter((row) => row.failures.length > 0);
    if (failed.length > 0) lines.push(...failed.map((row) => `${row.label}, ${wayOf(row)}: ${row.failures.length} page(s) failed: ${row.failures[0]}`), "");
    if (before?.sameRun) {
        lines.push(
            `Both builds were measured in the same run on ${before.date}, their pages interleaved row by row (\`node bench/first-event.mjs`,
            `--compare=${before.dist}\`; load average ${dec(before.loadStart, 2)} at the start, ${dec(before.loadEnd, 2)} at the end on the 2 shared cores).`,
            "",
        );
    } else if (before) {
        lines.push(
            `The before figures were taken on ${before.date} at \`${before.commit}\` (load average ${dec(before.loadStart, 2)} at the start, ${dec(before.loadEnd, 2)} at the end on the`,
            "2 shared cores: compare ratios rather than milliseconds across runs), and are not regenerated by `npm run bench`",
            "(`bench/first-event-before.json`).",
            "",
        );
    }
    if (before?.notes) lines.push(...before.notes, "");
    return lines;
}

/**
 * Issue 53: the bytes (gzip, level 9) of the module files the median page of each capability's default row (sharing
 * on, no added latency) downloaded up to its first event, the app's entry included; empty for figures recorded before
 * the bench counted them.
 */
function scriptBytesLines(shown) {
    const rows = shown.rows.filter((row) => row.mode === "on" && !row.latencyMs && Number.isFinite(row.scriptGzip));
    if (rows.length === 0) return [];
    const lines = [
        "",
        `Script bytes a page downloaded up to its first event, sharing on (gzip of every module file the median page requested, the entry with laravel-echo included): ${rows.map((row) => `${row.label} ${int(row.scriptGzip)} B`).join(", ")}.`,
    ];
    if (shown.loadBytes) {
        const each = (row) => (Number.isFinite(row.gzip) ? `${row.label} ${int(row.gzip)} B (${row.files.join(" + ")})` : `${row.label}: failed (${row.failure})`);
        lines.push(
            "",
            `Script bytes a page downloads at load (issue 53): a lone tab, sharing on, every module file it asked for within ${LOAD_WINDOW_MS / 1000} s of the construction (one page per capability: which files a page asks for does not depend on timing), gzip: ${shown.loadBytes.map(each).join("; ")}.`,
        );
    }
    return lines;
}

/** Issue 53: the summary's rows of what a page downloads at load and of a second tab's first event, from this run. */
function loadAndSecondTabRows(r) {
    const run = r.firstEvents;
    if (!run) return [];
    const rows = [];
    const loads = run.loadBytes ?? [];
    const reverb = r.sizes?.reverbApp?.gzip;
    if (loads.length > 0) {
        const worst = Math.max(...loads.filter((row) => row.kind === "public" || row.kind === "private").map((row) => row.gzip));
        rows.push(
            `| Script bytes a lone page downloads within ${LOAD_WINDOW_MS / 1000} s, sharing on: ${loads.map((row) => row.kind).join(" / ")} (gzip, Chromium) | ${loads.map((row) => int(row.gzip)).join(" / ")} | a Reverb/Pusher app (laravel-echo + pusher-js) ${int(reverb)} | ${loads.map((row) => dec(row.gzip / reverb, 2)).join(" / ")} | public and private ≤ 20,400 B (issue 53) ${worst <= 20_400 ? "✓" : "✗"} |`,
        );
    }
    rows.push(
        ...ratioRows(run, "second", "on", "Construction to first event in a second tab while the first leads", "the lone tab's (sharing on)", (ratio) => ratio <= 1.2, "≤ 1.2 (issue 53)"),
        ...ratioRows(run, "navigate", "navigate-raw", "Construction to first event on the tab's next page (a navigation), `resumeAcrossPages`", "by hand on the same next page", (ratio) => ratio < 1, "< 1 (issue 53's stretch goal)"),
    );
    return rows;
}

/**
 * Issue 53: one summary row per added latency for the rows of `mode` against those of `base` (same capabilities, same
 * run): `label` and `baseLabel` name them, `met` judges each ratio against `goal`.
 */
function ratioRows(run, mode, base, label, baseLabel, met, goal) {
    const kinds = [...new Set(run.rows.filter((row) => row.mode === mode).map((row) => row.kind))];
    return [...new Set(run.rows.filter((row) => row.mode === mode).map((row) => row.latencyMs ?? 0))].map((latencyMs) => {
        const ms = (kind, way) => {
            const row = findRow(run, kind, way, latencyMs);
            return row && row.reps > 0 ? row.first : Number.NaN;
        };
        const ratios = kinds.map((kind) => ms(kind, mode) / ms(kind, base));
        const latency = latencyMs > 0 ? `, +${latencyMs} ms per request` : "";
        return `| ${label}${latency}: ${kinds.join(" / ")} (ms, Chromium) | ${kinds.map((kind) => dec(ms(kind, mode))).join(" / ")} | ${baseLabel} ${kinds.map((kind) => dec(ms(kind, base))).join(" / ")} | ${ratios.map((ratio) => dec(ratio, 2)).join(" / ")} | ${goal} ${ratios.every(met) ? "✓" : "✗"} |`;
    });
}

/** The summary row's label (bench/first-event.mjs --record finds the row by it). */
export const FIRST_EVENT_SUMMARY_LABEL = "Construction to first event, tab sharing on, fresh page";

/**
 * The summary's rows: construction to the first event (a presence channel's first `here()`) with tab sharing on (the
 * default), per capability, beside the protocol by hand, without and with the added latency, from this run (the recorded before figures' ratios in the
 * target column), or from the before figures alone when this run has none.
 */
export function firstEventSummaryRows(r) {
    const before = r.firstEventBefore ?? null;
    const shown = r.firstEvents ?? before;
    if (!shown) return [];
    const kinds = shown.rows.filter((row) => row.mode === "raw" && (row.latencyMs ?? 0) === 0).map((row) => row.kind);
    // Issue 53 times a presence channel to its first `here()` (the members: what a presence page waits for), the others to
    // their first event (for the encrypted channel decrypted, for whispers the first one heard).
    const ms = (run, kind, mode, latencyMs) => {
        const entry = findRow(run, kind, mode, latencyMs);
        return entry && entry.reps > 0 ? (kind === "presence" ? (entry.here ?? Number.NaN) : entry.first) : Number.NaN;
    };
    const named = kinds.map((kind) => (kind === "presence" ? "presence (`here()`)" : kind));
    const list = (values) => values.join(" / ");
    const ratios = (run, latencyMs) => list(kinds.map((kind) => dec(ms(run, kind, "on", latencyMs) / ms(run, kind, "raw", latencyMs), 2)));
    const which = r.firstEvents ? "" : ` (before, \`${before.commit}\`)`;
    const row = (latencyMs) => {
        const target =
            r.firstEvents && before ? `; before (\`${before.commit}\`) ${ratios(before, latencyMs)}` : r.firstEvents ? "" : ": after, from the next `npm run bench`";
        const label = `${FIRST_EVENT_SUMMARY_LABEL}${latencyMs > 0 ? `, +${latencyMs} ms per request` : ""}`;
        return `| ${label}: ${named.join(" / ")} (ms, Chromium)${which} | ${list(kinds.map((kind) => dec(ms(shown, kind, "on", latencyMs))))} | by hand (auth \`fetch\` + \`EventSource\`) ${list(kinds.map((kind) => dec(ms(shown, kind, "raw", latencyMs))))} | ${ratios(shown, latencyMs)} | must not grow (issue 32)${target} |`;
    };
    const latency = shown.plan.latencyMs ?? 0;
    return [row(0), ...(latency > 0 ? [row(latency)] : []), ...loadAndSecondTabRows(r)];
}
