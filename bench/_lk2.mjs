import { launchChromium } from "./lib/chromium.mjs";
import { startBenchStack, USER } from "./lib/stack.mjs";
import { BenchPage } from "./lib/page.mjs";
const browser = await launchChromium();
const stack = await startBenchStack({ history: false });
const lat = Number(process.argv[2] ?? 20);
for (let r = 0; r < 4; r++) {
  const page = await BenchPage.open(browser, stack.server.url, USER.id, {}, false);
  if (lat) { const cdp = await page.page.context().newCDPSession(page.page); await cdp.send("Network.enable"); await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: lat, downloadThroughput: -1, uploadThroughput: -1 }); }
  const run = await page.run(([OFF]) => {
    const t0 = performance.now();
    const marks = [];
    return window.bench.firstJoin({ ...(OFF === false ? { shareAcrossTabs: false } : {}), debug: (step, d) => marks.push(step + " " + (performance.now() - t0).toFixed(1)) }, null).then((x) => {
      const res = performance.getEntriesByType("resource").filter(e => e.startTime >= t0 - 5).map(e => `${e.name.split("/").pop().slice(0, 22)} ${Math.round(e.startTime - t0)}-${Math.round(e.responseEnd - t0)}`);
      return { ...x, marks, res };
    });
  }, [process.argv[3] === "off" ? false : undefined]);
  console.log(run.auth.toFixed(1), run.subscribed.toFixed(1), run.marks.join(" | "));
  console.log("   ", run.res.join(" | "));
  await page.close();
}
await stack.close?.(); await browser.close(); process.exit(0);
