// Per-message decryption cost in Chromium: the lazy crypto chunk's decryptEnvelope (jose's compactDecrypt and
// the envelope read) against jose's compactDecrypt alone and WebCrypto's AES-GCM alone on the same messages, in one
// page, with no stream and no connector around them. A page on http://localhost (a secure context), served by
// routes of the browser context: the chunk of the build given, jose from node_modules through an import map.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { deriveChannelKey, sealJwe } from "../../dist/dev/index.js";
import { ROOT } from "../size.mjs";
import { median } from "../lib/stats.mjs";

/** The page's origin: localhost is a secure context, so crypto.subtle exists. */
const ORIGIN = "http://localhost";

/** The page: jose through an import map (the ESM chunk imports it by name), nothing else until the bench asks. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>decrypt</title>
<script type="importmap">{"imports":{"jose":"/jose/index.js"}}</script></head><body></body></html>`;

/** A fixed channel key for the messages (a bench, not a secret). */
const MASTER_KEY = Buffer.alloc(32, 7);

/**
 * In the page: time `count` decryptions by WebCrypto alone, by jose's `compactDecrypt` alone and by each chunk (in the
 * order given), and resolve with µs per message for each, both one at a time (each awaited before the next starts: the
 * latency of one decryption, WebCrypto's thread hop included) and all started at once (as the connector starts each on
 * arrival: the cost per message at saturation).
 */
async function inPage([jwes, jwk, chunks]) {
    const raw = await crypto.subtle.importKey("jwk", { kty: "oct", k: jwk.k, alg: "A256GCM" }, { name: "AES-GCM" }, false, ["decrypt"]);
    const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
    // WebCrypto alone: the segments decoded before the clock starts, the AAD and the ciphertext with its tag ready.
    const prepared = jwes.map((jwe) => {
        const [head, , iv, ciphertext, tag] = jwe.split(".");
        const sealed = new Uint8Array([...bytes(ciphertext), ...bytes(tag)]);
        return { iv: bytes(iv), additionalData: new TextEncoder().encode(head), sealed };
    });
    const time = async (items, one) => {
        const oneByOne = performance.now();
        for (const item of items) await one(item);
        const atOnce = performance.now();
        await Promise.all(items.map(one));
        const end = performance.now();
        return { oneByOne: ((atOnce - oneByOne) * 1000) / items.length, atOnce: ((end - atOnce) * 1000) / items.length };
    };
    const ways = { webCrypto: (p) => crypto.subtle.decrypt({ name: "AES-GCM", iv: p.iv, additionalData: p.additionalData, tagLength: 128 }, raw, p.sealed) };
    // jose alone: its compactDecrypt with the options the chunk passes, under the same key, the plaintext left unread.
    const { compactDecrypt } = await import("jose");
    const options = { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"], maxDecompressedLength: 0 };
    ways.jose = (jwe) => compactDecrypt(jwe, raw, options);
    for (const name of chunks) {
        const chunk = await import(`/chunk/${name}.js`);
        const key = await chunk.importChannelKey(jwk);
        if ((await chunk.decryptEnvelope(jwes[0], key)).event !== "tick") throw new Error(`the ${name} chunk did not decrypt`);
        ways[name] = (jwe) => chunk.decryptEnvelope(jwe, key);
    }
    const results = {};
    for (const [name, one] of Object.entries(ways)) {
        const items = name === "webCrypto" ? prepared : jwes;
        await time(items.slice(0, 200), one); // warm-up
        results[name] = await time(items, one);
    }
    return results;
}

/**
 * Measure the crypto chunks of `builds` (name → dist directory; default this package's dist/ as "chunk") in
 * `browser`: `reps` runs of `count` messages in one page, each run timing WebCrypto alone and then every chunk, the
 * chunks' order reversed on odd runs; resolves with the medians in µs per message, per way.
 */
export async function measureDecryptCost(browser, { builds = { chunk: join(ROOT, "dist") }, count = 2_000, reps = 7 } = {}) {
    const files = Object.fromEntries(
        Object.entries(builds).map(([name, distDir]) => {
            const file = readdirSync(join(distDir, "chunks")).find((entry) => /^jwe-.*\.js$/.test(entry));
            if (file === undefined) throw new Error(`no crypto chunk in ${distDir}/chunks`);
            return [name, join(distDir, "chunks", file)];
        }),
    );
    const channel = "private-encrypted-secure";
    const key = deriveChannelKey(MASTER_KEY, channel);
    const jwk = { kty: "oct", k: Buffer.from(key).toString("base64url"), alg: "A256GCM", use: "enc" };
    const jwes = Array.from({ length: count }, (_, n) => sealJwe(key, JSON.stringify({ event: "tick", payload: { n }, socket: null })));
    const context = await browser.newContext();
    try {
        await context.route(`${ORIGIN}/**`, (route) => {
            const path = new URL(route.request().url()).pathname;
            const chunk = /^\/chunk\/(.+)\.js$/.exec(path)?.[1];
            if (path === "/decrypt.html") return route.fulfill({ body: PAGE, contentType: "text/html; charset=utf-8" });
            if (chunk !== undefined && files[chunk] !== undefined) return route.fulfill({ body: readFileSync(files[chunk]), contentType: "text/javascript" });
            if (path.startsWith("/jose/")) return route.fulfill({ path: join(ROOT, "node_modules", "jose", "dist", "webapi", path.slice(6)), contentType: "text/javascript" });
            return route.fulfill({ status: 404 });
        });
        const page = await context.newPage();
        await page.goto(`${ORIGIN}/decrypt.html`);
        const names = Object.keys(files);
        const runs = [];
        for (let rep = 0; rep < reps; rep++) runs.push(await page.evaluate(inPage, [jwes, jwk, rep % 2 === 0 ? names : [...names].reverse()]));
        const summary = (way) => ({ oneByOne: median(runs.map((run) => run[way].oneByOne)), atOnce: median(runs.map((run) => run[way].atOnce)) });
        return {
            count,
            reps,
            files: Object.fromEntries(Object.entries(files).map(([name, file]) => [name, file.slice(file.lastIndexOf("/") + 1)])),
            ways: Object.fromEntries(["webCrypto", "jose", ...names].map((way) => [way, summary(way)])),
        };
    } finally {
        await context.close();
    }
}
