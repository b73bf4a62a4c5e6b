import { expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../src/dev/server";
import { referenceHub } from "../support/hubs";
import { OUTDATED_HUBS, outdatedHub, type OutdatedHubSetup } from "../e2e/support/deployments";
import type { PageHarness } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { sleep } from "./support/wait";

// A Laravel app pointed at a Mercure 0.x hub (the reference hub v0.24.2, issue 27), in Chromium: two tabs of one
// user, sharing one hub connection or not, on a hub the app reaches same-origin (behind its reverse proxy) or on
// another origin that lists the app's in its CORS origins. Every channel of every tab must hear `hub_outdated`
// within seconds, the status must end `failed`, and over a fixed window afterwards no auth request and no
// subscribe request may reach the app or the hub (a 0.x hub answers 401 for every authorization failure: a
// connector that renews on each 401 would loop).

const ANN = { id: 1, name: "Ann" };

/** The channels of each tab: a tab joins one public channel and one Laravel authorizes. */
const TAB_CHANNELS = [
    [{ kind: "public", name: "news" }, { kind: "private", name: "orders.1" }],
    [{ kind: "presence", name: "room.1" }, { kind: "public", name: "news" }],
] as const;

/** Long enough for a reconnect or a re-authorization loop to show: the first backoff is 1 s ± 20 %, so one comes by 1.2 s. */
const QUIET_WINDOW_MS = 2_000;

/** A deployment: the app, and the origin whose proxy counts the requests that reach the hub. */
interface Deployment {
    readonly app: DevServer;
    /** The server in front of the hub the pages use: the app itself, or a second origin. */
    readonly front: DevServer;
    /** The hub URL the pages use. */
    readonly hubUrl: string;
}

describeInChromium(
    "a Laravel app on a Mercure 0.x hub in Chromium",
    // Each test starts its own deployment (each hub is set up differently): the suite's server is not used.
    { hubs: [referenceHub("v0.24.2")], server: () => startDevServer({ distDir: DIST_DIR }) },
    ({ open, track }) => {
        /** Start the app on a 0.x hub set up as `setup` says, reached same-origin or from another origin. */
        async function deploy(setup: OutdatedHubSetup, crossOrigin: boolean): Promise<Deployment> {
            const hub = outdatedHub(setup, crossOrigin);
            const app = await startDevServer({
                app: { users: [ANN] },
                channels: { "orders.{id}": (user) => user.id === ANN.id, "room.{id}": (user) => ({ id: user.id, name: user.name }) },
                pages: { [HARNESS_PAGE]: harnessPage() },
                distDir: DIST_DIR,
                externalHub: hub.externalHub,
            });
            track({ close: () => app.close() });
            if (!crossOrigin) return { app, front: app, hubUrl: app.hubUrl };
            // Another origin in front of the same hub: its proxy forwards the page's Origin, and counts the requests.
            const front = await startDevServer({ externalHub: { url: hub.url() } });
            track({ close: () => front.close() });
            return { app, front, hubUrl: front.hubUrl };
        }

        /** Open two tabs of Ann, create the connector in each and join its channels. */
        async function twoTabs(deployment: Deployment, shareAcrossTabs: boolean): Promise<PageHarness[]> {
            const first = await open(ANN.id, HARNESS_PAGE, deployment.app.url);
            const second = track(await first.openTab());
            const tabs = [first, second];
            for (const [index, tab] of tabs.entries()) {
                await tab.create({ host: deployment.hubUrl, shareAcrossTabs });
                await tab.join(...TAB_CHANNELS[index]!);
            }
            return tabs;
        }

        for (const setup of OUTDATED_HUBS) {
            for (const crossOrigin of [false, true]) {
                for (const shareAcrossTabs of [true, false]) {
                    const where = crossOrigin ? "on another origin" : "same-origin";
                    it(`${setup.title}, ${where}, shareAcrossTabs ${String(shareAcrossTabs)}: hub_outdated on every channel within 5 s, then no request`, async () => {
                        const deployment = await deploy(setup, crossOrigin);
                        const started = Date.now();
                        const tabs = await twoTabs(deployment, shareAcrossTabs);
                        // Within 5 s of both tabs joining: the deadline of the waits (side by side) is the assertion.
                        const seen = await Promise.all(
                            tabs.map((tab, index) => {
                                const names = TAB_CHANNELS[index]!.map(fullName);
                                return tab.waitFor(
                                    "hub_outdated on every channel of the tab",
                                    (snapshot) => names.every((name) => snapshot.errors.some((error) => error.channel === name && error.code === "hub_outdated")),
                                    { timeout: 5_000 },
                                );
                            }),
                        );
                        for (const error of seen.flatMap((snapshot) => snapshot.errors).filter((error) => error.code === "hub_outdated")) {
                            expect(error.message).toContain(`The hub at ${deployment.hubUrl} `);
                            expect(error.message).toContain("upgrade the hub to Mercure 1.0");
                        }
                        for (const tab of tabs) expect((await tab.snapshot()).status).toBe("failed");
                        // The first connection the hub answered (the front records 502 for one the page closed before the hub
                        // answered: a lone tab's own stream, still connecting when the tab moved it to the tabs' engine).
                        const answered = deployment.front.hub.stats.subscribeConnections.filter((record) => record.status !== 0 && record.status !== 502);
                        expect(answered[0]?.status).toBe(setup.answer);

                        const auth = deployment.app.app.stats.authRequests.length;
                        const streams = deployment.front.hub.stats.subscribeConnections.length;
                        const requests = () => JSON.stringify({ auth: deployment.app.app.stats.authRequests, streams: deployment.front.hub.stats.subscribeConnections.map((record) => [record.at - started, record.status, decodeURIComponent(record.query)]) });
                        await sleep(QUIET_WINDOW_MS);
                        // Per tab: one auth request and at most one renewal for a 401; the refused stream, the probe
                        // and at most one reopen. Shared or not, the second tab joins once the first failed, so it
                        // makes its own attempt (alone, or as the union the shared stream carries). Then nothing more.
                        expect(auth, requests()).toBeLessThanOrEqual(2 * tabs.length);
                        expect(streams, requests()).toBeLessThanOrEqual(3 * tabs.length);
                        expect(deployment.app.app.stats.authRequests.length).toBe(auth);
                        expect(deployment.front.hub.stats.subscribeConnections.length).toBe(streams);
                        for (const [index, tab] of tabs.entries()) {
                            const snapshot = await tab.snapshot();
                            expect(snapshot.status).toBe("failed");
                            for (const name of TAB_CHANNELS[index]!.map(fullName)) {
                                expect(snapshot.errors.filter((error) => error.channel === name).map((error) => error.code), name).toEqual(["hub_outdated"]);
                            }
                        }
                    });
                }
            }
        }
    },
);

/** The full channel name Echo gives a joined channel. */
function fullName(spec: (typeof TAB_CHANNELS)[number][number]): string {
    return spec.kind === "public" ? spec.name : `${spec.kind}-${spec.name}`;
}
