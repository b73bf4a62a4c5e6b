// Construction to the first event on a fresh page, per capability (issue 32), in Chromium. Each repetition opens a
// new browser context (its own cookies and an empty HTTP cache: every module file is downloaded again) on a page of
// the dev server that loads the app as a bundler ships it (lib/app-site.mjs: the entry and what it imports
// statically at page load, each lazy chunk its own file), logs in, then in one tick constructs
// `new Echo({ broadcaster: MercureConnector, host })` and makes the capability's first use: a public, private,
// presence or private-encrypted channel listening to one event, or a private channel listening to a whisper. The
// clock runs from just before the construction to the first event delivered to the listener (for presence also to
// the first `here()`). The event is published once the channel fired `subscribed()`, through the dev app's
// `/dev/broadcast` (Laravel's broadcast, sealed for the encrypted channel); a whisper comes from a second page (its
// own context and cookie) that publishes whispers on the channel's whisper topic one after another, `plan.whisperEveryMs`
// ms apart, while the row runs, so the first one after the page's whisper stream opened is the one timed.
//
// The baseline of each capability is the same page doing the protocol by hand on the same hub, timed the same way:
// the batch auth `fetch` for the one channel, then `new EventSource` with its `match` (for presence also its
// `match_urlpattern` and the snapshot `fetch` after the open, for the encrypted channel WebCrypto's AES-GCM on the
// key from the auth response; for whispers the channel's whisper topic alone), publishing on its `open`.
// The page's requests are counted from Playwright's request events and placed on the page's clock
// (`request.timing()`), so each row can show its waterfall.
// Every page carries the session's CSRF token in `<meta name="csrf-token">`, as a Laravel app's Blade layout renders it,
// and has Laravel's `XSRF-TOKEN` cookie, as every response of Laravel's `web` group sets it (the bench asks the dev
// app's `/dev/csrf` for both once the page has logged in): laravel-echo reads the tag at the construction and the
// connector sends its token (a page without it would make the connector read the cookie, a first `document.cookie`
// costing the page 1-9 ms here).
// The auth route that `Broadcast::routes()` registers is exempt from the CSRF check (laravel-mercure.md §2.1), so the
// by-hand way sends no token, and the dev app checks none. On 127.0.0.1 a request costs about a millisecond, so the
// by-hand and default rows run again with a latency added to each of the page's requests (Chromium's network
// emulation), where each request in series on the path shows.
import { join } from "node:path";
import { buildAppSite, APP_FILE } from "../lib/app-site.mjs";
import { startBenchStack, USER } from "../lib/stack.mjs";
import { median, sleep, withTimeout } from "../lib/stats.mjs";
import { ROOT } from "../size.mjs";

/** Where the scenario's page is served. */
export const FIRST_EVENT_PAGE = "/first-event.html";

/** The capabilities, in table order: the kind the page uses and the channel it joins (the dev stack authorizes each). */
export const CAPABILITIES = [
    { kind: "public", name: "orders.1", label: "public channel" },
    { kind: "private", name: "orders.1", label: "private channel" },
    { kind: "presence", name: "chat.1", label: "presence channel" },
    { kind: "encrypted", name: "orders.1", label: "private-encrypted channel (decrypted)" },
    { kind: "whisper", name: "orders.77", label: "whisper on a private channel (from another page)" },
];

/**
 * How much the scenario does (run.mjs's `firstEvent` plan and bench/first-event.mjs's): `warmup` pages dropped, then
 * `reps` fresh pages per row; the by-hand and sharing-on rows again with `latencyMs` added to every request of the
 * page (Chromium's network emulation: each request's response starts that much later, as over a network whose round
 * trip is that long), `latencyReps` pages each; every page's wait bounded by `timeoutMs`; the whisper sender's gap.
 */
export function firstEventPlan(quick) {
    return { warmup: 3, reps: quick ? 2 : 7, latencyMs: 20, latencyReps: quick ? 1 : 7, timeoutMs: 10_000, whisperEveryMs: 5 };
}

/** The ways each capability is measured: by hand (the baseline), the connector with tab sharing on (default), off. */
export const MODES = ["raw", "on", "off"];

/** The ways measured again with the plan's added latency: the baseline and the default. */
export const LATENCY_MODES = ["raw", "on"];

