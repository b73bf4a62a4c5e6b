import { randomBytes } from "node:crypto";
import type { DevServer, DevServerOptions } from "../server";
import { startDevServer } from "../server";
import type { DevUser } from "../laravel/options";
import type { DemoHub } from "./own-hub";
import { DEMO_ENCRYPTED_CHANNEL, demoPage } from "./page";

/** Options of {@link startDemo}. */
export interface DemoOptions extends Pick<DevServerOptions, "port" | "host" | "jwtKey" | "externalHub"> {
    /**
     * A Mercure hub the user runs (`demo --hub`), instead of the embedded one: the app publishes to its URL with
     * its key, issuer, cookie name and audience; `jwtKey` and `externalHub` then do not apply.
     */
    ownHub?: DemoHub;
}

/** The demo's users: log in as one per browser tab or profile. */
export const DEMO_USERS: DevUser[] = [
    { id: 1, name: "Ann" },
    { id: 2, name: "Ben" },
    { id: 3, name: "Cho" },
];

/**
 * Start the dev stack with the demo page at `/`: a public feed, a private channel per user
 * (`App.Models.User.{id}`), an end-to-end encrypted channel every user may join (its key derived from an
 * `encryption_key` drawn at each start), a private channel where whispers show who is typing
 * (`private-chat`), who is online in a presence room (`lobby`), and controls that broadcast from the "server".
 */
export function startDemo(options: DemoOptions = {}): Promise<DevServer> {
    const { ownHub, ...server } = options;
    const external = ownHub === undefined ? server.externalHub : { url: ownHub.url };
    // Laravel's claims: the issuer, cookie name and audience the user's hub expects.
    const claims = ownHub === undefined ? {} : { issuer: ownHub.issuer, cookieName: ownHub.cookieName, ...(ownHub.audience === null ? {} : { audience: ownHub.audience }) };
    return startDevServer({
        ...server,
        ...(ownHub === undefined ? {} : { jwtKey: ownHub.jwtKey, externalHub: external }),
        app: { users: DEMO_USERS, encryptionKey: randomBytes(32).toString("base64"), ...claims },
        channels: {
            // routes/channels.php of the demo: each user may only listen to their own channel...
            "App.Models.User.{id}": (user, params) => String(user.id) === params["id"],
            // ...and every user may join the chat: `chat` authorizes both private-chat (whispers) and the encrypted
            // private-encrypted-chat, as Laravel normalises both names to `chat`.
            [DEMO_ENCRYPTED_CHANNEL.slice("private-encrypted-".length)]: () => true,
            // Everyone may enter the lobby; what the callback returns is what the others see of them.
            lobby: (user) => ({ id: user.id, name: user.name }),
        },
        // The page subscribes on the hub's path as the dev server serves it (an external hub's own path).
        // Rendered at each request with the hub's last event id, as a Laravel view with the docs' middleware is.
        pages: { "/": (page) => demoPage(external === undefined || typeof external === "function" ? undefined : new URL(external.url).pathname, page.hubLink) },
    });
}
