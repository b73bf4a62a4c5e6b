import { launchChromium } from "./lib/chromium.mjs";
import { startBenchStack, USER } from "./lib/stack.mjs";
import { BenchPage } from "./lib/page.mjs";
const browser = await launchChromium();
const stack = await startBenchStack({ history: false });
for (let r = 0; r < 5; r++) {
  const page = await BenchPage.open(browser, stack.server.url, USER.id, {}, false);
  const run = await page.run(() => {
    const t0 = performance.now();
    const marks = [];
    const orig = navigator.locks.request.bind(navigator.locks);
    navigator.locks.request = function (name, opts, cb) { marks.push("lockreq " + (performance.now() - t0).toFixed(1) + " " + JSON.stringify(opts)); return orig(name, opts, (l) => { marks.push("lockcb " + (performance.now() - t0).toFixed(1) + " " + (l ? "got" : "null")); return cb(l); }); };
    return window.bench.firstJoin({ debug: (step, d) => marks.push(step + " " + (performance.now() - t0).toFixed(1)) }, null).then((x) => ({ ...x, marks }));
  }, []);
  console.log(run.auth.toFixed(1), run.subscribed.toFixed(1), run.marks.join(" | "));
  await page.close();
}
await stack.close?.(); await browser.close(); process.exit(0);
