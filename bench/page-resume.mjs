// Issue 52 part 2 on its own (after `npm run build`): `node bench/page-resume.mjs`. Events lost and received twice
// across a navigation of a multi-page app (scenarios/page-resume.mjs): a raw EventSource, the connector by default and
// with `resumeAcrossPages`, on the dev hub and the reference hub (when Go can build it). Prints the table and writes
// .bench-results/page-resume.json.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./lib/chromium.mjs";
import { DEV_HUB, prepareReferenceHub, REFERENCE_HUB } from "./lib/stack.mjs";
import { measurePageResume, PAGE_RESUME_PLAN, pageResumeTable } from "./scenarios/page-resume.mjs";
import { ROOT } from "./size.mjs";

const browser = await launchChromium();
const results = { date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC", plan: PAGE_RESUME_PLAN, hubs: [] };
try {
    results.hubs.push(await measurePageResume(browser, PAGE_RESUME_PLAN, DEV_HUB));
    const reference = prepareReferenceHub();
    if (reference.ok) results.hubs.push(await measurePageResume(browser, PAGE_RESUME_PLAN, REFERENCE_HUB));
    else results.hubs.push({ hub: REFERENCE_HUB.name, skipped: reference.reason });
} finally {
    await browser.close();
}
mkdirSync(join(ROOT, ".bench-results"), { recursive: true });
writeFileSync(join(ROOT, ".bench-results", "page-resume.json"), JSON.stringify(results, null, 2) + "\n");
console.log(pageResumeTable(results.hubs).join("\n"));
