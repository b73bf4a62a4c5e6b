import { createHash } from "node:crypto";
import type { Page } from "playwright-core";
import { expect, it } from "vitest";
import { describeInChromium, DIST_DIR } from "./support/suite";
import { waitUntil } from "./support/wait";

// Livewire 3's JavaScript (js/features/supportLaravelEcho.js) turns each `#[On('echo…')]` listener of a component
// into calls on `window.Echo`, and adds `X-Socket-ID: window.Echo.socketId()` to each of its requests. The page
// below makes exactly those calls, on the README's `resources/js/echo.js` (a MercureEcho on `window.Echo`), against
// the dev stack: public, private, encrypted, presence (here, joining, leaving and events) and notification listeners,
// each component's clean-up, and a toOthers() request.

const ANN = 1;
const BOB = 2;
const PAGE = "/livewire.html";
const DEADLINE = { timeout: 20_000 };
/** Laravel's `encryption_key`: the channel keys of encrypted channels derive from it. */
const ENCRYPTION_KEY = "base64:" + createHash("sha256").update("livewire-browser-test").digest().toString("base64");

/**
 * The page: the README's echo.js, then `window.livewire`, which does for a component's listener list what
 * Livewire's supportLaravelEcho.js does, call for call (`window.Echo[type](channel).listen(event, handler)` and
 * `stopListening(event, handler)`; `join(channel)[here|joining|leaving](…)` or `.listen(…)` and `leave(channel)`;
 * `private(channel).notification(…)` and `stopListening('.Illuminate\\Notifications\\Events\\BroadcastNotificationCreated')`),
 * recording what each listener hears into `window.received` as [listener, payload].
 */
