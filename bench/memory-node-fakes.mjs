// Issue 11, Node.js memory: the bench's join/leave cycles (scenarios/memory-node-child.mjs, lib/memory-schedule.mjs)
// driven through the built connector with in-process fakes for EventSource and fetch (no network, no undici
// streams), so that heap growth here is the connector's (and the cookie jar's) alone. Run after `npm run build`:
//   node --expose-gc bench/memory-node-fakes.mjs [--no-jar] [--snapshot]
// Measured (Node 20, 2026-11-30): 1k→10k cycles 25 B/cycle, 10k→40k 4 B/cycle (3 without the cookie jar), and
// a heap-snapshot diff shows only compiled code (bytecode, JIT code, feedback vectors) growing: no connector
// object (channels, streams, maps, closures) accumulates per cycle. The bench's larger Node figure (~140 B/cycle)
// is Node's performance timeline: undici's fetch adds a PerformanceResourceTiming entry per request (each
// holding its URL, a ~2.6 kB subscribe URL here) until the default buffer of 250 entries is full.
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