/**
 * Issue 53: the capabilities measured again in a second tab, with and without the added latency (mode `second`): a
 * page of the same browser context (its cookie, HTTP cache, Web Locks and `localStorage`) whose first tab leads alone
 * (joined, its first event received, 500 ms before), constructing and joining as the first tab did.
 */
export const SECOND_TAB_KINDS = ["public", "private"];

/**
 * Issue 53's stretch goal, a navigation: the capabilities measured on the tab's next page (modes `navigate` and
 * `navigate-raw`): the first page (the connector with {@link NAVIGATION_OPTIONS}) joins the channel and receives its
 * first event, then the tab navigates (`page.goto`, a full document load in the same tab: its cookie, HTTP cache and
 * `sessionStorage`) to the page, which constructs and joins as the first did (`navigate`), or does the protocol by
 * hand (`navigate-raw`, the baseline).
 */
export const NAVIGATION_KINDS = ["public", "private"];

/** The connector's options on both pages of a navigation row (each page carries the session's CSRF token in its meta tag, as every page does). */
export const NAVIGATION_OPTIONS = { resumeAcrossPages: true };

/** How long after the construction a page's module downloads count as its load (issue 53: "the bytes a page downloads in its first 5 s"). */
export const LOAD_WINDOW_MS = 5_000;

const HUB_PATH = "/.well-known/mercure";

/** The deadline of loading a page, logging in and each bench step around the measured run (ms). */
const PAGE_TIMEOUT_MS = 15_000;

