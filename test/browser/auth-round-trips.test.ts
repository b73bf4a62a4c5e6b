import { expect, it } from "vitest";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR, type BrowserSuiteOptions } from "./support/suite";
import { broadcastNumbered, DEADLINE, mainStreams, numbered, numbersOf, range, startTab, topicOf, waitForMainStreams, waitForNumber } from "./support/tabs";
import { sleep, waitUntil } from "./support/wait";

// Acceptance test of issue 13 in Chromium: with sharing across tabs on (the default), a leave and a join of a
// public channel reopen the stream without a request to Laravel, a join of a private channel costs exactly one,
// and a hub WITHOUT history loses nothing across these make-before-break reopens (a gap would lose updates
// for good, so the exact sequence proves there was none).

const ANN = 1;
const ORDERS = "private-orders.1";
/** Delay between two numbered broadcasts of the producer (each publish is awaited first). */
const PRODUCER_PAUSE_MS = 50;

/** One Chromium and one dev stack for the suite. */
const SUITE: BrowserSuiteOptions = {
    server: {
        // No replay: an update published while no stream carried the channel is lost for good.
        hub: { history: false },
        app: { users: [{ id: ANN, name: "Ann" }] },
        channels: {
            "orders.{id}": () => true,
            "side.{x}": () => true,
        },
        pages: { [HARNESS_PAGE]: harnessPage() },
        distDir: DIST_DIR,
    },
};

describeInChromium("auth-less reopens on a hub without history, in Chromium", SUITE, ({ dev, open }) => {
    /** Auth requests Laravel answered so far. */
    const authCount = (): number => dev().app.stats.authRequests.length;

    /** Wait until exactly one main stream is open at the hub and it no longer carries `channel`'s topic. */
    function waitForMainStreamWithout(channel: string): Promise<unknown> {
        return waitUntil(
            `one main stream at the hub, without ${channel}`,
            () => {
                const streams = mainStreams(dev());
                return streams.length === 1 && !streams[0]!.selectors.includes(topicOf(channel));
            },
            { ...DEADLINE, describe: () => dev().hub.stats.openStreams },
        );
    }

    it("leaves and joins public channels without an auth request, private ones with exactly one, and loses no update", async () => {
        const ann = await open(ANN);
        const authBefore = authCount();
        const connectionsBefore = dev().hub.stats.subscribeConnections.length;
        await startTab(ann, [numbered("private", "orders.1")]);
        await waitForMainStreams(dev(), 1, [ORDERS]);
        expect(authCount() - authBefore, "auth requests to join private-orders.1").toBe(1);

        // The producer: numbered updates on private-orders.1, one at a time, until told to stop.
        let next = 0;
        let producing = true;
        const producer = (async () => {
            while (producing) {
                await broadcastNumbered(dev(), ORDERS, [next]);
                next++;
                await sleep(PRODUCER_PAUSE_MS);
            }
        })();

        /** Auth requests of each step, by step name, in order. */
        const steps: Array<[string, number]> = [];
        /**
         * Run one step and record how many auth requests it caused once `settled` holds; then wait until an
         * update published after it arrived, so every reopen has live updates on both sides of it.
         */
        async function step(name: string, act: () => Promise<void>, settled: () => Promise<unknown>): Promise<void> {
            const before = authCount();
            await act();
            await settled();
            steps.push([name, authCount() - before]);
            await waitForNumber(ann, ORDERS, next);
        }

        try {
            await step(
                "join private-side.1",
                () => ann.join({ kind: "private", name: "side.1" }),
                () => ann.waitForSubscribed(["private-side.1"], DEADLINE),
            );
            await step(
                "leave private-side.1",
                () => ann.leave("side.1"),
                () => waitForMainStreamWithout("private-side.1"),
            );
            await step(
                "join news",
                () => ann.join({ kind: "public", name: "news" }),
                () => ann.waitForSubscribed(["news"], DEADLINE),
            );
            await step(
                "join private-side.2",
                () => ann.join({ kind: "private", name: "side.2" }),
                () => ann.waitForSubscribed(["private-side.2"], DEADLINE),
            );
            await step(
                "leave news",
                () => ann.leave("news"),
                () => waitForMainStreamWithout("news"),
            );
        } finally {
            producing = false;
            await producer;
        }

        // The barrier: one more update once the producer stopped; when it arrived, every earlier one had its chance.
        const barrier = next;
        await broadcastNumbered(dev(), ORDERS, [barrier]);
        const seen = await waitForNumber(ann, ORDERS, barrier);

        expect(steps).toEqual([
            ["join private-side.1", 1],
            ["leave private-side.1", 0],
            ["join news", 0],
            ["join private-side.2", 1],
            ["leave news", 0],
        ]);
        expect(authCount() - authBefore, "auth requests in all").toBe(3);
        // One stream per channel set, each opened once (make-before-break), every one carrying private-orders.1.
        const opens = dev()
            .hub.stats.subscribeConnections.slice(connectionsBefore)
            .map((record) => ({ status: record.status, topics: new URLSearchParams(record.query).getAll("match") }));
        expect(opens).toEqual(
            [
                [ORDERS],
                [ORDERS, "private-side.1"],
                [ORDERS],
                [ORDERS, "news"],
                [ORDERS, "news", "private-side.2"],
                [ORDERS, "private-side.2"],
            ].map((channels) => ({ status: 200, topics: channels.map(topicOf) })),
        );
        expect(numbersOf(seen, ORDERS)).toEqual(range(0, barrier));
        expect(seen.errors).toEqual([]);
    }, 60_000);
});
