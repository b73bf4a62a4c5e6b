import { rawUrlEncode } from "../index";

/*
 * What the Laravel app of a test would do (laravel-mercure §2–§4): answer the batch auth request, name topics,
 * name events and split one broadcast into the hub updates Laravel publishes. The in-memory hub (memory-hub.ts)
 * carries the updates; the connector under test reads them as it reads Laravel's.
 */

/** The `topic_prefix` the in-memory Laravel app answers with (Laravel's default). */
export const TOPIC_PREFIX = "https://laravel.alt/echo/";

/** The event name of a Laravel notification broadcast (laravel-mercure §4.6). */
export const NOTIFICATION_EVENT = "Illuminate\\Notifications\\Events\\BroadcastNotificationCreated";

/** A user as a test describes it: Laravel's presence callback result, with the user's id. */
export interface TestUser {
    /** The user's broadcasting identifier (`user_id` of the presence payload, as a string). */
    readonly id: string | number;
    /** Anything else the app's presence channel callback returns for this user. */
    readonly [key: string]: unknown;
}

/** The channel topic of a full channel name (laravel-mercure §3). */
export function channelTopic(name: string): string {
    return TOPIC_PREFIX + "channel/" + rawUrlEncode(name);
}

/** The whisper topic of a full channel name (laravel-mercure §3). */
export function whisperTopic(name: string): string {
    return TOPIC_PREFIX + "whisper/" + rawUrlEncode(name);
}

/** The full channel name of a channel topic, or null for a topic outside the channel namespace. */
export function channelOfTopic(topic: string): string | null {
    const prefix = TOPIC_PREFIX + "channel/";
    if (!topic.startsWith(prefix)) return null;
    try {
        return decodeURIComponent(topic.slice(prefix.length));
    } catch {
        return null;
    }
}

/** Whether a channel is guarded (private, encrypted private or presence): authorized per user, published alone. */
export function isGuarded(name: string): boolean {
    return name.startsWith("private-") || name.startsWith("presence-");
}

/** The presence payload Laravel puts in a member's grant (laravel-mercure §5.3). */
export function memberPayload(user: TestUser): { user_id: string; user_info: TestUser } {
    return { user_id: String(user.id), user_info: user };
}

/** One update Laravel publishes to the hub. */
export interface LaravelUpdate {
    /** Its topics. */
    readonly topics: readonly string[];
    /** Its data: the envelope JSON. */
    readonly data: string;
    /** Whether it is private (guarded channels). */
    readonly private: boolean;
}

/**
 * Split one broadcast as Laravel does (laravel-mercure §4.3): the public channels together in one update, each
 * guarded channel alone; the envelope is `{channels, event, payload, socket}` with a null `socket` left out.
 */
export function broadcastUpdates(channels: readonly string[], event: string, payload: unknown, socket: string | null): LaravelUpdate[] {
    const envelope = (names: readonly string[]) =>
        JSON.stringify({ channels: names, event, payload: payload ?? [], ...(socket === null ? {} : { socket }) });
    const open = channels.filter((name) => !isGuarded(name));
    const updates: LaravelUpdate[] = [];
    if (open.length > 0) updates.push({ topics: open.map(channelTopic), data: envelope(open), private: false });
    for (const name of channels.filter(isGuarded)) updates.push({ topics: [channelTopic(name)], data: envelope([name]), private: true });
    return updates;
}

/** The channels a test told the in-memory Laravel app to deny or to fail, and the auth requests it answered. */
export class TestAuthEndpoint {
    /** Channels whose auth is denied (`denied: true`) until {@link TestAuthEndpoint.allow}. */
    readonly #denied = new Set<string>();

    /** Channels whose batches fail with an HTTP status until {@link TestAuthEndpoint.allow}. */
    readonly #failing = new Map<string, number>();

    /** The channel names of every batch, in order. */
    readonly requests: string[][] = [];

    /** Deny `name` from the next auth request on. */
    deny(name: string): void {
        this.#denied.add(name);
    }

    /** Answer every batch that carries `name` with HTTP `status` from the next auth request on. */
    fail(name: string, status: number): void {
        this.#failing.set(name, status);
    }

    /** Authorize `name` again (undo {@link TestAuthEndpoint.deny} and {@link TestAuthEndpoint.fail}). */
    allow(name: string): void {
        this.#denied.delete(name);
        this.#failing.delete(name);
    }

    /**
     * Answer one batch auth request body (laravel-mercure §2.2–§2.5): the status and the JSON body, with per-channel
     * denials, `expires_in` 300, the topic prefix and client events on.
     */
    answer(body: unknown): { status: number; body: string } {
        const names = readChannelNames(body);
        if (names === null) return { status: 403, body: JSON.stringify({ message: "This action is unauthorized." }) };
        this.requests.push(names);
        const failure = names.map((name) => this.#failing.get(name)).find((status) => status !== undefined);
        if (failure !== undefined) return { status: failure, body: JSON.stringify({ message: `HTTP ${failure} from the test auth endpoint.` }) };
        const unique = [...new Set(names)];
        return {
            status: 200,
            body: JSON.stringify({
                channel_names: unique.map((name) => (this.#denied.has(name) ? { name, denied: true } : { name })),
                expires_in: 300,
                topic_prefix: TOPIC_PREFIX,
                client_events: true,
            }),
        };
    }

    /** Whether the last answer would grant `name`. */
    grants(name: string): boolean {
        return !this.#denied.has(name) && !this.#failing.has(name);
    }
}

/** The `channel_names` of an auth request body (laravel-mercure §2.3), or null when Laravel would answer 403. */
function readChannelNames(body: unknown): string[] | null {
    let parsed: unknown;
    try {
        parsed = JSON.parse(typeof body === "string" ? body : "");
    } catch {
        return null;
    }
    const names = (parsed as { channel_names?: unknown } | null)?.channel_names;
    if (!Array.isArray(names) || names.length === 0 || names.length > 100) return null;
    return names.every((name): name is string => typeof name === "string") ? names : null;
}