/** The in-page part: one function per way, each bounded by its own deadline, resolving with the page-clock times. */
const FIRST_EVENT_SCRIPT = String.raw`
(function () {
    "use strict";
    var HUB = "${HUB_PATH}";
    var EVENT = "first-event";
    var now = function () { return performance.timeOrigin + performance.now(); };
    /** PHP's rawurlencode. */
    function enc(text) {
        return encodeURIComponent(text).replace(/[!'()*]/g, function (c) { return "%" + c.charCodeAt(0).toString(16).toUpperCase(); });
    }
    function fullName(kind, name) {
        return kind === "public" ? name : kind === "presence" ? "presence-" + name : kind === "encrypted" ? "private-encrypted-" + name : "private-" + name;
    }
    /** The batch auth request for the one channel full, by hand; who names the asker in an error. */
    function authorize(full, who) {
        return fetch("/broadcasting/auth", {
            method: "POST",
            credentials: "include",
            headers: { "Content-Type": "application/json", Accept: "application/json" },
            body: JSON.stringify({ channel_names: [full] }),
        }).then(function (response) { if (!response.ok) throw new Error(who + " answered " + response.status); return response.json(); });
    }
    /** Laravel's broadcast of the one event, through the dev app (which seals it for an encrypted channel). */
    function publish(channel) {
        return fetch("/dev/broadcast", {
            method: "POST",
            credentials: "same-origin",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ channels: [channel], event: EVENT, payload: { n: 1 } }),
        }).then(function (response) { if (!response.ok) throw new Error("/dev/broadcast answered " + response.status); });
    }
    function bytes(base64url) {
        var binary = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((base64url.length + 3) % 4));
        var out = new Uint8Array(binary.length);
        for (var i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
        return out;
    }
    /** A compact JWE (dir, A256GCM) opened with WebCrypto alone. */
    function decrypt(key, jwe) {
        var parts = jwe.split(".");
        var ciphertext = bytes(parts[3]);
        var tag = bytes(parts[4]);
        var sealed = new Uint8Array(ciphertext.length + tag.length);
        sealed.set(ciphertext);
        sealed.set(tag, ciphertext.length);
        return crypto.subtle
            .decrypt({ name: "AES-GCM", iv: bytes(parts[2]), additionalData: new TextEncoder().encode(parts[0]), tagLength: 128 }, key, sealed)
            .then(function (plain) { return JSON.parse(new TextDecoder().decode(plain)); });
    }
    /**
     * Run body(times, finish, fail) with a deadline; resolves with times once finish() sees the first event (and
     * for presence the first here()), rejects naming the last step reached and the channel's errors otherwise.
     */
    function bounded(kind, ms, body) {
        return new Promise(function (resolve, reject) {
            var started = now();
            var times = { startedAt: started, constructed: null, joined: null, auth: null, subscribed: null, here: null, first: null, errors: [] };
            var timer = setTimeout(function () {
                var reached = ["constructed", "joined", "auth", "subscribed", "here", "first"].filter(function (k) { return times[k] !== null; }).join(", ");
                reject(new Error("no first event within " + ms + " ms (reached: " + (reached || "nothing") + ")" + (times.errors.length ? "; errors: " + times.errors.join("; ") : "")));
            }, ms);
            var stamp = function (key) { if (times[key] === null) times[key] = now() - started; };
            var finish = function () {
                if (times.first !== null && (kind !== "presence" || times.here !== null)) { clearTimeout(timer); resolve(times); }
            };
            var fail = function (error) { clearTimeout(timer); reject(error instanceof Error ? error : new Error(String(error))); };
            try { body(times, stamp, finish, fail); } catch (error) { fail(error); }
        });
    }
    window.firstEvent = {
        /** Construct Echo with the connector and make the capability's first use in the same tick. */
        connector: function (kind, name, options, ms) {
            return bounded(kind, ms, function (times, stamp, finish, fail) {
                var app = window.benchApp;
                var echo = new app.Echo(Object.assign({ broadcaster: app.MercureConnector, host: HUB }, options));
                stamp("constructed");
                window.benchEcho = echo;
                var full = fullName(kind, name);
                var channel = kind === "public" ? echo.channel(name)
                    : kind === "presence" ? echo.join(name)
                    : kind === "encrypted" ? app.encryptedPrivate(echo, name)
                    : echo.private(name);
                channel.error(function (error) { times.errors.push((error && error.code) + ": " + (error && error.message)); });
                var first = function () { stamp("first"); finish(); };
                if (kind === "whisper") channel.listenForWhisper("typing", first);
                else channel.listen("." + EVENT, first);
                channel.subscribed(function () {
                    if (times.subscribed !== null) return;
                    stamp("subscribed");
                    if (kind !== "whisper") publish(full).catch(fail);
                });
                if (kind === "presence") channel.here(function () { stamp("here"); finish(); });
                stamp("joined");
            });
        },
        /** The protocol by hand: batch auth, one EventSource, publish on its open. */
        raw: function (kind, name, ms) {
            return bounded(kind, ms, function (times, stamp, finish, fail) {
                var full = fullName(kind, name);
                authorize(full, "the auth request")
                    .then(function (body) {
                        stamp("auth");
                        var channelTopic = body.topic_prefix + "channel/" + enc(full);
                        var params = new URLSearchParams();
                        params.append("match", kind === "whisper" ? body.topic_prefix + "whisper/" + enc(full) : channelTopic);
                        if (kind === "presence") params.append("match_urlpattern", HUB + "/subscriptions/:match_type/" + enc(channelTopic) + "/:subscriber");
                        var key = kind === "encrypted"
                            ? crypto.subtle.importKey("jwk", body.channel_names[0].jwk, { name: "AES-GCM" }, false, ["decrypt"])
                            : null;
                        var source = new EventSource(HUB + "?" + params.toString(), { withCredentials: true });
                        window.benchRaw = source;
                        source.onopen = function () {
                            stamp("subscribed");
                            if (kind === "presence") {
                                fetch(HUB + "/subscriptions/exact/" + enc(channelTopic), { credentials: "include" })
                                    .then(function (response) { if (!response.ok) throw new Error("the snapshot answered " + response.status); return response.json(); })
                                    .then(function () { stamp("here"); finish(); }, fail);
                            }
                            if (kind !== "whisper") publish(full).catch(fail);
                        };
                        source.onmessage = function (event) {
                            if (times.first !== null) return;
                            var data = JSON.parse(event.data);
                            if (key === null) { stamp("first"); finish(); return; }
                            key.then(function (k) { return decrypt(k, data.data); }).then(function () { stamp("first"); finish(); }, fail);
                        };
                        source.onerror = function () { if (source.readyState === EventSource.CLOSED) fail(new Error("the hub refused the EventSource")); };
                    })
                    .catch(fail);
            });
        },
        /**
         * The whisper sender: authorize the private channel (the cookie grants publishing on its whisper topic), then
         * publish whispers to the hub one after another, each POST awaited and everyMs apart, until stopWhispering();
         * resolves once the first was accepted. Self-paced, so a slow hub makes fewer whispers, never a backlog.
         */
        startWhispering: function (name, everyMs) {
            var full = fullName("whisper", name);
            var state = { running: true, n: 0 };
            window.benchWhispers = state;
            return authorize(full, "the sender's auth")
                .then(function (body) {
                    var topic = body.topic_prefix + "whisper/" + enc(full);
                    var whisper = function () {
                        var form = new URLSearchParams();
                        form.append("topic", topic);
                        form.append("data", JSON.stringify({ channels: [full], event: "client-typing", payload: { n: ++state.n }, socket: "bench.sender" }));
                        form.append("private", "on");
                        return fetch(HUB, { method: "POST", credentials: "include", body: form }).then(function (response) {
                            if (!response.ok) throw new Error("the whisper publish answered " + response.status);
                        });
                    };
                    var loop = function () {
                        if (!state.running) return;
                        whisper().then(function () { setTimeout(loop, everyMs); }, function (error) { state.running = false; state.error = error.message; });
                    };
                    return whisper().then(function () { setTimeout(loop, everyMs); });
                });
        },
        /** Stop the sender; resolves with why it had stopped by itself, if it had. */
        stopWhispering: function () {
            var state = window.benchWhispers;
            if (!state) return null;
            state.running = false;
            return state.error || null;
        },
    };
})();
`;

