import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HOLD_MS } from "../../../src/share/catch-up";
import { StreamMux } from "../../../src/share/stream-mux";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";

const HUB = new URL("https://hub.test/.well-known/mercure");

let ES: FakeEventSourceClass;
let sent: Array<Record<string, unknown>>;
/** The clients each message of `sent` went to (undefined: every client). */
let sentTo: Array<readonly string[] | undefined>;
let mux: StreamMux;

beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    ES = createFakeEventSource();
    sent = [];
    sentTo = [];
    mux = new StreamMux({ hub: HUB, EventSource: ES, send: (message, to) => void (sent.push(message as Record<string, unknown>), sentTo.push(to)), refused: () => undefined });
});

afterEach(() => {
    mux.closeAll();
    vi.useRealTimers();
});

/** A broadcast on channel (here: legacy topic) `news`: the engine addresses it to the streams on `news`. */
const NEWS = JSON.stringify({ channels: ["news"], event: "e", payload: {} });

/** A virtual main stream's subscribe URL on topic `news`, resuming from `cursor`. */
const url = (cursor?: string) => `${HUB.href}?match=news${cursor === undefined ? "" : `&last_event_id=${cursor}`}`;

/** The events replayed to virtual stream `s` (targeted to it), by id. */
const replayed = (s: string) => sent.filter((message) => message["t"] === "event" && message["s"] === s).map((message) => message["id"]);

/** Tab a's stream on `news` from id-0, its real stream open and two events forwarded: id-1 and id-2. */
async function forwardedTwo(): Promise<void> {
    mux.open("a", "a/1", url("id-0"), false);
    await vi.advanceTimersByTimeAsync(0);
    const real = ES.last();
    real.emitOpen();
    real.emitMessage(NEWS, "id-1");
    real.emitMessage(NEWS, "id-2");
}

