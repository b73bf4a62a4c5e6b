import type { Request, Route } from "playwright-core";
import { expect, it } from "vitest";
import { DEV_HUB_ONLY } from "../support/hubs";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";

// The IIFE loads its lazy parts from ES modules beside it (dist/iife/), and every one of them imports the chunk of what
// they read from the IIFE (dist/iife/iife-modules.js). The IIFE asks for that chunk beside the first part it loads, so
// that no part waits a second round trip for it (issue 32: a part loaded on first use adds no round trip of its own).
// Here each part is held back until the shared chunk has been requested: without the early request, the shared chunk
// is asked for only once a part has arrived, and the parts are released by the test's 10 s cap instead. (Which hub
// serves the stream does not matter: one hub kind.)

/** The longest the test holds a part back; only reached when the shared chunk is not requested early. */
const HOLD_CAP_MS = 10_000;

describeInChromium(
    "the IIFE's lazy parts in Chromium",
    {
        hubs: DEV_HUB_ONLY,
        server: { app: { users: [{ id: 1, name: "Ann" }] }, pages: { [HARNESS_PAGE]: harnessPage() }, distDir: DIST_DIR },
    },
    ({ open }) => {
        it("asks for the chunk every part imports beside the first part, not after it (the tabs' sharing client here)", async () => {
            const page = await open(1);
            let requested: () => void = () => undefined;
            const shared = new Promise<"requested">((resolve) => (requested = () => resolve("requested")));
            const parts: string[] = [];
            const releases: Array<"requested" | "cap"> = [];
            // The three parts, once each was released (a tab that leads alone asks for the sharing client only when another
            // tab pings it or its channels change: issue 53; here its second join, once the first is subscribed).
            let released: () => void = () => undefined;
            const allReleased = new Promise<void>((resolve) => (released = resolve));
            page.page.on("request", (request: Request) => {
                if (new URL(request.url()).pathname === "/dist/iife/iife-modules.js") requested();
            });
            await page.page.route("**/dist/iife/*.js", async (route: Route) => {
                const path = new URL(route.request().url()).pathname;
                if (path === "/dist/iife/iife-modules.js") return route.continue();
                parts.push(path.slice("/dist/iife/".length));
                let timer: ReturnType<typeof setTimeout> | undefined;
                const cap = new Promise<"cap">((resolve) => (timer = setTimeout(() => resolve("cap"), HOLD_CAP_MS)));
                releases.push(await Promise.race([shared, cap]));
                clearTimeout(timer);
                if (releases.length === 3) released();
                return route.continue();
            });
            await page.create({});
            await page.join({ kind: "public", name: "news", events: [".headline"] });
            await page.waitForSubscribed(["news"], { timeout: 10_000 });
            expect(parts).toEqual([]);
            await page.join({ kind: "public", name: "sports", events: [".headline"] });
            await allReleased;
            await page.waitForSubscribed(["sports"], { timeout: 10_000 });
            // A page that shares loads the tabs' protocol, the leading tab's engine and the sharing client.
            expect(parts.sort()).toEqual(["leadership.js", "protocol.js", "share-platform.js"]);
            expect(releases).toEqual(["requested", "requested", "requested"]);
            expect(page.pageErrors).toEqual([]);
        }, 60_000);
    },
);
