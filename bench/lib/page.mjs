// The bench page: the built IIFE (window.EchoMercure) plus a plain-JavaScript recorder, served by the dev
// server, so that the connector and a raw EventSource run side by side in the same Chromium page.
import { waitFor } from "./stats.mjs";

/** Where the bench page is served. */
export const BENCH_PAGE = "/bench.html";

/** The hub path on the dev server's origin. */
const HUB_PATH = "/.well-known/mercure";

/**
 * The in-page recorder. Every receiver (the connector's listen() callback, a raw EventSource) counts what it
 * got and when, with `now()` on the wall clock that Node.js shares (`performance.timeOrigin + performance.now()`).
 */
const BENCH_SCRIPT = String.raw`
(function () {
    "use strict";
    var now = function () { return performance.timeOrigin + performance.now(); };
    function receiver() { return { count: 0, first: 0, last: 0, numbers: null, seen: null, times: null }; }
    var bench = {
        echo: null,
        raws: [],
        receivers: { connector: receiver(), raw: receiver() },
        target: 0,
        latency: false,

        /** Create MercureEcho on this origin's hub, with extra connector options. */
        create: function (options) {
            this.echo = new window.EchoMercure.MercureEcho(Object.assign({ host: "${HUB_PATH}" }, options || {}));
            return this.echo.socketId();
        },

        /** Log in as a dev user (the httpOnly dev_user cookie). */
        login: function (id) {
            return fetch("/dev/login?user=" + id, { method: "POST", credentials: "same-origin" }).then(function (r) { return r.status; });
        },

        /**
         * Start counting afresh: complete at target messages per receiver; latency: report each arrival. With
         * holdMs, the first arrival holds the main thread that long before its time is taken, so the rest of a
         * burst is waiting in the page's network buffers when the clock starts: the rate then measures how fast
         * the receiver works through them, not how fast they were sent.
         */
        arm: function (target, latency, keepNumbers, holdMs, keepTimes) {
            this.receivers = { connector: receiver(), raw: receiver() };
            if (keepNumbers) { this.receivers.connector.numbers = []; }
            if (keepTimes) { this.receivers.connector.times = []; this.receivers.raw.times = []; }
            this.target = target;
            this.latency = latency;
            this.holdMs = holdMs || 0;
        },

        record: function (which, n) {
            var r = this.receivers[which];
            if (r.count === 0 && this.holdMs > 0) { var until = now() + this.holdMs; while (now() < until) { /* hold */ } }
            var at = now();
            r.count++;
            if (r.count === 1) r.first = at;
            r.last = at;
            if (r.numbers !== null) r.numbers.push(n);
            if (r.times !== null && typeof n === "number") r.times[n] = at;
            if (this.latency) window.benchArrived(which, n, at);
            if (this.relayOut !== null && which === "connector") this.relayed(n);
        },

        /** The BroadcastChannel this page relays each of its connector's arrivals on (relaySend), or null. */
        relayOut: null,
        /** The BroadcastChannel this page hears relayed arrivals on (relayHear), or null. */
        relayIn: null,

        /**
         * Relay each number the connector's listener records to the page's other tabs on a plain BroadcastChannel (the
         * least a page can do to hand an event to another tab), or stop (mode null): "each" posts one message per
         * number at once, "task" posts the numbers of one task in one message a task later.
         */
        relaySend: function (mode) {
            var self = this;
            if (this.relayOut !== null) this.relayOut.close();
            this.relayOut = mode === null ? null : new BroadcastChannel("bench-relay");
            this.relayEach = mode === "each";
            this.relayBatch = [];
            this.relayHop = new MessageChannel();
            this.relayHop.port1.onmessage = function () {
                var batch = self.relayBatch;
                self.relayBatch = [];
                if (self.relayOut !== null) self.relayOut.postMessage(batch);
            };
        },

        /** Relay n to the other tabs as relaySend's mode says. */
        relayed: function (n) {
            if (this.relayEach) this.relayOut.postMessage([n]);
            else if (this.relayBatch.push(n) === 1) this.relayHop.port2.postMessage(null);
        },

        /** Record (on) or stop recording the numbers another tab relays (relaySend) as this page's connector's arrivals. */
        relayHear: function (on) {
            var self = this;
            if (this.relayIn !== null) this.relayIn.close();
            this.relayIn = on ? new BroadcastChannel("bench-relay") : null;
            if (on) this.relayIn.onmessage = function (event) { event.data.forEach(function (n) { self.record("connector", n); }); };
        },

        channelOf: function (kind, name) {
            return kind === "private" ? this.echo.private(name)
                : kind === "encrypted" ? this.echo.encryptedPrivate(name)
                : kind === "presence" ? this.echo.join(name)
                : this.echo.channel(name);
        },

        /** Listen to event on a channel through the connector; resolves when it is subscribed. */
        listen: function (kind, name, event) {
            var self = this;
            var channel = this.channelOf(kind, name);
            channel.listen(event, function (payload) { self.record("connector", payload && payload.n); });
            return new Promise(function (resolve, reject) {
                channel.subscribed(function () { resolve(true); });
                channel.error(function (error) { reject(new Error(error.code + ": " + error.message)); });
            });
        },

        /**
         * Open a raw EventSource on topics (with the page's cookies); resolves with the ms until it opened. With count,
         * its messages are recorded as "raw"; with readIds too, its handler also reads each event's lastEventId and
         * keeps the last one, as a receiver that resumes after a reconnect must.
         */
        openRaw: function (topics, count, readIds) {
            var self = this;
            var params = new URLSearchParams();
            topics.forEach(function (topic) { params.append("match", topic); });
            var started = now();
            var source = new EventSource("${HUB_PATH}?" + params.toString(), { withCredentials: true });
            if (count && readIds) {
                source.onmessage = function (event) {
                    self.lastId = event.lastEventId;
                    var data = JSON.parse(event.data);
                    self.record("raw", data.payload ? data.payload.n : undefined);
                };
            } else if (count) {
                source.onmessage = function (event) {
                    var data = JSON.parse(event.data);
                    self.record("raw", data.payload ? data.payload.n : undefined);
                };
            }
            this.raws.push(source);
            return new Promise(function (resolve, reject) {
                source.onopen = function () { resolve(now() - started); };
                source.onerror = function () { if (source.readyState === EventSource.CLOSED) reject(new Error("the raw EventSource was refused")); };
            });
        },

        /** Close every raw EventSource. */
        closeRaws: function () {
            this.raws.forEach(function (source) { source.close(); });
            this.raws = [];
        },

        /** Whether every receiver in which has reached the target. */
        done: function (which) {
            var self = this;
            return which.every(function (name) { return self.receivers[name].count >= self.target; });
        },

        /** Counts and first/last arrival times (numbers only when asked). */
        result: function () { return JSON.parse(JSON.stringify(this.receivers)); },

        /** Errors the channels of join bursts reported (the connector recovers from transient ones by itself). */
        channelErrors: [],

        /**
         * Join names in one tick; resolves with the ms until every subscribed() fired. Errors on the way are
         * recorded in channelErrors, not fatal: a stream the hub refused is retried by the connector.
         */
        joinBurst: function (kind, names) {
            var self = this;
            var started = now();
            var pending = names.length;
            return new Promise(function (resolve) {
                names.forEach(function (name) {
                    var channel = self.channelOf(kind, name);
                    var done = false;
                    channel.subscribed(function () { if (!done) { done = true; if (--pending === 0) resolve(now() - started); } });
                    channel.error(function (error) { self.channelErrors.push(name + ": " + error.code + ": " + error.message); });
                });
            });
        },

        /**
         * A page's first join: create MercureEcho with options, then join one public channel in the same tick
         * (delayMs null) or delayMs later (Echo created at boot, a component joining when it mounts); resolves with the
         * milliseconds from the join until the auth request left (the page's fetch, wrapped below) and until subscribed().
         */
        firstJoin: function (options, delayMs) {
            var self = this;
            var join = function () {
                var started = now();
                self.authSentAt = 0;
                return new Promise(function (resolve) {
                    self.channelOf("public", "orders.1").subscribed(function () {
                        resolve({ auth: self.authSentAt - started, subscribed: now() - started });
                    });
                });
            };
            this.create(options);
            if (delayMs === null) return join();
            return new Promise(function (resolve) { setTimeout(resolve, delayMs); }).then(join);
        },

        /** The recorded channel errors, emptied. */
        takeErrors: function () { var list = this.channelErrors; this.channelErrors = []; return list; },

        /** Echo's leave() for each name, in one tick. */
        leaveAll: function (names) {
            var self = this;
            names.forEach(function (name) { self.echo.leave(name); });
        },

        /** One SPA navigation: leave the previous route's channels and join the next route's, in one tick; resolves when the new ones are subscribed. */
        navigate: function (leave, join) {
            this.leaveAll(leave);
            return join.length === 0 ? Promise.resolve(0) : this.joinBurst(join[0].kind, join.map(function (spec) { return spec.name; }));
        },

        /** Join (when joined is false) or leave a side channel: each is one reopen of the connector's stream. */
        toggle: function (name, joined) {
            if (joined) this.echo.leave(name); else this.echo.private(name);
        },

        /** The connector's connection status. */
        status: function () { return this.echo.connectionStatus(); },
    };
    window.bench = bench;
    // When the first auth request leaves (firstJoin): the connector takes the page's fetch when it resolves its platform.
    var pageFetch = window.fetch;
    window.fetch = function (input) {
        if (!bench.authSentAt && String(input && input.url || input).indexOf("/broadcasting/auth") >= 0) bench.authSentAt = now();
        return pageFetch.apply(this, arguments);
    };
})();
`;

