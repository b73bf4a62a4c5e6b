import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp, defineComponent, h, nextTick } from "vue";
import { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import { memberKey, watchPresenceMembers } from "../../../src/frameworks/presence-members";
import type { Subscription } from "../../../src/presence/subscription-event";
import * as react from "../../../src/react/index";
import * as vue from "../../../src/vue/index";
import { HUB } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource } from "../../fakes/fake-event-source";
import { withRoster } from "../../fakes/presence-channel";

// useEchoPresenceMembers of the React and Vue entries, rendered in happy-dom on the frameworks' own Echo (configured
// on fakes); the roster of the joined channel is fed the way the connector's presence sync feeds it.

interface Person {
    id: number;
    name: string;
}

const ann: Person = { id: 1, name: "Ann" };
const bob: Person = { id: 2, name: "Bob" };
const TOPIC = "https://app.test/echo/channel/presence-room";
const sub = (subscriber: string, person: Person, active = true): Subscription => ({
    topic: TOPIC,
    subscriber,
    active,
    payload: { user_id: String(person.id), user_info: person },
});
const names = (members: readonly Person[]) => members.map((member) => member.name).join(",");

/** The options both entries are configured with: fakes, no tab sharing. */
const options = () => ({ host: HUB, eventSource: createFakeEventSource(), fetch: new FakeAuthServer().fetch, shareAcrossTabs: false, namespace: false as const, leaveDelay: 0 });

describe("watchPresenceMembers", () => {
    it("keeps one entry per user from here, joining and leaving, a new array each time, for every listener until it stops", () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", { leaveDelay: 0 } as never));
        const first: string[] = [];
        const second: string[] = [];
        const a = watchPresenceMembers<Person>(channel, (members) => first.push(names(members)));
        expect(a.initial).toEqual([]);
        channel.roster.seed([sub("s1", ann)]);
        const b = watchPresenceMembers<Person>(channel, (members) => second.push(names(members)));
        expect(b.initial).toEqual([ann]);
        channel.roster.apply(sub("s2", bob));
        // A second tab of Bob's is one member (the roster dedupes), and so is a joining of a listed user.
        channel.roster.apply(sub("s3", bob));
        a.stop();
        channel.roster.apply(sub("s1", ann, false));
        expect(first).toEqual(["Ann", "Ann,Bob"]);
        expect(second).toEqual(["Ann,Bob", "Bob"]);
    });

    it("lists a user once when joining repeats a listed user (a channel that does not dedupe), with the newest info", () => {
        const callbacks: { here?: (m: Person[]) => void; joining?: (m: Person) => void; leaving?: (m: Person) => void } = {};
        const channel = {
            here: (callback: (m: Person[]) => void) => (callbacks.here = callback),
            joining: (callback: (m: Person) => void) => (callbacks.joining = callback),
            leaving: (callback: (m: Person) => void) => (callbacks.leaving = callback),
        };
        const seen: Array<readonly Person[]> = [];
        watchPresenceMembers<Person>(channel, (members) => seen.push(members));
        callbacks.here!([ann, { ...ann }, bob]);
        callbacks.joining!({ id: 2, name: "Bobby" });
        callbacks.leaving!(ann);
        expect(seen.map(names)).toEqual(["Ann,Bob", "Ann,Bobby", "Bobby"]);
        expect(memberKey({ id: "7" })).toBe(memberKey({ id: "7", name: "x" }));
        expect(memberKey("guest")).toBe('json:"guest"');
    });
});

describe("useEchoPresenceMembers (React)", () => {
    beforeEach(() => {
        (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
        react.configureEcho(options());
    });
    afterEach(() => {
        react.configureEcho(options()); // Retires the connector the test used.
    });

    it("renders the members as state from here, joining and leaving, and leaves the channel on unmount", async () => {
        const renders: string[] = [];
        function Room() {
            const members = react.useEchoPresenceMembers<Person>("room");
            renders.push(names(members));
            return createElement("p", null, names(members));
        }
        const container = document.createElement("div");
        const root = createRoot(container);
        await act(async () => root.render(createElement(Room)));
        expect(container.textContent).toBe("");
        const channel = react.echo().connector.channels["presence-room"] as unknown as MercurePresenceChannel<Person>;
        expect(channel).toBeInstanceOf(MercurePresenceChannel);

        await act(async () => void channel.roster!.seed([sub("s1", ann), sub("s2", ann)]));
        expect(container.textContent).toBe("Ann");
        await act(async () => void channel.roster!.apply(sub("s3", bob)));
        expect(container.textContent).toBe("Ann,Bob");
        await act(async () => void channel.roster!.apply(sub("s1", ann, false)));
        expect(container.textContent).toBe("Ann,Bob"); // Ann's other tab is still there.
        await act(async () => void channel.roster!.apply(sub("s2", ann, false)));
        expect(container.textContent).toBe("Bob");

        await act(async () => root.unmount());
        expect(Object.keys(react.echo().connector.channels)).toEqual([]);
        expect(renders.at(-1)).toBe("Bob");
    });

    it("shows the current members at once in a component mounted after the channel was seeded", async () => {
        function Room({ label }: { label: string }) {
            return createElement("p", { id: label }, names(react.useEchoPresenceMembers<Person>("room")));
        }
        const page = (both: boolean) => [createElement(Room, { key: "1", label: "first" }), both ? createElement(Room, { key: "2", label: "second" }) : null];
        const container = document.createElement("div");
        const root = createRoot(container);
        await act(async () => root.render(page(false)));
        const channel = react.echo().connector.channels["presence-room"] as unknown as MercurePresenceChannel<Person>;
        await act(async () => void channel.roster!.seed([sub("s1", ann), sub("s2", bob)]));
        await act(async () => root.render(page(true)));
        expect(container.querySelector("#second")?.textContent).toBe("Ann,Bob");
        expect(react.echo().connector.channels["presence-room"]).toBe(channel);
        await act(async () => root.unmount());
    });
});

describe("useEchoPresenceMembers (Vue)", () => {
    beforeEach(() => {
        vue.configureEcho(options());
    });
    afterEach(() => {
        vue.configureEcho(options());
    });

    it("keeps a ref of the members from here, joining and leaving, and leaves the channel on unmount", async () => {
        const Room = defineComponent({
            setup() {
                const members = vue.useEchoPresenceMembers<Person>("room");
                return () => h("p", names(members.value));
            },
        });
        const container = document.createElement("div");
        const app = createApp(Room);
        app.mount(container);
        expect(container.textContent).toBe("");
        const channel = vue.echo().connector.channels["presence-room"] as unknown as MercurePresenceChannel<Person>;

        channel.roster!.seed([sub("s1", ann), sub("s2", ann)]);
        await nextTick();
        expect(container.textContent).toBe("Ann");
        channel.roster!.apply(sub("s3", bob));
        await nextTick();
        expect(container.textContent).toBe("Ann,Bob");
        channel.roster!.apply(sub("s1", ann, false));
        channel.roster!.apply(sub("s2", ann, false));
        await nextTick();
        expect(container.textContent).toBe("Bob");

        app.unmount();
        expect(Object.keys(vue.echo().connector.channels)).toEqual([]);
    });
});