describe("StreamMux: replaying to a virtual stream that opens late", () => {
    it("replays from a late stream's cursor what it keeps (at least the last 512 events), from its first cursor on, and nothing from what it keeps for an unknown cursor", async () => {
        mux.open("a", "a/1", url(), false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        for (let n = 1; n <= 1_100; n++) real.emitMessage(NEWS, `id-${n}`);
        // 1 100 forwarded: the oldest 512 were dropped at the 1 025th, so id-512 is where the kept ones start.
        for (const [stream, cursor] of [["b/1", "id-600"], ["c/1", "id-100"], ["d/1", "id-512"], ["e/1", undefined]] as const) {
            mux.open(stream.slice(0, 1), stream, url(cursor), false);
        }
        await vi.advanceTimersByTimeAsync(0);
        // The same union: no reopen, each is told open at once; the unknown cursor gets a catch-up stream (next tests).
        expect(ES.live().map((source) => source.url)).toEqual([real.url, url("id-100")]);
        expect(replayed("b/1")).toEqual(Array.from({ length: 500 }, (_, i) => `id-${601 + i}`));
        expect(replayed("c/1")).toEqual([]);
        expect(replayed("d/1")).toHaveLength(588);
        expect(replayed("d/1")[0]).toBe("id-513");
        expect(replayed("e/1")).toEqual([]);
        // Once only: a reconnect of the real stream tells them open again without a replay.
        const before = sent.length;
        real.emitError(false);
        real.emitOpen();
        expect(sent.slice(before).filter((message) => message["t"] === "event")).toEqual([]);
    });

    it("takes a late stream's new topics into the real stream from the engine's cursor, and gives that stream a catch-up from its own: the hub replays nothing older to the others (seed 2143)", async () => {
        await forwardedTwo();
        mux.open("b", "b/1", `${HUB.href}?match=news&match=sports&last_event_id=id-1`, false);
        await vi.advanceTimersByTimeAsync(0);
        const union = ES.last();
        expect([union.matches(), union.param("last_event_id")]).toEqual([["news", "sports"], "id-2"]);
        union.emitOpen(); // b is told open, and its catch-up opens.
        await vi.advanceTimersByTimeAsync(0);
        expect([ES.last().matches(), ES.last().param("last_event_id")]).toEqual([["news", "sports"], "id-1"]);
        // A cursor the engine does not know (older than what it keeps, or never forwarded) leaves the engine's own too.
        mux.open("c", "c/1", `${HUB.href}?match=news&match=sports&match=weather&last_event_id=elsewhere`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.instances.find((source) => source.matches().includes("weather"))!.param("last_event_id")).toBe("id-2");
    });

    it("over HTTP/1.1 without a connection left for a catch-up, resumes the real stream from a late stream's cursor for its new topics", async () => {
        const http = new URL("http://hub.test/.well-known/mercure");
        mux.closeAll();
        mux = new StreamMux({ hub: http, EventSource: ES, send: (message) => sent.push(message as Record<string, unknown>), refused: () => undefined });
        mux.open("a", "a/1", `${http.href}?match=news`, false);
        await vi.advanceTimersByTimeAsync(0);
        ES.last().emitOpen();
        ES.last().emitMessage(NEWS, "id-1");
        ES.last().emitMessage(NEWS, "id-2");
        for (const topic of ["w1", "w2", "w3"]) mux.open("a", `a/${topic}`, `${http.href}?match=${topic}`, true);
        mux.open("b", "b/1", `${http.href}?match=news&match=sports&last_event_id=id-1`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect([ES.last().matches(), ES.last().param("last_event_id")]).toEqual([["news", "sports"], "id-1"]);
    });

    it("gives a catch-up stream to a late stream whose topic the union took in only after its cursor: the engine never had what was published on it in between (seed 3053)", async () => {
        await forwardedTwo();
        // A fresh page joins sports: the union takes it in from the engine's cursor, id-2.
        mux.open("b", "b/1", `${HUB.href}?match=news&match=sports`, false);
        await vi.advanceTimersByTimeAsync(0);
        const union = ES.last();
        expect(union.param("last_event_id")).toBe("id-2");
        union.emitOpen();
        union.emitMessage(JSON.stringify({ channels: ["sports"], event: "e", payload: {} }), "id-3");
        // A page rendered at id-1 joins sports: what sports had between id-1 and id-2 never reached the engine.
        mux.open("c", "c/1", `${HUB.href}?match=sports&last_event_id=id-1`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.instances.at(-1)!.url).toBe(`${HUB.href}?match=sports&last_event_id=id-1`);
        expect(replayed("c/1")).toEqual([]); // The catch-up replays, from the hub.
        // A page at id-2 has it all in what the engine keeps: replayed, no catch-up.
        const streams = ES.instances.length;
        mux.open("d", "d/1", `${HUB.href}?match=sports&last_event_id=id-2`, false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.instances).toHaveLength(streams);
        expect(replayed("d/1")).toEqual(["id-3"]);
    });
});

describe("StreamMux: a catch-up stream for a cursor older than what it keeps", () => {
    /** Virtual stream a/1 on a real stream that forwarded id-1 … id-`count`; resolves with the real stream. */
    async function forwarded(count: number) {
        mux.open("a", "a/1", url(), false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        for (let n = 1; n <= count; n++) real.emitMessage(NEWS, `id-${n}`);
        return real;
    }

    /** Events sent to every virtual stream (not targeted), by id. */
    const broadcast = () => sent.filter((message) => message["t"] === "event" && message["s"] === undefined).map((message) => message["id"]);

    it("opens a stream of the late stream's own parameters from its cursor, and sends what it replays to that stream alone until an event the shared stream forwarded after it began", async () => {
        const real = await forwarded(1_100);
        mux.open("c", "c/1", `${HUB.href}?match=news&match_urlpattern=${encodeURIComponent("https://t/{x}")}&last_event_id=id-100`, false);
        await vi.advanceTimersByTimeAsync(0);
        // The union grew by the pattern: the shared stream reopens first, and c/1 is told open once it opens.
        const shared = ES.live().find((source) => source !== real && source.param("last_event_id") === "id-1100")!;
        shared.emitOpen();
        await vi.advanceTimersByTimeAsync(0);
        const catchUp = ES.last();
        expect([catchUp.matches(), catchUp.patterns(), catchUp.param("last_event_id")]).toEqual([["news"], ["https://t/{x}"], "id-100"]);
        expect(sent.findIndex((message) => message["t"] === "state" && message["s"] === "c/1" && message["state"] === 1)).toBeGreaterThan(-1);
        catchUp.emitOpen();
        // The hub replays in order: what the engine forwarded before the catch-up began, and a presence event.
        catchUp.emitMessage(NEWS, "id-101");
        catchUp.emitSubscription("{}", "id-102");
        catchUp.emitMessage(NEWS, "id-1100");
        expect(replayed("c/1")).toEqual(["id-101", "id-102", "id-1100"]);
        expect(sent.filter((message) => message["s"] === "c/1" && message["t"] === "event").map((message) => message["type"])).toEqual(["message", "mercure", "message"]);
        // The shared stream forwards id-1101 to every virtual stream; the catch-up's copy of it ends the catch-up.
        shared.emitMessage(NEWS, "id-1101");
        catchUp.emitMessage(NEWS, "id-1101");
        catchUp.emitMessage(NEWS, "id-1102");
        // Issue 52: the tab's cursor went back to id-1100 with the catch-up; the newest event the shared stream forwarded
        // it comes again (its ledger drops it), so that its cursor is id-1101 and a next page resumes after it.
        expect(replayed("c/1")).toEqual(["id-101", "id-102", "id-1100", "id-1101"]);
        expect(broadcast().filter((id) => id === "id-1101")).toEqual(["id-1101"]);
        expect(catchUp.closed).toBe(true);
        expect(ES.live()).not.toContain(catchUp);
    });

    it("ends when the shared stream forwards an event it delivered first (the hub writes to the older connection first): it never stays open beside the shared stream", async () => {
        const real = await forwarded(1_100);
        mux.open("c", "c/1", url("id-100"), false);
        await vi.advanceTimersByTimeAsync(0);
        const catchUp = ES.last();
        expect(catchUp.param("last_event_id")).toBe("id-100");
        catchUp.emitOpen();
        catchUp.emitMessage(NEWS, "id-101");
        // Each live event reaches the catch-up first, then the shared stream: every tab gets it once from the shared stream.
        catchUp.emitMessage(NEWS, "id-1101");
        expect(catchUp.closed).toBe(false);
        real.emitMessage(NEWS, "id-1101");
        expect(catchUp.closed).toBe(true);
        expect(ES.live()).toEqual([real]);
        real.emitMessage(NEWS, "id-1102");
        expect(replayed("c/1")).toEqual(["id-101", "id-1101"]);
        expect(broadcast().slice(-2)).toEqual(["id-1101", "id-1102"]);
    });

    it("sends a stream whose catch-up ended at once nothing from before it began (a page rendered with a cursor this engine never forwarded)", async () => {
        // Issue 52: a tab's next page, rendered with the hub's last event id (another user's update, say), joins beside a
        // leader that forwarded id-1 … id-1100 to the page before it. The hub has no history: the catch-up's first event
        // is the announcement of its own subscription, which the shared stream forwarded first. It ends there, and the
        // page must not get id-1100, which only its previous page had.
        const real = await forwarded(1_100);
        mux.open("c", "c/1", url("elsewhere"), false);
        await vi.advanceTimersByTimeAsync(0);
        const catchUp = ES.last();
        expect(catchUp.param("last_event_id")).toBe("elsewhere");
        catchUp.emitOpen();
        const announced = JSON.stringify({ id: "/.well-known/mercure/subscriptions/exact/news/sub-2", type: "subscription", match: "news", active: true });
        real.emitSubscription(announced, "id-1101");
        catchUp.emitSubscription(announced, "id-1101");
        expect(catchUp.closed).toBe(true);
        // The announcement the shared stream forwarded, held back for c/1 until its catch-up met it: once.
        expect(replayed("c/1")).toEqual(["id-1101"]);
        expect(sent.filter((message) => message["id"] === "id-1100")).toHaveLength(1); // Its broadcast to a/1, before c/1 existed.
    });

    /** The events client `client` got, in order, by id: targeted to its stream `s` or sent to it. */
    const gotBy = (s: string) => sent.filter((message) => message["t"] === "event" && (message["s"] === s || message["s"] === undefined)).map((message) => message["id"]);

    it("holds back the shared stream's live events for its stream until the replay reaches them: an event published after the join never comes before the older ones (the rendered-cursor flake)", async () => {
        const real = await forwarded(1_100);
        const before = sent.length;
        mux.open("c", "c/1", url("id-100"), false);
        await vi.advanceTimersByTimeAsync(0);
        const catchUp = ES.last();
        catchUp.emitOpen();
        // Published right after the join: the shared stream has it before the catch-up has replayed what came before.
        real.emitMessage(NEWS, "id-1101");
        expect(replayed("c/1")).toEqual([]);
        // To tab a alone, not tab c.
        const live = sent.flatMap((message, at) => (at >= before && message["id"] === "id-1101" ? [[message["s"], sentTo[at]]] : []));
        expect(live).toEqual([[undefined, ["a"]]]);
        catchUp.emitMessage(NEWS, "id-101");
        catchUp.emitMessage(NEWS, "id-1100");
        catchUp.emitMessage(NEWS, "id-1101"); // The replay meets the shared stream: what was held follows, and the catch-up ends.
        real.emitMessage(NEWS, "id-1102");
        expect(replayed("c/1")).toEqual(["id-101", "id-1100", "id-1101"]);
        expect(catchUp.closed).toBe(true);
        expect([sent.at(-1)!["id"], sent.at(-1)!["s"]]).toEqual(["id-1102", undefined]);
    });

    it(`lets the held events through after ${HOLD_MS} ms when the replay has not reached them, and replays on; a stream that closes gets none of them`, async () => {
        const real = await forwarded(1_100);
        mux.open("c", "c/1", url("id-100"), false);
        mux.open("d", "d/1", url("id-99"), false);
        await vi.advanceTimersByTimeAsync(0);
        const [c, d] = ES.live().filter((source) => source !== real);
        real.emitMessage(NEWS, "id-1101");
        await vi.advanceTimersByTimeAsync(HOLD_MS - 1);
        mux.close("d/1");
        expect(replayed("c/1")).toEqual([]);
        await vi.advanceTimersByTimeAsync(1);
        expect(replayed("c/1")).toEqual(["id-1101"]);
        expect(replayed("d/1")).toEqual([]);
        expect(d!.closed).toBe(true);
        // The hub slow to answer the catch-up: its replay still comes, and the live events no longer wait for it.
        real.emitMessage(NEWS, "id-1102");
        expect([sent.at(-1)!["id"], sent.at(-1)!["s"]]).toEqual(["id-1102", undefined]);
        c!.emitOpen();
        c!.emitMessage(NEWS, "id-101");
        c!.emitMessage(NEWS, "id-1101");
        expect(replayed("c/1")).toEqual(["id-1101", "id-101", "id-1102"]); // Ended on id-1101: the newest forwarded comes again (its cursor).
        expect(c!.closed).toBe(true);
    });

    it("sends a live event targeted to the other streams of a client whose one stream is held back", async () => {
        const real = await forwarded(1_100);
        mux.open("a", "a/2", url(), false); // Tab a's second connector: a fresh stream, no catch-up.
        mux.open("a", "a/3", url("id-100"), false); // Its third, from an old cursor: a catch-up.
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.live()).toHaveLength(2);
        const before = sent.length;
        real.emitMessage(NEWS, "id-1101");
        expect(sent.slice(before).map((message) => [message["id"], message["s"]])).toEqual([
            ["id-1101", "a/1"],
            ["id-1101", "a/2"],
        ]);
        expect(gotBy("a/3")).not.toContain("id-1101");
    });

    it("ends at its first error and when its virtual stream closes; a cursor it keeps, a fresh stream and the engine's first cursor need none", async () => {
        const real = await forwarded(1_100);
        mux.open("c", "c/1", url("id-100"), false);
        mux.open("d", "d/1", url("id-99"), false);
        mux.open("e", "e/1", url("id-1000"), false);
        mux.open("f", "f/1", url(), false);
        await vi.advanceTimersByTimeAsync(0);
        const [c, d] = ES.live().filter((source) => source !== real);
        expect([c!.param("last_event_id"), d!.param("last_event_id"), ES.live().length]).toEqual(["id-100", "id-99", 3]);
        c!.emitError(false); // Transient or not, it is not retried.
        expect(c!.closed).toBe(true);
        mux.close("d/1");
        expect(d!.closed).toBe(true);
        expect(ES.live()).toEqual([real]);
        expect(replayed("c/1")).toEqual([]);
    });

    /**
     * Over HTTP/1.1 (5 streams at most): a shared stream that forwarded id-1 … id-1100, virtual streams b … e late from
     * id-1, and a whisper stream; resolves with the URL builder of that hub.
     */
    async function http1(): Promise<(cursor?: string, topic?: string) => string> {
        const http = new URL("http://hub.test/.well-known/mercure");
        mux.closeAll();
        mux = new StreamMux({ hub: http, EventSource: ES, send: (message) => sent.push(message as Record<string, unknown>), refused: () => undefined });
        const at = (cursor?: string, topic = "news") => `${http.href}?match=${topic}${cursor === undefined ? "" : `&last_event_id=${cursor}`}`;
        mux.open("a", "a/1", at(), false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        for (let n = 1; n <= 1_100; n++) real.emitMessage(NEWS, `id-${n}`);
        for (const name of ["b", "c", "d", "e"]) mux.open(name, `${name}/1`, at("id-1"), false);
        await vi.advanceTimersByTimeAsync(0);
        // The shared stream and three catch-ups: one connection is left for the next replacement, so e/1 gets none.
        expect(ES.live().map((source) => source.param("last_event_id"))).toEqual([null, "id-1", "id-1", "id-1"]);
        // A whisper stream takes the connection left.
        mux.open("a", "a/w", at(undefined, "news-whisper"), true);
        expect(ES.live()).toHaveLength(5);
        return at;
    }

    it("over HTTP/1.1, opens only while a connection is left, and gives its connection to a replacement of the shared stream", async () => {
        const at = await http1();
        mux.open("f", "f/1", at(undefined, "sports"), false);
        await vi.advanceTimersByTimeAsync(0);
        expect(ES.live().map((source) => source.matches())).toEqual([["news"], ["news-whisper"], ["news", "sports"]]);
    });

    it("over HTTP/1.1, gives its connection to a new whisper stream, and lets through what it held back", async () => {
        const at = await http1();
        ES.live()[0]!.emitMessage(NEWS, "id-1101");
        expect(replayed("b/1")).toEqual([]);
        mux.open("b", "b/w", at(undefined, "sports-whisper"), true);
        expect(ES.live().map((source) => source.matches())).toEqual([["news"], ["news-whisper"], ["sports-whisper"]]);
        expect(["b/1", "c/1", "d/1"].map(replayed)).toEqual([["id-1101"], ["id-1101"], ["id-1101"]]);
    });
});

describe("StreamMux: a new cookie and the real whisper streams", () => {
    it("renews at once a whisper stream of a channel the cookie before did not grant, make-before-break; the others at their renewal point (seeds 4087 and 12192)", async () => {
        const whisper = (name: string) => `${HUB.href}?match=${encodeURIComponent(`https://laravel.test/whisper/${name}`)}`;
        mux.renew(Date.now() + 60_000);
        mux.open("a", "a/w1", whisper("private-a"), true);
        mux.open("a", "a/w2", whisper("private-b"), true);
        const [a, b] = ES.live();
        a!.emitOpen();
        b!.emitOpen();
        // A union that grants private-b again after the cookie was one without it (b reconnected on that one).
        mux.renew(Date.now() + 120_000, ["private-b", "private-c"]);
        const renewed = ES.live().filter((source) => source !== a && source !== b);
        expect(renewed.map((source) => source.matches())).toEqual([["https://laravel.test/whisper/private-b"]]);
        renewed[0]!.emitOpen();
        expect([a!.closed, b!.closed]).toEqual([false, true]);
        // private-a's stream waits for its own cookie's renewal point (tabs.test.ts: renewed make-before-break there).
        expect(ES.live().filter((source) => source.matches()[0]!.endsWith("private-a"))).toEqual([a]);
    });
});

describe("StreamMux: the real stream fails", () => {
    it("tells each open virtual stream its cursor with the interruption, unless a catch-up holds events back for it; a connecting one none", async () => {
        await forwardedTwo();
        const real = ES.last();
        mux.open("b", "b/1", url("id-1"), false); // Replayed from what the engine keeps: no catch-up.
        mux.open("c", "c/1", url("elsewhere"), false); // A catch-up of its own.
        await vi.advanceTimersByTimeAsync(0);
        mux.open("d", "d/1", `${HUB.href}?match=news&match=sports`, false); // Waits for a real stream with sports.
        await vi.advanceTimersByTimeAsync(0);
        const before = sent.length;
        real.emitError(false);
        const told = sent.slice(before).filter((message) => message["t"] === "state").map((message) => [message["s"], message["state"], message["id"]]);
        expect(told).toEqual([
            ["a/1", 0, "id-2"],
            ["b/1", 0, "id-2"],
            ["c/1", 0, undefined],
            ["d/1", 0, undefined], // Connecting: it reports the failed attempt, as a native EventSource does.
        ]);
    });
});

describe("StreamMux: an event goes only to the clients whose streams want it", () => {
    const SPORT = JSON.stringify({ channels: ["sport"], event: "e", payload: {} });

    it("reads the address while the real stream still carries the topics of a client that left: the one client left gets none of them", async () => {
        mux.open("a", "a/1", `${HUB.href}?match=news`, false);
        mux.open("b", "b/1", `${HUB.href}?match=sport`, false);
        await vi.advanceTimersByTimeAsync(0);
        const real = ES.last();
        real.emitOpen();
        // Client b (another tab) leaves sport: the narrowing reopen is scheduled, and the real stream carries sport meanwhile.
        mux.close("b/1");
        real.emitMessage(SPORT, "id-1");
        real.emitMessage(NEWS, "id-2");
        // Before: a lone client got every event of the real stream unread, sport's too (a tab receiving a channel it never joined).
        const events = sent.filter((message) => message["t"] === "event").map((message) => message["id"]);
        expect(events).toEqual(["id-2"]);
        // Once the real stream carries a's topics only, its events go to a unread again.
        await vi.advanceTimersByTimeAsync(0);
        const narrowed = ES.last();
        expect(narrowed).not.toBe(real);
        narrowed.emitOpen();
        narrowed.emitMessage(NEWS, "id-3");
        expect(sent.filter((message) => message["t"] === "event").map((message) => message["id"])).toEqual(["id-2", "id-3"]);
    });
});
