// @vitest-environment node
//
// The presence module against the real dev stack (hub + Laravel-compatible auth), wired the way the
// connector will wire it: same auth batch, one stream per tab with `match` + `match_urlpattern`, the
// snapshot after `open`, `event: mercure` events handed over with their ids.
import type { EventSource as NodeEventSource } from "eventsource";
import { afterEach, describe, expect, it } from "vitest";
import { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import type { DevServer } from "../../../src/dev/server";
import { createPresenceRooms } from "../../../src/presence/presence-rooms";
import { fetchSnapshot, type SnapshotResult } from "../../../src/presence/snapshot";
import { parseSubscriptionEvent, type Subscription } from "../../../src/presence/subscription-event";
import { buildSubscribeUrl } from "../../../src/topic/subscribe-url";
import { channelTopic } from "../../../src/topic/topics";
import { connectorFetch, CookieJar } from "../../e2e/support/node-client";
import { startStack } from "../../e2e/support/stack";
import { waitFor } from "../../e2e/support/wait";
import { withRoster } from "../../fakes/presence-channel";

const ROOM = "presence-room.1";
const DEADLINE = 20_000;

interface Person {
    id: number;
    name: string;
}

/** One browser tab: a presence channel fed by a stream of its own, and what it observed. */
interface Tab {
    /** here/joining/leaving/error, one line each. */
    log: string[];
    /** Every subscription event its stream delivered for the room. */
    events: Subscription[];
    /** Every snapshot it loaded. */
    snapshots: SnapshotResult[];
    /** Whether its stream reported an error since the last open. */
    down: boolean;
    /** Re-authorize (a new cookie) and open a new stream with `extra` channels, make before break. */
    open(extra?: string[]): Promise<void>;
    /** Close the stream, as a closed tab. */
    close(): void;
}

const servers: DevServer[] = [];
const tabs: Tab[] = [];

afterEach(async () => {
    for (const tab of tabs.splice(0)) tab.close();
    for (const server of servers.splice(0)) await server.close();
});

async function stack(): Promise<DevServer> {
    const server = await startStack({ channels: { "room.{id}": (user) => ({ id: user.id, name: user.name }) } });
    servers.push(server);
    return server;
}

/** Open a tab of user `userId` on the room. */
async function tab(server: DevServer, userId: number): Promise<Tab> {
    const jar = new CookieJar();
    expect((await jar.fetch(`${server.url}/dev/login?user=${userId}`, { method: "POST" })).ok).toBe(true);
    const channel = withRoster(new MercurePresenceChannel<Person>(ROOM, { namespace: "App.Events", leaveDelay: 0 } as never));
    const rooms = createPresenceRooms();
    rooms.add(channel);
    const hub = new URL(server.hubUrl);
    const abort = new AbortController();
    let current: NodeEventSource | null = null;
    let cursor: string | null = null;
    const state: Tab = {
        log: [],
        events: [],
        snapshots: [],
        down: false,
        async open(extra = []) {
            const names = [ROOM, ...extra];
            const auth = await jar.fetch(server.authEndpoint, {
                method: "POST",
                headers: { "Content-Type": "application/json", Accept: "application/json" },
                body: JSON.stringify({ channel_names: names }),
            });
            const { topic_prefix: prefix } = (await auth.json()) as { topic_prefix: string };
            const topics = names.map((name) => channelTopic(prefix, name));
            const url = buildSubscribeUrl(hub, { topics, patterns: rooms.patterns(hub, names, topics), lastEventId: cursor });
            const source = new (jar.eventSource() as unknown as typeof NodeEventSource)(url, { withCredentials: true });
            source.addEventListener("mercure", (event: MessageEvent) => {
                if (event.lastEventId !== "") cursor = event.lastEventId;
                const parsed = parseSubscriptionEvent(event.data);
                if (parsed !== null) state.events.push(parsed);
                rooms.handleEvent(event.data, event.lastEventId);
            });
            await new Promise<void>((resolve, reject) => {
                source.onopen = () => resolve();
                source.onerror = () => reject(new Error("the hub refused the stream"));
            });
            // Every error counts as terminal here: the test reopens when it wants to.
            source.onerror = () => {
                state.down = true;
                source.close();
                rooms.streamLost(names);
            };
            state.down = false;
            rooms.streamOpened(names, async (snapshotUrl) => {
                const result = await fetchSnapshot(snapshotUrl, connectorFetch(jar), abort.signal);
                state.snapshots.push(result);
                return result;
            });
            const old = current;
            current = source;
            old?.close();
        },
        close() {
            abort.abort();
            current?.close();
        },
    };
    const name = (person: Person) => person.name;
    channel
        .here((members) => state.log.push("here " + members.map(name).sort().join(",")))
        .joining((person) => state.log.push("joining " + name(person)))
        .leaving((person) => state.log.push("leaving " + name(person)))
        .error((error: Error) => state.log.push("error " + error.message));
    tabs.push(state);
    await state.open();
    return state;
}

/** How many events of `tab` report user `id`'s subscriptions as `active`. */
const count = (tab: Tab, id: number, active: boolean) =>
    tab.events.filter((event) => event.active === active && (event.payload as { user_id?: string } | undefined)?.user_id === String(id)).length;

/** The user ids of a snapshot's members. */
const users = (result: SnapshotResult | undefined) =>
    result?.kind === "ok" ? result.members.map((member) => (member.payload as { user_id: string }).user_id).sort() : result;

describe("presence on the dev hub", () => {
    it("seeds here(), dedupes a second tab, hides 11 make-before-break reopens, and reports a leave once", async () => {
        const server = await stack();
        const annTab1 = await tab(server, 1);
        const annTab2 = await tab(server, 1);
        const ben = await tab(server, 2);
        await waitFor(() => ben.log.length > 0, "Ben's here()", DEADLINE);
        expect(ben.log).toEqual(["here Ann,Ben"]);
        expect(users(ben.snapshots[0])).toEqual(["1", "1", "2"]);

        annTab2.close();
        await waitFor(() => count(ben, 1, false) === 1, "the end of Ann's second tab", DEADLINE);
        // Ann joins and leaves unrelated channels ten times, then renews her cookie: 11 reopens.
        for (let i = 0; i < 10; i++) await annTab1.open(i % 2 === 0 ? [`news.${i}`] : []);
        await annTab1.open();
        await waitFor(() => count(ben, 1, true) === 11 && count(ben, 1, false) === 12, "Ann's 11 reopens", DEADLINE);
        expect(ben.log).toEqual(["here Ann,Ben"]);

        annTab1.close();
        await waitFor(() => ben.log.length > 1, "Ann leaving", DEADLINE);
        expect(ben.log).toEqual(["here Ann,Ben", "leaving Ann"]);
        expect(annTab1.log).toEqual(["here Ann", "joining Ben"]);
    });

    it("re-seeds after a hub restart without spurious events, though the others reconnect after the snapshot", async () => {
        const server = await stack();
        const ann = await tab(server, 1);
        const ben = await tab(server, 2);
        await waitFor(() => ben.log.length > 0 && ann.log.length > 1, "Ben's here() and Ann seeing Ben join", DEADLINE);
        await server.stop();
        await waitFor(() => ann.down && ben.down, "both streams to drop", DEADLINE);
        await server.restart();
        await ben.open();
        await waitFor(() => ben.snapshots.length === 2, "Ben's second snapshot", DEADLINE);
        // The precondition that makes this test mean something: Ann is not back yet.
        expect(users(ben.snapshots[1])).toEqual(["2"]);
        const annBefore = count(ben, 1, true);
        await ann.open();
        await waitFor(() => count(ben, 1, true) > annBefore, "Ben to see Ann back", DEADLINE);
        await waitFor(() => ann.snapshots.length === 2, "Ann's second snapshot", DEADLINE);
        expect(ben.log).toEqual(["here Ann,Ben"]);
        expect(ann.log).toEqual(["here Ann", "joining Ben"]);
    });
});
