// Scratch: first join, base dist vs this dist, alternating, with and without 20 ms added latency.
import { launchChromium } from "./lib/chromium.mjs";
import { startBenchStack } from "./lib/stack.mjs";
import { measureFirstJoins } from "./scenarios/first-join.mjs";
const browser = await launchChromium();
const dirs = { base: "/work/wt/base/dist", now: "/work/main/dist" };
const out = {};
for (let round = 0; round < Number(process.argv[2] ?? 2); round++) for (const [k, d] of Object.entries(dirs)) {
  const stack = await startBenchStack({ history: false, distDir: d });
  const rows = await measureFirstJoins(browser, stack, { reps: 4, laterMs: 200, latencyMs: 20 });
  for (const r of rows) { const key = `${k} share=${r.share} delay=${r.delay} lat=${r.latency}`; (out[key] ??= { a: [], s: [] }); out[key].a.push(...r.authRuns); out[key].s.push(...r.subscribedRuns); }
  await stack.close?.();
}
const med = (x) => { const s = [...x].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const [k, v] of Object.entries(out).sort()) console.log(k.padEnd(40), "auth", med(v.a).toFixed(1), "subscribed", med(v.s).toFixed(1), `n=${v.s.length}`);
await browser.close(); process.exit(0);
