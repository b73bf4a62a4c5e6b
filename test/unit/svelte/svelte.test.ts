import { flushSync, mount, unmount, type Component } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import { MercureError } from "../../../src/errors";
import type { Subscription } from "../../../src/presence/subscription-event";
import * as svelte from "../../../src/svelte/index";
import { envelope, HUB, useScopedFakeTimers } from "../../fakes/connector-harness";
import { FakeAuthServer } from "../../fakes/fake-auth-server";
import { createFakeEventSource, type FakeEventSourceClass } from "../../fakes/fake-event-source";
import Listener from "./Listener.svelte";
import Room from "./Room.svelte";

// laravel-echo-mercure/svelte: Svelte 5 components (compiled by @sveltejs/vite-plugin-svelte) mounted in happy-dom on
// the entry's Echo, configured on fakes.

interface Person {
    id: number;
    name: string;
}

const ann: Person = { id: 1, name: "Ann" };
const bob: Person = { id: 2, name: "Bob" };
const sub = (subscriber: string, person: Person, active = true): Subscription => ({
    topic: "https://app.test/echo/channel/presence-room",
    subscriber,
    active,
    payload: { user_id: String(person.id), user_info: person },
});

let EventSource: FakeEventSourceClass;

/**
 * Mount `component` and run its effects, as the browser does right after: Svelte registers `onDestroy` callbacks
 * through an effect, so a component destroyed before its first flush has none to run.
 */
function render<TProps extends Record<string, unknown>>(component: Component<TProps>, props: TProps, target = document.createElement("div")) {
    const mounted = mount(component, { target, props });
    flushSync();
    return mounted;
}

async function settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await vi.advanceTimersByTimeAsync(0);
}

beforeEach(() => {
    useScopedFakeTimers();
    EventSource = createFakeEventSource();
    svelte.configureEcho({ host: HUB, eventSource: EventSource, fetch: new FakeAuthServer().fetch, shareAcrossTabs: false, leaveDelay: 0 });
});
afterEach(() => {
    svelte.configureEcho({ host: HUB }); // Retires the instance the test used.
    vi.useRealTimers();
});

describe("laravel-echo-mercure/svelte", () => {
    it("delivers to useEchoPublic, useEcho, useEchoModel and useEchoNotification listeners, and leaves every channel when the component is destroyed", async () => {
        const log: string[] = [];
        const target = document.createElement("div");
        const component = render(Listener, { log }, target);
        const connector = svelte.echo().connector;
        expect(Object.keys(connector.channels).sort()).toEqual(["news", "private-App.Models.Post.7", "private-App.Models.User.1", "private-encrypted-secrets.1", "private-orders.1"]);
        await settle();
        const stream = EventSource.live()[0]!;
        stream.emitOpen();
        stream.emitMessage(envelope(["news"], "headline", { n: 1 }), "urn:1");
        stream.emitMessage(envelope(["private-orders.1"], "App\\Events\\OrderShipped", { n: 2 }), "urn:2");
        stream.emitMessage(envelope(["private-App.Models.Post.7"], "PostUpdated", { n: 3 }), "urn:3");
        const notification = (type: string) => envelope(["private-App.Models.User.1"], "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated", { id: "n", type });
        stream.emitMessage(notification("App\\Notifications\\InvoicePaid"), "urn:4");
        stream.emitMessage(notification("App\\Notifications\\Other"), "urn:5");
        await settle();
        expect(log).toEqual(["news 1", "orders 2", "post 3", "notification App\\Notifications\\InvoicePaid"]);

        unmount(component);
        expect(Object.keys(connector.channels)).toEqual([]);
    });

    it("keeps a channel two components use until the second is destroyed", () => {
        const first = render(Room, { room: "room" });
        const second = render(Room, { room: "room" });
        const connector = svelte.echo().connector;
        unmount(first);
        expect(Object.keys(connector.channels)).toEqual(["presence-room"]);
        unmount(second);
        expect(Object.keys(connector.channels)).toEqual([]);
    });

    it("renders useEchoPresenceMembers' members and useConnectionStatus' status reactively", async () => {
        const target = document.createElement("div");
        const component = render(Room, { room: "room" }, target);
        const text = (selector: string) => target.querySelector(selector)?.textContent;
        expect(text(".members")).toBe("");
        expect(text(".status")).not.toBe("connected");
        const channel = svelte.echo().connector.channels["presence-room"] as unknown as MercurePresenceChannel<Person>;

        channel.roster!.seed([sub("s1", ann), sub("s2", ann)]);
        flushSync();
        expect(text(".members")).toBe("Ann");
        channel.roster!.apply(sub("s3", bob));
        flushSync();
        expect(text(".members")).toBe("Ann,Bob");
        channel.roster!.apply(sub("s1", ann, false));
        channel.roster!.apply(sub("s2", ann, false));
        flushSync();
        expect(text(".members")).toBe("Bob");

        await settle();
        EventSource.live()[0]!.emitOpen();
        await settle();
        flushSync();
        expect(text(".status")).toBe("connected");
        unmount(component);
    });

    it("refuses to be used before configureEcho() and outside a component, joining nothing", () => {
        expect(() => svelte.useEcho("orders.1", "X", () => undefined)).toThrow(/lifecycle|component/i);
        expect(Object.keys(svelte.echo().connector.channels)).toEqual([]);
        expect(() => svelte.configureEcho({ broadcaster: "reverb" as unknown as "mercure" })).toThrow(MercureError);
    });
});