/** The scenario's page: the app's entry as a module (its static imports load with it), then the recorder. */
export function firstEventPage() {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>laravel-echo-mercure first event</title>
<script type="module">
import { Echo, encryptedPrivate, MercureConnector } from "/dist/${APP_FILE}";
window.benchApp = { Echo, encryptedPrivate, MercureConnector, readyAt: performance.now() };
</script>
<script>${FIRST_EVENT_SCRIPT}</script>
</head>
<body><p>laravel-echo-mercure first event</p></body>
</html>
`;
}

/**
 * Build the app site from `distDir` (default dist/) into .bench-results/`siteName` and start a dev stack serving it
 * at /dist/ with the scenario's page (no hub history: a fresh page has no cursor to resume from). Resolves with the
 * stack and the site's files.
 */
export async function startFirstEventStack(distDir, siteName = "first-event-site") {
    const siteDir = join(ROOT, ".bench-results", siteName);
    const files = await buildAppSite(siteDir, distDir);
    // The chunks (content-hashed names) are served as a production server serves a build's hashed assets, cacheable for
    // good; the entry (app.js) and the page are not. A fresh page (a new context) has an empty cache: only a second tab
    // of the same browser (mode `second`) takes them from the cache, or shares one download with the first tab.
    const stack = await startBenchStack({ history: false, distDir: siteDir, pages: { [FIRST_EVENT_PAGE]: firstEventPage() }, cacheAssets: /^chunks\/.+-[A-Za-z0-9_-]{8}\.js$/ });
    return { stack, files };
}

/** A request's kind, from its method and path; null for what the bench itself asks (login, the publish trigger, the page). */
function requestKind(method, path) {
    if (path.startsWith("/dist/")) return "module";
    if (path === "/broadcasting/auth") return "auth";
    if (path === HUB_PATH) return method === "GET" ? "stream" : "publish";
    if (path.startsWith(HUB_PATH + "/subscriptions")) return "snapshot";
    return path.startsWith("/dev/") || path === FIRST_EVENT_PAGE ? null : "other";
}

/** The kinds of request counted per row, in the order the report shows them. */
export const REQUEST_KINDS = ["module", "auth", "stream", "snapshot", "publish", "other"];

/**
 * Open a fresh page (new context: empty cache and cookie jar) logged in as the bench user, with its app loaded, every
 * request's response delayed by `latencyMs`; resolves with the context, the page and the requests it makes.
 */
async function openFreshPage(browser, origin, timeoutMs, latencyMs = 0, tabOf = null) {
    const context = tabOf ?? (await browser.newContext());
    try {
        const page = await context.newPage();
        if (latencyMs > 0) {
            const cdp = await context.newCDPSession(page);
            await cdp.send("Network.enable");
            await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: latencyMs, downloadThroughput: -1, uploadThroughput: -1 });
        }
        const errors = [];
        const requests = [];
        // An error while the page loads (a module that does not resolve) ends the wait for its app at once.
        let failLoad = () => undefined;
        const loadFailed = new Promise((_, reject) => (failLoad = reject));
        loadFailed.catch(() => undefined);
        page.on("pageerror", (error) => {
            errors.push(error.message);
            failLoad(new Error(`the first-event page failed: ${error.message}`));
        });
        page.on("request", (request) => requests.push(request));
        const response = await page.goto(origin + FIRST_EVENT_PAGE, { timeout: timeoutMs });
        if (response?.status() !== 200) throw new Error(`the first-event page answered ${response?.status()}`);
        const ready = page.waitForFunction(() => window.benchApp !== undefined, null, { timeout: timeoutMs });
        ready.catch(() => undefined); // Settled after the context closes when the load failed first.
        await Promise.race([ready, loadFailed]);
        // A second tab shares the first's cookie: it is logged in already.
        if (tabOf === null) {
            // The whole answer read: the login is the bench's stand-in for a session the page already has, and its request
            // must be over before the clock starts (its body still arriving overlapped the first requests of both ways).
            const login = page.evaluate((id) => fetch("/dev/login?user=" + id, { method: "POST", credentials: "same-origin" }).then((r) => r.text().then(() => r.status)), USER.id);
            const status = await withTimeout(login, timeoutMs, "the login");
            if (status !== 200) throw new Error(`logging in answered ${status}`);
        }
        await renderCsrfMeta(page, timeoutMs);
        return { context, page, errors, requests };
    } catch (error) {
        await context.close();
        throw error;
    }
}

/**
 * Give the page the session's CSRF token in `<meta name="csrf-token">`, as a Blade layout renders it into every page
 * (the dev app's `/dev/csrf` tells the session's token; the login replaced it); resolves once the tag is there.
 */
async function renderCsrfMeta(page, timeoutMs) {
    const rendered = page.evaluate(() =>
        fetch("/dev/csrf", { credentials: "same-origin" })
            .then((response) => response.json())
            .then(({ token }) => {
                const meta = document.createElement("meta");
                meta.name = "csrf-token";
                meta.content = token;
                document.head.append(meta);
            }),
    );
    await withTimeout(rendered, timeoutMs, "the page's CSRF token");
}

/** The page's requests on its clock (ms from `startedAt`, the construction), by kind; the bench's own left out. */
function waterfall(requests, startedAt) {
    const entries = [];
    for (const request of requests) {
        const url = new URL(request.url());
        const kind = requestKind(request.method(), url.pathname);
        if (kind === null) continue;
        const timing = request.timing();
        // startTime is the wall clock, as the page's performance.timeOrigin + performance.now(); -1 without a response.
        const start = timing.startTime > 0 ? timing.startTime - startedAt : Number.NaN;
        const firstByte = timing.responseStart >= 0 ? start + timing.responseStart : Number.NaN;
        const name = kind === "module" ? url.pathname.slice("/dist/".length).replace(/^chunks\//, "").replace(/-[A-Za-z0-9_-]{8}\.js$/, "") : kind;
        entries.push({ kind, name, start, firstByte, ...(kind === "module" ? { file: url.pathname.slice("/dist/".length) } : {}) });
    }
    return entries.sort((a, b) => a.start - b.start);
}

/**
 * Measure every capability × mode, `plan.reps` fresh pages each, and the by-hand and sharing-on rows again with
 * `plan.latencyMs` added to each request, `plan.latencyReps` pages each; the order of the rows rotating between
 * repetitions. A row whose page failed (a deadline passed, an error thrown) records the failure and the run goes on.
 * Resolves with `{ plan, rows, files, readyAt }`: per row the medians (ms), the repetitions that succeeded, the failures,
 * the requests after the construction by kind and the waterfall of the median repetition.
 */
export async function measureFirstEvents(browser, stack, plan, files = []) {
    const [only] = await measureFirstEventBuilds(browser, [{ stack, files }], plan);
    return only;
}

/**
 * {@link measureFirstEvents} for several builds in one run, each on its stack (`targets`: `{ stack, files }` from
 * {@link startFirstEventStack}), their pages interleaved row by row so that the builds share the machine's load;
 * resolves with one result per target, in order.
 */
export async function measureFirstEventBuilds(browser, targets, plan) {
    const builds = targets.map((target) => ({ ...target, origin: target.stack.server.url, cases: casesOf(plan), readyAt: [], sender: null, senderFailure: null }));
    // Each build's whisper sender (on its stack's origin); without it (it failed to load) the whisper rows fail, saying why.
    for (const build of builds) {
        try {
            build.sender = await openFreshPage(browser, build.origin, PAGE_TIMEOUT_MS);
        } catch (error) {
            build.senderFailure = `the whisper sender's page failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`;
        }
    }
    try {
        // Warm-up pages (Chromium's first contexts, the servers' first requests), measured like the others and dropped.
        const schedule = [];
        for (let i = 0; i < plan.warmup; i++) {
            for (const build of builds) schedule.push([build, { ...CAPABILITIES[0], mode: MODES[i % MODES.length], latencyMs: 0, runs: [], failures: [] }]);
        }
        const count = builds[0].cases.length;
        const rounds = Math.max(...builds[0].cases.map((entry) => entry.reps));
        for (let rep = 0; rep < rounds; rep++) {
            for (let i = 0; i < count; i++) {
                for (let b = 0; b < builds.length; b++) {
                    // The builds alternate which goes first from one repetition to the next.
                    const build = builds[(b + rep) % builds.length];
                    const entry = build.cases[(i + rep) % count];
                    if (rep < entry.reps) schedule.push([build, entry]);
                }
            }
        }
        for (const [build, entry] of schedule) await measurePage(browser, build.origin, plan, entry, build.sender, build.senderFailure, build.readyAt);
        for (const build of builds) build.loadBytes = await measureLoadBytes(browser, build, plan);
    } finally {
        for (const build of builds) await build.sender?.context.close().catch(() => undefined);
    }
    return builds.map((build) => ({ plan, rows: build.cases.map((entry) => summarize(entry, build.files)), files: build.files, readyAt: median(build.readyAt), loadBytes: build.loadBytes }));
}