function livewirePage(): string {
    return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Livewire</title>
<script src="/dist/laravel-echo-mercure.iife.js"></script>
<script>
// resources/js/echo.js
window.Echo = new EchoMercure.MercureEcho({ broadcaster: "mercure" });

window.received = [];
const components = new Map();
let nextComponent = 0;
window.livewire = {
    login: (id) => fetch("/dev/login?user=" + id, { method: "POST", credentials: "same-origin" }).then((r) => r.status),
    // A component with these #[On(...)] listeners was rendered: Livewire's "effect" hook.
    mount(listeners) {
        const cleanups = [];
        const dispatchSelf = (listener, value) => window.received.push([listener, value]);
        for (const listener of listeners) {
            // echo:{channel},{event} | echo-{type}:{channel},{event} | echo-notification:{channel}
            const parsed = /^echo(?::|-([A-Za-z]+):)([^,]+)(?:,(.+))?$/.exec(listener);
            const type = parsed[1] ?? "channel";
            const channel = parsed[2];
            const event = parsed[3];
            if (["channel", "private", "encryptedPrivate"].includes(type)) {
                const handler = (e) => dispatchSelf(listener, e);
                window.Echo[type](channel).listen(event, handler);
                cleanups.push(() => window.Echo[type](channel).stopListening(event, handler));
            } else if (type === "presence") {
                if (["here", "joining", "leaving"].includes(event)) {
                    window.Echo.join(channel)[event]((e) => dispatchSelf(listener, e));
                } else {
                    window.Echo.join(channel).listen(event, (e) => dispatchSelf(listener, e));
                }
                cleanups.push(() => window.Echo.leave(channel));
            } else if (type === "notification") {
                window.Echo.private(channel).notification((notification) => dispatchSelf(listener, notification));
                cleanups.push(() => window.Echo.private(channel).stopListening(".Illuminate\\\\Notifications\\\\Events\\\\BroadcastNotificationCreated"));
            }
        }
        components.set(++nextComponent, cleanups);
        return nextComponent;
    },
    // The component was removed: component.addCleanup(...) callbacks run.
    unmount(id) {
        for (const cleanup of components.get(id)) cleanup();
        components.delete(id);
    },
    // A Livewire request (wire:click …): its "request" hook adds the socket id to the request's headers.
    request(body) {
        const options = { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
        if (window.Echo) options.headers["X-Socket-ID"] = window.Echo.socketId();
        return fetch("/dev/broadcast", options).then((r) => r.status);
    },
};
</script>
</head>
<body><p>Livewire</p></body>
</html>
`;
}

/** What the page's window holds, for page.evaluate. */
interface LivewireWindow {
    Echo: { socketId(): string; connectionStatus(): string; connector: { channels: Record<string, { isSubscribed: boolean }> } };
    EchoMercure: { Echo: new (options: object) => { encryptedPrivate(name: string): unknown }; MercureConnector: unknown };
    received: Array<[string, unknown]>;
    livewire: { login(id: number): Promise<number>; mount(listeners: string[]): number; unmount(id: number): void; request(body: object): Promise<number> };
}

describeInChromium(
    "Livewire's window.Echo calls",
    {
        server: {
            app: { users: [{ id: ANN, name: "Ann" }, { id: BOB, name: "Bob" }], encryptionKey: ENCRYPTION_KEY },
            channels: {
                "orders.{id}": (user, params) => Number(user.id) === Number(params["id"]),
                "secrets.{id}": (user, params) => Number(user.id) === Number(params["id"]),
                "App.Models.User.{id}": (user, params) => Number(user.id) === Number(params["id"]),
                room: (user) => ({ id: user.id, name: user.name }),
            },
            pages: { [PAGE]: livewirePage() },
            distDir: DIST_DIR,
        },
        restartAfterEach: true,
    },
    ({ dev, newPage }) => {
        /** A page of `userId`'s, logged in, `window.Echo` created. */
        async function visit(userId: number): Promise<Page> {
            const page = await newPage();
            await page.goto(dev().url + PAGE);
            expect(await page.evaluate((id) => (window as unknown as LivewireWindow).livewire.login(id), userId)).toBe(200);
            return page;
        }

        /** Render a component with `listeners`; resolves with its id once every channel it joined is subscribed. */
        async function mount(page: Page, listeners: string[], channels: string[]): Promise<number> {
            const id = await page.evaluate((list) => (window as unknown as LivewireWindow).livewire.mount(list), listeners);
            await waitUntil(
                `${channels.join(", ")} subscribed`,
                () => page.evaluate((names) => names.every((name) => (window as unknown as LivewireWindow).Echo.connector.channels[name]?.isSubscribed === true), channels),
                DEADLINE,
            );
            return id;
        }

        const received = (page: Page) => page.evaluate(() => (window as unknown as LivewireWindow).received);

        /** Wait until `page` recorded `count` payloads; resolves with them all. */
        async function receivedCount(page: Page, count: number): Promise<Array<[string, unknown]>> {
            await waitUntil(`${count} payloads`, async () => (await received(page)).length >= count, { ...DEADLINE, describe: () => received(page) });
            return received(page);
        }

        it("delivers to echo:, echo-private:, echo-encryptedPrivate: and echo-notification: listeners, and stops on the component's clean-up", async () => {
            const ann = await visit(ANN);
            const listeners = [
                "echo:orders,OrderShipped",
                "echo:orders,.order.custom",
                "echo-private:orders.1,OrderShipped",
                "echo-encryptedPrivate:secrets.1,SecretShared",
                "echo-notification:App.Models.User.1",
            ];
            const component = await mount(ann, listeners, ["orders", "private-orders.1", "private-encrypted-secrets.1", "private-App.Models.User.1"]);
            // A second component, kept mounted: its listeners hear the sentinels after the first one's clean-up.
            await mount(ann, ["echo:sentinel,Done", "echo-encryptedPrivate:secrets.1,Done"], ["sentinel", "private-encrypted-secrets.1"]);

            await dev().broadcast({ channels: ["orders"], event: "App\\Events\\OrderShipped", payload: { n: 1 } });
            await dev().broadcast({ channels: ["orders"], event: "order.custom", payload: { n: 2 } });
            await dev().broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { n: 3 } });
            await dev().broadcast({ channels: ["private-encrypted-secrets.1"], event: "App\\Events\\SecretShared", payload: { n: 4 } });
            const notification = { id: "3f1c-notification", type: "App\\Notifications\\InvoicePaid", amount: 5 };
            await dev().broadcast({ channels: ["private-App.Models.User.1"], event: "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated", payload: notification });
            const seen = await receivedCount(ann, 5);
            expect(seen).toEqual(
                expect.arrayContaining([
                    ["echo:orders,OrderShipped", { n: 1 }],
                    ["echo:orders,.order.custom", { n: 2 }],
                    ["echo-private:orders.1,OrderShipped", { n: 3 }],
                    ["echo-encryptedPrivate:secrets.1,SecretShared", { n: 4 }],
                    ["echo-notification:App.Models.User.1", expect.objectContaining(notification)],
                ]),
            );
            expect(seen).toHaveLength(5);

            // Livewire's clean-up: stopListening(event, handler) on each channel, stopListening(name) for notifications.
            await ann.evaluate((id) => (window as unknown as LivewireWindow).livewire.unmount(id), component);
            await dev().broadcast({ channels: ["orders"], event: "App\\Events\\OrderShipped", payload: { n: 6 } });
            await dev().broadcast({ channels: ["private-orders.1"], event: "App\\Events\\OrderShipped", payload: { n: 7 } });
            await dev().broadcast({ channels: ["private-encrypted-secrets.1"], event: "App\\Events\\SecretShared", payload: { n: 8 } });
            await dev().broadcast({ channels: ["private-App.Models.User.1"], event: "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated", payload: { ...notification, id: "later" } });
            await dev().broadcast({ channels: ["sentinel"], event: "App\\Events\\Done", payload: { n: 9 } });
            await dev().broadcast({ channels: ["private-encrypted-secrets.1"], event: "App\\Events\\Done", payload: { n: 10 } });
            // The hub delivers in order on the one stream, and an encrypted channel's payloads are decrypted in
            // order: everything broadcast before the sentinels had its turn.
            const after = await receivedCount(ann, 7);
            expect(after.slice(5)).toEqual(
                expect.arrayContaining([
                    ["echo:sentinel,Done", { n: 9 }],
                    ["echo-encryptedPrivate:secrets.1,Done", { n: 10 }],
                ]),
            );
            expect(after).toHaveLength(7);
        });

        it("reports here, joining and leaving and presence events to echo-presence: listeners, and leaves on clean-up", async () => {
            const presence = ["echo-presence:room,here", "echo-presence:room,joining", "echo-presence:room,leaving", "echo-presence:room,Moved"];
            const ann = await visit(ANN);
            await mount(ann, presence, ["presence-room"]);
            await waitUntil("Ann's here()", async () => (await received(ann)).some(([listener]) => listener === "echo-presence:room,here"), DEADLINE);
            expect(await received(ann)).toEqual([["echo-presence:room,here", [{ id: ANN, name: "Ann" }]]]);

            const bob = await visit(BOB);
            const bobs = await mount(bob, presence, ["presence-room"]);
            await waitUntil("Bob's here()", async () => (await received(bob)).length > 0, DEADLINE);
            expect((await received(bob))[0]).toEqual(["echo-presence:room,here", expect.arrayContaining([{ id: ANN, name: "Ann" }, { id: BOB, name: "Bob" }])]);
            await receivedCount(ann, 2);

            await dev().broadcast({ channels: ["presence-room"], event: "App\\Events\\Moved", payload: { to: "hall" } });
            await receivedCount(ann, 3);
            await bob.evaluate((id) => (window as unknown as LivewireWindow).livewire.unmount(id), bobs);
            expect(await bob.evaluate(() => Object.keys((window as unknown as LivewireWindow).Echo.connector.channels))).toEqual([]);
            expect(await receivedCount(ann, 4)).toEqual([
                ["echo-presence:room,here", [{ id: ANN, name: "Ann" }]],
                ["echo-presence:room,joining", { id: BOB, name: "Bob" }],
                ["echo-presence:room,Moved", { to: "hall" }],
                ["echo-presence:room,leaving", { id: BOB, name: "Bob" }],
            ]);
        });

        it("sends this connection's socket id on Livewire's requests, so that a toOthers() broadcast reaches others only", async () => {
            const ann = await visit(ANN);
            const bob = await visit(BOB);
            await mount(ann, ["echo:feed,Posted"], ["feed"]);
            await mount(bob, ["echo:feed,Posted"], ["feed"]);
            const sent: string[] = [];
            ann.on("request", (request) => {
                if (request.url().endsWith("/dev/broadcast")) sent.push(request.headers()["x-socket-id"] ?? "(none)");
            });
            expect(await ann.evaluate(() => (window as unknown as LivewireWindow).livewire.request({ channels: ["feed"], event: "App\\Events\\Posted", payload: { n: 1 }, toOthers: true }))).toBe(200);
            const socketId = await ann.evaluate(() => (window as unknown as LivewireWindow).Echo.socketId());
            expect(sent).toEqual([socketId]);
            await dev().broadcast({ channels: ["feed"], event: "App\\Events\\Posted", payload: { n: 2 } });
            expect(await receivedCount(bob, 2)).toEqual([
                ["echo:feed,Posted", { n: 1 }],
                ["echo:feed,Posted", { n: 2 }],
            ]);
            // Ann's stream carried n: 1 before n: 2, and left it out.
            expect(await receivedCount(ann, 1)).toEqual([["echo:feed,Posted", { n: 2 }]]);
        });

        it("needs MercureEcho on window.Echo for encrypted channels: stock Echo refuses encryptedPrivate() for the Mercure connector", async () => {
            const page = await visit(ANN);
            const refused = await page.evaluate(() => {
                const { Echo, MercureConnector } = (window as unknown as LivewireWindow).EchoMercure;
                try {
                    new Echo({ broadcaster: MercureConnector, host: "/.well-known/mercure" }).encryptedPrivate("secrets.1");
                    return "accepted";
                } catch (error) {
                    return (error as Error).message;
                }
            });
            expect(refused).toMatch(/does not support encrypted private channels/);
        });
    },
);