/** The bench page's HTML: the IIFE build and the recorder, nothing created until the bench asks. */
export function benchPage() {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>laravel-echo-mercure bench</title>
<script src="/dist/laravel-echo-mercure.iife.js"></script>
<script>${BENCH_SCRIPT}</script>
</head>
<body><p>laravel-echo-mercure bench</p></body>
</html>
`;
}

/**
 * One bench page in its own browser context (its own cookies), logged in as `userId`, with the connector
 * created; `onArrival(which, n, at)` receives each message in latency mode.
 */
export class BenchPage {
    /** Uncaught exceptions of the page (the bench fails on any). */
    errors = [];

    constructor(context, page) {
        /** The browser context (one cookie jar). */
        this.context = context;
        /** The page. */
        this.page = page;
        /** Called by the page for each arrival in latency mode. */
        this.onArrival = () => undefined;
        page.on("pageerror", (error) => this.errors.push(error.message));
    }

    /**
     * Open the bench page at `origin`, log in and create MercureEcho with `options` added to its `host` (unless `create`
     * is false: the scenario creates it).
     */
    static async open(browser, origin, userId, options = {}, create = true) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const bench = new BenchPage(context, page);
        await page.exposeFunction("benchArrived", (which, n, at) => bench.onArrival(which, n, at));
        const response = await page.goto(origin + BENCH_PAGE);
        if (response?.status() !== 200) throw new Error(`The bench page answered ${response?.status()}.`);
        const status = await page.evaluate((id) => window.bench.login(id), userId);
        if (status !== 200) throw new Error(`Logging in dev user ${userId} answered ${status}.`);
        if (create) await page.evaluate((extra) => window.bench.create(extra), options);
        return bench;
    }

    /**
     * Open another tab of this page's browser context (same cookies, same origin: the tabs share one hub connection),
     * already logged in, with the connector created with `options` (none with null). Close it with {@link BenchPage.closeTab}.
     */
    async openTab(origin, options = {}) {
        const page = await this.context.newPage();
        const tab = new BenchPage(this.context, page);
        await page.exposeFunction("benchArrived", (which, n, at) => tab.onArrival(which, n, at));
        const response = await page.goto(origin + BENCH_PAGE);
        if (response?.status() !== 200) throw new Error(`The bench page answered ${response?.status()}.`);
        if (options !== null) await page.evaluate((extra) => window.bench.create(extra), options);
        return tab;
    }

    /** Close a tab opened with {@link BenchPage.openTab} (its context stays open). */
    async closeTab() {
        await this.metrics?.detach();
        await this.page.close();
    }

    /** Run `fn(arg)` in the page. */
    run(fn, arg) {
        return this.page.evaluate(fn, arg);
    }

    /** Wait until every receiver in `which` has the armed target (bounded by `timeout`). */
    waitDone(which, timeout = 60_000) {
        return waitFor(`${which.join(" and ")} to receive every message`, () => this.run((list) => window.bench.done(list), which), {
            timeout,
            interval: 25,
        });
    }

    /**
     * Milliseconds the page's main thread has spent running tasks so far (the Chrome DevTools Protocol's
     * `TaskDuration`: parsing the stream, dispatching its events and every script they run).
     */
    async mainThreadTime() {
        if (this.metrics === undefined) {
            this.metrics = await this.context.newCDPSession(this.page);
            await this.metrics.send("Performance.enable");
        }
        const { metrics } = await this.metrics.send("Performance.getMetrics");
        return metrics.find((metric) => metric.name === "TaskDuration").value * 1000;
    }

    /** The JavaScript heap in use after a full garbage collection (Chrome DevTools Protocol). */
    async heapAfterGc() {
        const cdp = await this.context.newCDPSession(this.page);
        try {
            await cdp.send("HeapProfiler.collectGarbage");
            await cdp.send("HeapProfiler.collectGarbage");
            const { usedSize } = await cdp.send("Runtime.getHeapUsage");
            return usedSize;
        } finally {
            await cdp.detach();
        }
    }

    /** Close the context. */
    close() {
        return this.context.close();
    }
}
