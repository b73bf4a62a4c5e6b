// npm run bench: every figure the project publishes comes from here, each next to a baseline measured in
// the same run. Needs the build (npm run bench builds first).
//
//   1. Bundle size: dist/index.js minified + gzipped, against laravel-echo's own dist/echo.js the same way.
//   2. Delivery latency: one event at a time through the dev hub, connector vs a raw EventSource on the
//      same hub and topic (the cost the connector adds per message).
//   3. Throughput: a burst of events, connector vs raw EventSource.
//   4. Join cost: from channel() to subscribed() (auth request + make-before-break reopen).
import { EventSource } from "eventsource";
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { performance } from "node:perf_hooks";
import { minify } from "terser";
import { MercureEcho } from "../dist/index.js";
import { startDevServer } from "../dist/dev/index.js";

const results = {};
const report = (name, value) => {
    results[name] = value;
    console.log(`${name.padEnd(48)} ${typeof value === "number" ? value.toFixed(value < 10 ? 3 : 1) : value}`);
};

// 1. Size ------------------------------------------------------------------------------------------------
async function gzipMinified(file, module = true) {
    const { code } = await minify(readFileSync(file, "utf8"), { module, compress: { passes: 2 }, mangle: true });
    return { min: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).length };
}
const ours = await gzipMinified("dist/index.js");
const echo = await gzipMinified("node_modules/laravel-echo/dist/echo.js");
const iife = await gzipMinified("dist/laravel-echo-mercure.iife.js", false);
report("size: dist/index.js min (bytes)", ours.min);
report("size: dist/index.js min+gzip (bytes)", ours.gzip);
report("size: laravel-echo dist/echo.js min+gzip (bytes)", echo.gzip);
report("size: ratio ours / laravel-echo", ours.gzip / echo.gzip);
report("size: iife (with laravel-echo) min+gzip (bytes)", iife.gzip);

// A cookie-keeping fetch and EventSource, as a browser profile would have.
function jar() {
    const cookies = new Map();
    const fetchWithCookies = async (url, init = {}) => {
        const headers = new Headers(init.headers);
        if (cookies.size) headers.set("Cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
        const response = await fetch(url, { ...init, headers });
        for (const line of response.headers.getSetCookie()) {
            const [pair] = line.split(";");
            const at = pair.indexOf("=");
            cookies.set(pair.slice(0, at), pair.slice(at + 1));
        }
        return response;
    };
    class JarEventSource extends EventSource {
        constructor(url, init) {
            super(url, { ...init, fetch: fetchWithCookies });
        }
    }
    return { fetch: fetchWithCookies, EventSource: JarEventSource };
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

const server = await startDevServer({ hub: { anonymous: true } });
const topic = "https://laravel.alt/echo/channel/bench";
const client = jar();
const echoClient = new MercureEcho({ host: server.hubUrl, eventSource: client.EventSource, fetch: client.fetch });
let onConnector = () => {};
const channel = echoClient.channel("bench").listen(".tick", (payload) => onConnector(payload));
await new Promise((resolve) => channel.subscribed(resolve));
const raw = new EventSource(`${server.hubUrl}?match=${encodeURIComponent(topic)}`);
let onRaw = () => {};
raw.onmessage = (event) => onRaw(JSON.parse(event.data).payload);
await new Promise((resolve) => (raw.onopen = resolve));

const publish = (n) =>
    server.hub.publish({ topics: [topic], data: JSON.stringify({ channels: ["bench"], event: "tick", payload: { n, at: performance.now() } }) });

// 2. Latency: publish one event, wait until both receivers have it, repeat.
const latency = { connector: [], raw: [] };
for (let n = 0; n < 2000; n++) {
    await new Promise((resolve) => {
        let pending = 2;
        const done = () => --pending === 0 && resolve();
        onConnector = (payload) => { latency.connector.push(performance.now() - payload.at); done(); };
        onRaw = (payload) => { latency.raw.push(performance.now() - payload.at); done(); };
        publish(n);
    });
}
report("latency: connector p50 (ms)", quantile(latency.connector, 0.5));
report("latency: raw EventSource p50 (ms)", quantile(latency.raw, 0.5));
report("latency: connector p99 (ms)", quantile(latency.connector, 0.99));
report("latency: raw EventSource p99 (ms)", quantile(latency.raw, 0.99));
report("latency: ratio connector / raw (p50)", quantile(latency.connector, 0.5) / quantile(latency.raw, 0.5));

// 3. Throughput: bursts of 20 000 events received by both at once; time until each has them all.
async function burst() {
    const count = 20_000;
    const received = { connector: 0, raw: 0 };
    const finished = {};
    const started = performance.now();
    await new Promise((resolve) => {
        const handler = (which) => () => {
            if (++received[which] === count) {
                finished[which] = performance.now() - started;
                if (Object.keys(finished).length === 2) resolve();
            }
        };
        onConnector = handler("connector");
        onRaw = handler("raw");
        for (let n = 0; n < count; n++) publish(n);
    });
    return { connector: count / (finished.connector / 1000), raw: count / (finished.raw / 1000) };
}
const bursts = [];
for (let round = 0; round < 5; round++) bursts.push(await burst());
const rawRate = quantile(bursts.map((b) => b.raw), 0.5);
const connectorRate = quantile(bursts.map((b) => b.connector), 0.5);
report("throughput: raw EventSource (events/s, median of 5)", rawRate);
report("throughput: connector (events/s, median of 5)", connectorRate);
report("throughput: ratio connector / raw", connectorRate / rawRate);

// 4. Join cost: channel() to subscribed(), 50 times, against opening a raw EventSource.
const joins = [];
const rawOpens = [];
for (let i = 0; i < 50; i++) {
    const started = performance.now();
    await new Promise((resolve) => echoClient.channel(`join.${i}`).subscribed(resolve));
    joins.push(performance.now() - started);
    echoClient.leave(`join.${i}`);
    const rawStarted = performance.now();
    const source = new EventSource(`${server.hubUrl}?match=${encodeURIComponent(topic + i)}`);
    await new Promise((resolve) => (source.onopen = resolve));
    rawOpens.push(performance.now() - rawStarted);
    source.close();
}
report("join: channel() to subscribed() p50 (ms)", quantile(joins, 0.5));
report("join: raw EventSource open p50 (ms)", quantile(rawOpens, 0.5));
report("join: ratio connector / raw", quantile(joins, 0.5) / quantile(rawOpens, 0.5));

raw.close();
echoClient.disconnect();
await server.close();
mkdirSync(".bench-results", { recursive: true });
writeFileSync(".bench-results/latest.json", JSON.stringify({ date: new Date().toISOString(), node: process.version, results }, null, 2));
console.log("\nwritten to .bench-results/latest.json");
