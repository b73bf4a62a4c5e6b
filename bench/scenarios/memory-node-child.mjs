// The Node.js side of the memory figures, in its own process (forked by scenarios/memory.mjs with
// --expose-gc, on V8's interpreter only) so that its heap holds the connector and the eventsource package,
// not the dev stack: MercureEcho with a cookie-keeping fetch, driven by the shared schedule. Messages are
// published by the parent on request.
//
// Two things Node.js keeps that are not the connector's are left out of every reading (bench/memory-node-fakes.mjs
// has the heap-snapshot evidence): Node's resource-timing buffer, to which undici's fetch adds a
// PerformanceResourceTiming per request (holding the request URL: ~6.4 kB for a subscribe URL of 100 topics) until
// 250 are buffered, ~12 500 cycles here (cleared before each reading, the count reported); and compiled code, which
// V8 keeps adding as more functions get hot (scenarios/memory.mjs turns the tiers that add it off).
import { EventSource } from "eventsource";
import { performance } from "node:perf_hooks";
import { cookieJarFetch } from "../../dist/dev/index.js";
import { MercureEcho } from "../../dist/index.js";
import { runMemorySchedule } from "../lib/memory-schedule.mjs";
import { sleep, waitFor, withTimeout } from "../lib/stats.mjs";

/** Ask the parent to publish numbers to `feed`; resolves when it has. */
function requestPublish(first, count) {
    return new Promise((resolve) => {
        const onMessage = (message) => {
            if (message?.type !== "published") return;
            process.off("message", onMessage);
            resolve();
        };
        process.on("message", onMessage);
        process.send({ type: "publish", first, count });
    });
}

/**
 * Empty Node's resource-timing buffer; returns how many entries it held and their URLs' length (in a function of
 * its own, so that the entries are not on the stack during the collection that follows).
 */
function clearResourceTimings() {
    const entries = performance.getEntriesByType("resource");
    performance.clearResourceTimings();
    return { entries: entries.length, urlChars: entries.reduce((sum, entry) => sum + entry.name.length, 0) };
}

async function main({ origin, hubUrl, userId, plan }) {
    const fetch = cookieJarFetch();
    const login = await fetch(`${origin}/dev/login?user=${userId}`, { method: "POST" });
    if (login.status !== 200) throw new Error(`Logging in dev user ${userId} answered ${login.status}.`);
    const echo = new MercureEcho({ host: hubUrl, eventSource: EventSource, fetch });
    let received = 0;
    const subscribed = (channel) => new Promise((resolve) => channel.subscribed(resolve));
    /** The resource-timing entries cleared at each reading, in reading order: how many, and their URLs' length. */
    const cleared = [];
    try {
        const heap = await runMemorySchedule(
            {
                joinAll: (privates, publics) => {
                    const all = [...privates.map((name) => subscribed(echo.private(name))), ...publics.map((name) => subscribed(echo.channel(name)))];
                    return withTimeout(Promise.all(all), 30_000, `${all.length} channels subscribed in Node.js`);
                },
                leaveAll: async (names) => {
                    for (const name of names) echo.leave(name);
                },
                listenFeed: () => subscribed(echo.channel("feed").listen(".tick", () => received++)),
                deliver: async (first, count) => {
                    const target = received + count;
                    await requestPublish(first, count);
                    await waitFor("the messages in Node.js", () => received >= target, { timeout: 60_000, interval: 10 });
                },
                heap: async () => {
                    await sleep(50);
                    cleared.push(clearResourceTimings());
                    globalThis.gc();
                    // undici's request finalizer (a FinalizationRegistry holding each request's abort listener) runs
                    // after the collection that found its request dead: let it run, then collect what it released.
                    await sleep(10);
                    globalThis.gc();
                    return process.memoryUsage().heapUsed;
                },
            },
            plan,
        );
        return { ...heap, resourceTimings: Object.fromEntries(Object.keys(heap).map((key, i) => [key, cleared[i]])) };
    } finally {
        echo.disconnect();
    }
}

process.once("message", (message) => {
    main(message).then(
        (heap) => process.send({ type: "result", heap }, () => process.exit(0)),
        (error) => process.send({ type: "error", message: String(error?.stack ?? error) }, () => process.exit(1)),
    );
});
