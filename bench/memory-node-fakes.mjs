// Issue 11, Node.js memory: the bench's join/leave cycles (scenarios/memory-node-child.mjs, lib/memory-schedule.mjs)
// driven through the built connector with in-process fakes for EventSource and fetch (no network, no undici
// streams), so that heap growth here is the connector's (and the cookie jar's) alone. Run after `npm run build`:
//   node --expose-gc [--no-opt --no-sparkplug --no-lazy-feedback-allocation] bench/memory-node-fakes.mjs [--no-jar] [--snapshot]
// Measured here (Node 20, 2026-11-30): 1k→10k cycles 25 B/cycle, 10k→40k 4 B/cycle; on the interpreter only
// (the flags in brackets) 0.1 and 0.0 B/cycle. A heap-snapshot diff shows only compiled code (optimized and
// baseline code, deoptimization data, feedback vectors, dependent-code lists) growing: no connector object
// (channels, streams, maps, closures, timers, listeners) accumulates per cycle.
//
// The real stack (the bench's child: `eventsource`, undici's fetch, the dev server), diffed by constructor and
// retainer between snapshots at two cycle counts after GC (Node 20, 2026-11-30), grew for two reasons, neither ours:
// - Node's resource-timing buffer: undici's fetch adds one PerformanceResourceTiming per request, retained by
//   `resourceTimingBuffer` (the context of node:internal/perf/observe's observerCallback), its name the request
//   URL (~6.4 kB for a subscribe URL of 100 topics). Two requests per batch of 100 cycles fill its 250 entries only
//   at ~12 500 cycles: between 6k and 12k cycles +120 entries and +385 kB of URL strings, ~65 B/cycle, about half
//   of the bench's 148 B/cycle over 1k→10k. Bounded (250 entries), and a Node app that fetches has the same.
// - Compiled code: with the buffer emptied, the 20k→60k diff grows only by code objects (+204, 175 kB), their
//   deoptimization data (114 kB) and relocation info (46 kB), dependent-code WeakArrayLists on maps (31 kB) and
//   feedback vectors, spread over the functions of the connector, undici, eventsource and Node's timers as they get
//   hot one after another (still ~5 B/cycle at 60k cycles); weak-cell and listener counts go down.
// With both left out (scenarios/memory-node-child.mjs empties the buffer before each reading, scenarios/memory.mjs
// runs it on the interpreter only) the real stack measures 4-5 B/cycle over 1k→10k and 1-2 B/cycle over 10k→40k,
// against 148 and 29 before; what is left is the `eventsource` package's private-field WeakMaps (one per
// field, their hash tables sized to the most EventSource objects alive between two collections: +34 kB over
// 1k→20k) and undici's pending FastTimers (emptied by its 1 s tick).
import { writeHeapSnapshot } from "node:v8";
import { cookieJarFetch } from "../dist/dev/index.js";
import { MercureEcho } from "../dist/index.js";

const useJar = !process.argv.includes("--no-jar");
const snapshot = process.argv.includes("--snapshot");
const HUB = "http://hub.test/.well-known/mercure";
const PREFIX = "http://app.test/echo/";

/** A plain response object with what the connector and the cookie jar read. */
function answer(status, body, setCookie = []) {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return { status, ok: status < 300, headers: { getSetCookie: () => setCookie, get: () => null }, text: async () => text, json: async () => JSON.parse(text) };
}

let authRequests = 0;
let streamRequests = 0;
/** The server side: grants every channel (with a hub cookie, as the dev stack does), accepts every stream. */
async function server(input, init = {}) {
    if ((init.method ?? "GET") === "GET") {
        streamRequests++;
        return answer(200, "");
    }
    authRequests++;
    const names = JSON.parse(String(init.body)).channel_names;
    return answer(200, { channel_names: names.map((name) => ({ name })), expires_in: 300, topic_prefix: PREFIX, client_events: true }, [
        `mercureAuthorization=tok${authRequests % 7}; Path=/.well-known/mercure; HttpOnly`,
    ]);
}

/** A fake EventSource shaped like the `eventsource` package's (an accessor `withCredentials`, a `{ fetch }` init). */
class FakeEventSource {
    static CLOSED = 2;
    readyState = 0;
    onopen = null;
    onmessage = null;
    onerror = null;
    #listeners = new Map();
    #url;
    constructor(url, init = {}) {
        this.#url = url;
        const fetch = init.fetch;
        setTimeout(async () => {
            if (this.readyState === 2) return;
            if (fetch !== undefined) await fetch(new URL(url), { method: "GET", headers: { Accept: "text/event-stream" } });
            if (this.readyState === 2) return;
            this.readyState = 1;
            this.onopen?.(new Event("open"));
        }, 0);
    }
    get withCredentials() {
        return true;
    }
    get url() {
        return this.#url;
    }
    addEventListener(type, listener) {
        this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
    }
    close() {
        this.readyState = 2;
    }
}

const fetch = useJar ? cookieJarFetch(server) : server;
const echo = new MercureEcho({ host: HUB, authEndpoint: "http://app.test/broadcasting/auth", eventSource: FakeEventSource, fetch });
const subscribed = (channel) => new Promise((resolve) => channel.subscribed(resolve));
const BATCH = 100;
const PRIVATE = 10;
let cycled = 0;
async function cycleTo(target) {
    while (cycled < target) {
        const names = Array.from({ length: BATCH }, (_, i) => `cycle.${cycled + i}`);
        await Promise.all([...names.slice(0, PRIVATE).map((n) => subscribed(echo.private(n))), ...names.slice(PRIVATE).map((n) => subscribed(echo.channel(n)))]);
        for (const name of names) echo.leave(name);
        cycled += names.length;
    }
}
async function heap() {
    await new Promise((resolve) => setTimeout(resolve, 50));
    globalThis.gc();
    globalThis.gc();
    return process.memoryUsage().heapUsed;
}

await cycleTo(BATCH);
const points = [[BATCH, await heap()]];
for (const target of [1_000, 10_000, 40_000]) {
    await cycleTo(target);
    points.push([target, await heap()]);
    if (snapshot) console.log("snapshot", writeHeapSnapshot(`/tmp/heap-fakes-${target}.heapsnapshot`));
}
console.log(`cookie jar: ${useJar}; auth requests ${authRequests}, stream requests ${streamRequests}`);
for (let i = 1; i < points.length; i++) {
    const [c0, h0] = points[i - 1];
    const [c1, h1] = points[i];
    console.log(`${c0}→${c1} cycles: heap ${(h0 / 1e6).toFixed(2)}→${(h1 / 1e6).toFixed(2)} MB, ${((h1 - h0) / (c1 - c0)).toFixed(1)} B/cycle`);
}
echo.disconnect();
