import type { MercureConnector } from "../index";
import { wireEventName } from "./event-names";
import { broadcastUpdates, NOTIFICATION_EVENT, whisperTopic, type TestAuthEndpoint, type TestUser } from "./laravel-side";
import type { MemoryHub } from "./memory-hub";

/** Microtask turns one round of {@link TestHub.flush} runs; the longest chain between two hub steps is far shorter. */
const ROUND = 500;

/** Rounds after which {@link TestHub.flush} gives up: the connector never stops working (a loop). */
const MAX_ROUNDS = 1_000;

/** A whisper the app sent, as `hub.whispers(channel)` lists it. */
export interface SentWhisper {
    /** The event name as passed to `whisper()` (without the wire's `client-` prefix). */
    readonly event: string;
    /** The payload. */
    readonly payload: unknown;
}

/** Options of {@link TestHub.broadcast}. */
export interface BroadcastOptions {
    /** The socket id of the request that caused the broadcast (`X-Socket-Id`): with `toOthers()`, the sender's `echo.socketId()`. */
    readonly socket?: string | null;
}

/** Options of {@link TestHub.whisper}. */
export interface WhisperOptions {
    /** The socket id of the whispering client; default `"test-peer"`. The app's own `echo.socketId()` is dropped, as on the wire. */
    readonly from?: string;
}

/** A presence channel's made-up members: other users' connections. */
export interface PresenceControl {
    /** Another user joins (one more connection: a user in two tabs joins twice). */
    join(user: TestUser): PresenceControl;
    /** That user's oldest connection leaves; throws when the user has none on this channel. */
    leave(user: TestUser): PresenceControl;
}

/** What `status()` can make of the connection: the hub drops it, accepts it again, or refuses it. */
export type HubCondition = "reconnecting" | "connected" | "failed";

/**
 * The controls of the in-memory hub and Laravel app behind a test Echo: what the server side does (broadcast,
 * presence, whispers of other users, denials, failures, outages) and what the app did (channels, listeners, whispers,
 * auth requests). Hub steps happen at once; what the connector does in reply in a later tick (authorizing, opening
 * streams, fetching a presence snapshot) happens in {@link TestHub.flush}.
 */
export class TestHub {
    /** Create the controls over `network` and `auth`; `connector()` is the test Echo's connector. */
    constructor(
        private readonly network: MemoryHub,
        private readonly auth: TestAuthEndpoint,
        private readonly connector: () => MercureConnector,
        private readonly namespace: string | false,
    ) {}

    /**
     * Broadcast `event` on one channel or several (full names: `orders`, `private-App.Models.User.1`,
     * `presence-room.1`) as Laravel does: `"OrderShipped"` goes out as `App\Events\OrderShipped` (Echo's namespace),
     * `".order.shipped"` as the `broadcastAs()` name `order.shipped`; public channels in one update, each guarded
     * channel alone; with `socket`, a connection whose socket id it is drops it (`toOthers()`). Returns the event id.
     */
    broadcast(channels: string | readonly string[], event: string, payload: unknown = {}, options: BroadcastOptions = {}): string {
        const names = typeof channels === "string" ? [channels] : channels;
        if (names.some((name) => name.startsWith("private-encrypted-"))) {
            throw new Error("The test hub does not seal broadcasts to private-encrypted-* channels: test them against startTestStack() (laravel-echo-mercure/testing/e2e).");
        }
        const updates = broadcastUpdates(names, wireEventName(event, this.namespace), payload, options.socket ?? null);
        return updates.map((update) => this.network.publish(update.topics, update.data, { private: update.private })).at(-1) ?? "";
    }

    /**
     * Send a Laravel notification to `channel` (a user's private channel: `private-App.Models.User.1`): `type` is the
     * notification class, `data` its `toBroadcast()` array; `notification()` callbacks receive it with `id` and `type`.
     */
    notify(channel: string, type: string, data: Record<string, unknown> = {}, id = "test-notification"): string {
        return this.broadcast(channel, "\\" + NOTIFICATION_EVENT, { ...data, id, type });
    }

    /** Control presence channel `channel` (full name `presence-…`): other users join and leave. */
    presence(channel: string): PresenceControl {
        const control: PresenceControl = {
            join: (user) => {
                this.network.join(channel, user);
                return control;
            },
            leave: (user) => {
                if (!this.network.leave(channel, user)) throw new Error(`User ${String(user.id)} is not a member of ${channel} in the test hub.`);
                return control;
            },
        };
        return control;
    }

    /** Another client whispers `event` (without `client-`) on `channel` (full name), as its socket `from`. */
    whisper(channel: string, event: string, payload: unknown = {}, options: WhisperOptions = {}): string {
        const name = event.startsWith("client-") ? event : "client-" + event;
        const data = JSON.stringify({ channels: [channel], event: name, payload, socket: options.from ?? "test-peer" });
        return this.network.publish([whisperTopic(channel)], data, { private: true });
    }

    /** The Laravel app denies `channel` (its callback returns false) from the next auth request on, until {@link TestHub.allow}. */
    deny(channel: string): void {
        this.auth.deny(channel);
    }

    /** The Laravel app answers every auth request carrying `channel` with HTTP `status`, until {@link TestHub.allow}. */
    fail(channel: string, status: number): void {
        this.auth.fail(channel, status);
    }

    /** Authorize `channel` again after {@link TestHub.deny} or {@link TestHub.fail}. */
    allow(channel: string): void {
        this.auth.allow(channel);
    }

    /**
     * Change the connection: `reconnecting` drops every stream (each reconnects by itself once `connected` is given),
     * `connected` lets them reconnect with the replay of what they missed, `failed` refuses every stream with HTTP 400
     * (a request the hub cannot serve: the connector stops with `failed`).
     */
    status(condition: HubCondition): void {
        if (condition === "reconnecting") this.network.interrupt();
        else if (condition === "connected") this.network.reconnect();
        else this.network.refuse(400);
    }

    /**
     * Let the connector do what it does in a later tick (authorize, open and replace streams, fetch presence
     * snapshots, publish whispers, run its callbacks): resolves once the hub has been still for a full round of
     * microtasks. Uses no timers, so fake timers need no advancing; wrap it in `act()` with React.
     */
    async flush(): Promise<void> {
        for (let round = 0; round < MAX_ROUNDS; round++) {
            const before = this.network.activity;
            for (let turn = 0; turn < ROUND; turn++) await Promise.resolve();
            if (this.network.activity === before) return;
        }
        throw new Error(`The connector kept working through ${MAX_ROUNDS} rounds of flush(): a refresh loop?`);
    }

    /** The channels the hub carries to the app right now (joined, authorized, on an open stream), by full name. */
    joined(): string[] {
        return this.network.subscribedChannels();
    }

    /** The event names (as Echo formats them: `App\Events\OrderShipped`, `client-typing`) the app listens for on `channel`. */
    listeners(channel: string): string[] {
        return this.connector().channels[channel]?.listenedEvents() ?? [];
    }

    /** The whispers the app sent on `channel` (full name), in order. */
    whispers(channel: string): SentWhisper[] {
        return (this.network.published.get(channel) ?? []).map(({ event, payload }) => ({ event, payload }));
    }

    /** The channel names each auth request carried, in order. */
    authRequests(): string[][] {
        return this.auth.requests.map((names) => [...names]);
    }
}