/**
 * Issue 53: what a page of each capability downloads at load: one fresh page per capability (sharing on, no added
 * latency, a lone tab) constructs and makes its first use as in the rows above, receives its first event, and stays
 * until {@link LOAD_WINDOW_MS} after the construction; the gzip bytes of every module file it requested by then (the
 * app's entry, laravel-echo included, and each lazy chunk), with the chunks' names. Which files a page asks for does not
 * depend on timing: one page each.
 */
async function measureLoadBytes(browser, build, plan) {
    const rows = [];
    for (const capability of CAPABILITIES) {
        let fresh = null;
        try {
            if (capability.kind === "whisper") {
                if (build.sender === null) throw new Error(build.senderFailure);
                await withTimeout(build.sender.page.evaluate(([name, every]) => window.firstEvent.startWhispering(name, every), [capability.name, plan.whisperEveryMs]), PAGE_TIMEOUT_MS, "the whisper sender's first whisper");
            }
            fresh = await openFreshPage(browser, build.origin, PAGE_TIMEOUT_MS);
            const run = fresh.page.evaluate(([k, n, ms]) => window.firstEvent.connector(k, n, {}, ms), [capability.kind, capability.name, plan.timeoutMs]);
            const times = await withTimeout(run, plan.timeoutMs + 2_000, `${capability.label}, load bytes`);
            await sleep(Math.max(0, times.startedAt + LOAD_WINDOW_MS - Date.now()));
            const modules = waterfall(fresh.requests, times.startedAt).filter((request) => request.kind === "module" && !(request.start > LOAD_WINDOW_MS));
            const files = [...new Set(modules.map((request) => request.file))];
            const gzip = files.reduce((sum, file) => sum + (build.files.find((each) => each.file === file)?.gzip ?? Number.NaN), 0);
            rows.push({ kind: capability.kind, label: capability.label, gzip, files: files.map((file) => file.replace(/^chunks\//, "").replace(/-[A-Za-z0-9_-]{8}\.js$/, "")) });
        } catch (error) {
            rows.push({ kind: capability.kind, label: capability.label, gzip: Number.NaN, files: [], failure: String(error instanceof Error ? error.message.split("\n")[0] : error).slice(0, 300) });
        } finally {
            if (capability.kind === "whisper" && build.sender !== null) await senderStopped(build.sender);
            await fresh?.context.close().catch(() => undefined);
        }
    }
    return rows;
}

/** The rows of a plan, each with the pages it takes and none measured yet. */
function casesOf(plan) {
    const cases = [];
    for (const capability of CAPABILITIES) for (const mode of MODES) cases.push({ ...capability, mode, latencyMs: 0, reps: plan.reps, runs: [], failures: [] });
    for (const capability of CAPABILITIES.filter((each) => SECOND_TAB_KINDS.includes(each.kind))) cases.push({ ...capability, mode: "second", latencyMs: 0, reps: plan.reps, runs: [], failures: [] });
    const navigating = CAPABILITIES.filter((each) => NAVIGATION_KINDS.includes(each.kind));
    for (const latencyMs of plan.latencyMs > 0 ? [0, plan.latencyMs] : [0]) {
        for (const capability of navigating) {
            for (const mode of ["navigate-raw", "navigate"]) cases.push({ ...capability, mode, latencyMs, reps: latencyMs > 0 ? plan.latencyReps : plan.reps, runs: [], failures: [] });
        }
    }
    if (plan.latencyMs > 0) {
        for (const capability of CAPABILITIES) {
            for (const mode of LATENCY_MODES) cases.push({ ...capability, mode, latencyMs: plan.latencyMs, reps: plan.latencyReps, runs: [], failures: [] });
        }
        for (const capability of CAPABILITIES.filter((each) => SECOND_TAB_KINDS.includes(each.kind))) {
            cases.push({ ...capability, mode: "second", latencyMs: plan.latencyMs, reps: plan.latencyReps, runs: [], failures: [] });
        }
    }
    return cases;
}

/**
 * One fresh page of one row: its times and requests into `entry.runs`, or why it failed into `entry.failures`; the
 * time its app module had run into `readyAt`. Never throws: every step is bounded.
 */
async function measurePage(browser, origin, plan, entry, sender, senderFailure, readyAt) {
    const whispering = entry.kind === "whisper";
    let fresh = null;
    try {
        if (whispering && sender === null) throw new Error(senderFailure);
        fresh = await openFreshPage(browser, origin, PAGE_TIMEOUT_MS, entry.latencyMs);
        if (entry.mode === "second") {
            // The first tab leads alone: joined, its first event received, then 500 ms; the timed page is a second tab.
            const lead = fresh.page.evaluate(([k, n, ms]) => window.firstEvent.connector(k, n, {}, ms), [entry.kind, "orders.2", plan.timeoutMs]);
            await withTimeout(lead, plan.timeoutMs + 2_000, "the first tab's first event");
            await sleep(500);
            fresh = { ...(await openFreshPage(browser, origin, PAGE_TIMEOUT_MS, entry.latencyMs, fresh.context)), first: fresh };
        }
        if (entry.mode.startsWith("navigate")) {
            // The tab's previous page: the connector joins, receives its first event, and the tab goes to the next page.
            const previous = fresh.page.evaluate(([k, n, o, ms]) => window.firstEvent.connector(k, n, o, ms), [entry.kind, entry.name, NAVIGATION_OPTIONS, plan.timeoutMs]);
            await withTimeout(previous, plan.timeoutMs + 2_000, "the previous page's first event");
            await nextPage(fresh.page, origin);
        }
        if (whispering) {
            const start = sender.page.evaluate(([name, every]) => window.firstEvent.startWhispering(name, every), [entry.name, plan.whisperEveryMs]);
            await withTimeout(start, PAGE_TIMEOUT_MS, "the whisper sender's first whisper");
        }
        const options = entry.mode === "off" ? { shareAcrossTabs: false } : entry.mode === "navigate" ? NAVIGATION_OPTIONS : {};
        const run =
            entry.mode === "raw" || entry.mode === "navigate-raw"
                ? fresh.page.evaluate(([k, n, ms]) => window.firstEvent.raw(k, n, ms), [entry.kind, entry.name, plan.timeoutMs])
                : fresh.page.evaluate(([k, n, o, ms]) => window.firstEvent.connector(k, n, o, ms), [entry.kind, entry.name, options, plan.timeoutMs]);
        const times = await withTimeout(run, plan.timeoutMs + 2_000, `${entry.label}, ${entry.mode}`);
        if (entry.latencyMs === 0 && (entry.mode === "raw" || entry.mode === "on" || entry.mode === "off")) readyAt.push(await withTimeout(fresh.page.evaluate(() => window.benchApp.readyAt), PAGE_TIMEOUT_MS, "the page's load time"));
        const errors = [...fresh.errors, ...(fresh.first?.errors ?? [])];
        if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
        // A second tab's leader authorizes and opens the stream for it: its requests after the construction are in the waterfall too.
        const leader = fresh.first ? waterfall(fresh.first.requests, times.startedAt).filter((request) => !(request.start < 0)) : [];
        entry.runs.push({ ...times, requests: waterfall(fresh.requests, times.startedAt), leader });
    } catch (error) {
        const stopped = whispering && sender !== null ? await senderStopped(sender) : null;
        const message = String(error instanceof Error ? error.message.split("\n")[0] : error).replace(/^page\.evaluate: (Error: )?/, "").slice(0, 300);
        entry.failures.push(stopped === null ? message : `${message} (the whisper sender had stopped: ${stopped})`);
    } finally {
        if (whispering && sender !== null) await senderStopped(sender);
        await fresh?.context.close().catch(() => undefined);
    }
}

/** The tab of `page` goes to the scenario's page again (a full document load in the same tab); resolves once its app has loaded. */
async function nextPage(page, origin) {
    const response = await page.goto(origin + FIRST_EVENT_PAGE + "?page=next", { timeout: PAGE_TIMEOUT_MS });
    if (response?.status() !== 200) throw new Error(`the next page answered ${response?.status()}`);
    await page.waitForFunction(() => window.benchApp !== undefined, null, { timeout: PAGE_TIMEOUT_MS });
    await renderCsrfMeta(page, PAGE_TIMEOUT_MS);
}

/** Stop the whisper sender; resolves with why it had stopped by itself, or null. */
function senderStopped(sender) {
    return withTimeout(sender.page.evaluate(() => window.firstEvent.stopWhispering()), 5_000, "the whisper sender to stop").catch((error) => error.message);
}

/**
 * One row's medians, its request counts after the construction, the waterfall of its median repetition, and the bytes
 * (gzip) of the module files that repetition downloaded up to its first event (issue 53: what a page really pays).
 */
function summarize({ kind, label, mode, latencyMs, runs, failures }, files = []) {
    const pick = (key) => median(runs.map((run) => run[key]).filter((value) => value !== null));
    const first = pick("first");
    const middle = [...runs].sort((a, b) => a.first - b.first)[(runs.length - 1) >> 1];
    const after = (run) => run.requests.filter((request) => !(request.start < 0));
    const counts = {};
    for (const kindName of REQUEST_KINDS) counts[kindName] = middle ? after(middle).filter((request) => request.kind === kindName).length : Number.NaN;
    const spread = runs.length === 0 ? null : { min: Math.min(...runs.map((run) => run.first)), max: Math.max(...runs.map((run) => run.first)) };
    return {
        kind,
        label,
        mode,
        latencyMs,
        reps: runs.length,
        failures,
        first,
        spread,
        here: pick("here"),
        constructed: pick("constructed"),
        joined: pick("joined"),
        subscribed: pick("subscribed"),
        auth: pick("auth"),
        requests: counts,
        scriptGzip: middle ? [...new Set(middle.requests.filter((request) => request.kind === "module").map((request) => request.file))].reduce((sum, file) => sum + (files.find((each) => each.file === file)?.gzip ?? Number.NaN), 0) : Number.NaN,
        modulesAtLoad: middle ? middle.requests.filter((request) => request.kind === "module" && request.start < 0).length : Number.NaN,
        // The median page's own requests and times (the medians above may come from different pages).
        page: middle
            ? {
                  joined: middle.joined,
                  subscribed: middle.subscribed,
                  here: middle.here,
                  first: middle.first,
                  requests: [...after(middle), ...(middle.leader ?? []).map((request) => ({ ...request, name: `the first tab's ${request.name}` }))]
                      .sort((a, b) => a.start - b.start)
                      .map(({ name, start, firstByte }) => ({ name, start, firstByte })),
              }
            : null,
        errors: [...new Set(runs.flatMap((run) => run.errors))],
    };
}
