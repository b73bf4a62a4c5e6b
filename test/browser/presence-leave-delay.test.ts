import { expect, it } from "vitest";
import { presenceOf, type ChannelSpec, type PageHarness } from "./support/harness";
import { harnessPage, HARNESS_PAGE } from "./support/pages";
import { describeInChromium, DIST_DIR } from "./support/suite";

// The leaveDelay option in Chromium on the dev stack: a member who reloads the page ends one subscription and starts
// another; an observer without the option sees them leave and join again, one with it sees nothing.

const ANN = 1;
const BOB = 2;
const CID = 3;
const ROOM = "presence-room.1";
const ROOM_SPEC: ChannelSpec = { kind: "presence", name: "room.1", events: [".marker"] };
const DEADLINE = { timeout: 30_000 };
/** Far above a reload on a loaded machine (a few hundred ms to a few seconds), far below the test's deadline. */
const LEAVE_DELAY = 15_000;

describeInChromium(
    "presence leaveDelay in Chromium",
    {
        server: {
            app: { users: [{ id: ANN, name: "Ann" }, { id: BOB, name: "Bob" }, { id: CID, name: "Cid" }] },
            channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) },
            pages: { [HARNESS_PAGE]: harnessPage() },
            distDir: DIST_DIR,
        },
        restartAfterEach: true,
    },
    ({ dev, open }) => {
        let markers = 0;

        /** A user in a fresh context, Echo created with `options`, the room joined and seeded. */
        async function enter(userId: number, options: Record<string, unknown> = {}): Promise<PageHarness> {
            const page = await open(userId);
            await page.create(options);
            await page.join(ROOM_SPEC);
            await page.waitFor("here() on the room", (s) => presenceOf(s, ROOM).some((line) => line.startsWith("here ")), DEADLINE);
            return page;
        }

        /** Broadcast a marker on the room and wait until every page got it: what the hub sent before it has arrived. */
        async function marker(pages: PageHarness[]): Promise<void> {
            const n = ++markers;
            await dev().broadcast({ channels: [ROOM], event: "marker", payload: { n } });
            for (const page of pages) await page.waitFor(`marker ${n}`, (s) => s.events.some((e) => (e.payload as { n?: number }).n === n), DEADLINE);
        }

        it("hides a member's page reload from an observer with leaveDelay, and still reports the member leaving for good", async () => {
            const ann = await enter(ANN, { leaveDelay: LEAVE_DELAY });
            const cid = await enter(CID, { leaveDelay: 0 }); // The control: leaving at once.
            const bob = await enter(BOB);
            await ann.waitFor("joining Bob", (s) => presenceOf(s, ROOM).includes("joining Bob"), DEADLINE);
            await cid.waitFor("joining Bob", (s) => presenceOf(s, ROOM).includes("joining Bob"), DEADLINE);

            // Bob reloads: the page and its stream go, the same user comes back with a new subscription.
            await bob.page.reload();
            await bob.create();
            await bob.join(ROOM_SPEC);
            await bob.waitForSubscribed([ROOM], DEADLINE);
            await cid.waitFor("Bob back at Cid's", (s) => presenceOf(s, ROOM).filter((line) => line === "joining Bob").length === 2, DEADLINE);
            await marker([ann, cid, bob]);

            expect(presenceOf(await cid.snapshot(), ROOM)).toEqual(["here Ann,Cid", "joining Bob", "leaving Bob", "joining Bob"]);
            expect(presenceOf(await ann.snapshot(), ROOM)).toEqual(["here Ann", "joining Cid", "joining Bob"]);
            expect(await ann.members("room.1")).toEqual(["Ann", "Bob", "Cid"]);

            // Bob leaves for good: Ann hears it once the delay has passed.
            await bob.close();
            await cid.waitFor("leaving Bob at Cid's", (s) => presenceOf(s, ROOM).filter((line) => line === "leaving Bob").length === 2, DEADLINE);
            const left = Date.now();
            const final = await ann.waitFor("leaving Bob at Ann's", (s) => presenceOf(s, ROOM).includes("leaving Bob"), DEADLINE);
            expect(Date.now() - left).toBeGreaterThan(LEAVE_DELAY / 3);
            expect(presenceOf(final, ROOM)).toEqual(["here Ann", "joining Cid", "joining Bob", "leaving Bob"]);
            expect(final.errors).toEqual([]);
        }, 90_000);
    },
);
