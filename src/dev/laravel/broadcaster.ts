import { channelKind } from "./channels";
import type { ChannelEncrypter } from "./encrypter";
import { LaravelDevError } from "./errors";
import { isPlainObject, phpJsonEncode, phpPayload } from "./json";
import { channelTopic } from "./topics";

/** One broadcast, as `broadcast(new SomeEvent(...))` produces it. */
export interface BroadcastInput {
    /** Full channel names (`news`, `private-orders.1`, `presence-room.2`, `private-encrypted-chat.1`). */
    channels: string[];
    /** The event name (`broadcastAs()` or the class name, e.g. `App\Events\OrderShipped`). */
    event: string;
    /** The event payload; a `socket` key in it is pulled out into the envelope, as Laravel does. */
    payload?: unknown;
    /** The sender's socket id (`X-Socket-Id`), for `toOthers()`. */
    socket?: string | null;
}

/** One update to POST to the hub. */
export interface Publication {
    /** The channels this update is addressed to (for error messages). */
    channels: string[];
    /** The `topic` form fields, in order. */
    topics: string[];
    /** The `data` form field. */
    data: string;
    /** Whether `private=on` is sent. */
    private: boolean;
}

/** Check a broadcast input from an untrusted source; throws `invalid_input`. */
export function validateBroadcastInput(input: unknown): BroadcastInput {
    if (!isPlainObject(input)) {
        throw new LaravelDevError("invalid_input", "A broadcast must be a JSON object with channels and event.");
    }
    const { channels, event, payload, socket } = input;
    if (!Array.isArray(channels) || !channels.every((name): name is string => typeof name === "string")) {
        throw new LaravelDevError("invalid_input", "The broadcast channels must be a list of channel names.");
    }
    if (typeof event !== "string" || event === "") {
        throw new LaravelDevError("invalid_input", "The broadcast event must be a non-empty string.");
    }
    if (socket !== undefined && socket !== null && typeof socket !== "string") {
        throw new LaravelDevError("invalid_input", "The broadcast socket must be a string or null.");
    }
    return { channels, event, payload, socket };
}

/**
 * Split one broadcast into hub updates: all public channels together in one public update, then each guarded
 * or encrypted channel alone as a private update, in the order given. Throws `broadcast_exception` when an
 * encrypted channel is addressed without an encryption key (before anything is published).
 */
export function buildPublications(
    input: BroadcastInput,
    topicPrefix: string | null,
    encrypter: ChannelEncrypter | null,
): Publication[] {
    // [spec] laravel-mercure §4.3: the server pulls `socket` out of the payload into the envelope.
    let payload = input.payload;
    let socket = input.socket ?? null;
    if (isPlainObject(payload) && Object.prototype.hasOwnProperty.call(payload, "socket")) {
        const { socket: pulled, ...rest } = payload;
        payload = rest;
        if (socket === null && typeof pulled === "string") socket = pulled;
    }
    const encodedPayload = phpPayload(payload);

    const publicChannels = input.channels.filter((name) => channelKind(name) === "public");
    const publications: Publication[] = [];
    if (publicChannels.length > 0) {
        // [spec] laravel-mercure §4.3: all public channels together, one `topic` each, not private.
        publications.push({
            channels: publicChannels,
            topics: publicChannels.map((name) => channelTopic(topicPrefix, name)),
            data: envelope({ channels: publicChannels, event: input.event, payload: encodedPayload, socket }),
            private: false,
        });
    }
    for (const name of input.channels) {
        const kind = channelKind(name);
        if (kind === "public") continue;
        if (kind === "encrypted") {
            // [spec] laravel-mercure §6.3: the routing envelope carries only the channel and the JWE.
            if (encrypter === null) {
                throw new LaravelDevError(
                    "broadcast_exception",
                    `Mercure error: cannot broadcast on the encrypted channel "${name}" without an encryption_key; set the encryptionKey option.`,
                );
            }
            const plaintext = envelope({ event: input.event, payload: encodedPayload, socket });
            publications.push({
                channels: [name],
                topics: [channelTopic(topicPrefix, name)],
                data: phpJsonEncode({ channels: [name], data: encrypter.seal(name, plaintext) }),
                private: true,
            });
            continue;
        }
        // [spec] laravel-mercure §4.3: each guarded channel alone, so recipients never learn siblings.
        publications.push({
            channels: [name],
            topics: [channelTopic(topicPrefix, name)],
            data: envelope({ channels: [name], event: input.event, payload: encodedPayload, socket }),
            private: true,
        });
    }
    return publications;
}

/** Encode a broadcast envelope with its keys in the given order and `null` values omitted. */
function envelope(fields: Record<string, unknown>): string {
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) {
        if (value !== null && value !== undefined) kept[key] = value;
    }
    return phpJsonEncode(kept);
}

/** How long one publish POST may take before it counts as unreachable. */
export const PUBLISH_TIMEOUT_MS = 10_000;

/**
 * POST one update to the hub as symfony/mercure's publisher does and resolve with the event id the hub
 * answers; rejects with `hub_rejected` (non-2xx) or `hub_unreachable`.
 */
export async function publish(hubUrl: string, publication: Publication, bearer: string): Promise<string> {
    // [spec] laravel-mercure §4.3: form fields `topic` (repeated), `data`, `private=on` only when private.
    const form = new URLSearchParams();
    for (const topic of publication.topics) form.append("topic", topic);
    form.append("data", publication.data);
    if (publication.private) form.append("private", "on");
    const where = `[${publication.channels.join(", ")}]`;
    let response: Response;
    try {
        response = await fetch(hubUrl, {
            method: "POST",
            headers: {
                Authorization: `Bearer ${bearer}`,
                "Content-Type": "application/x-www-form-urlencoded",
            },
            body: form.toString(),
            signal: AbortSignal.timeout(PUBLISH_TIMEOUT_MS),
        });
    } catch (cause) {
        throw new LaravelDevError(
            "hub_unreachable",
            `The Mercure hub at ${hubUrl} could not be reached to publish on ${where}; check the hubUrl option and that the hub is running.`,
            { cause },
        );
    }
    const text = await response.text().catch(() => "");
    if (!response.ok) {
        const detail = text.trim() === "" ? "" : ` (${text.trim().slice(0, 200)})`;
        throw new LaravelDevError(
            "hub_rejected",
            `The Mercure hub at ${hubUrl} answered HTTP ${response.status} to a publish on ${where}${detail}; check the JWT key, issuer and audience the hub expects.`,
            { hubStatus: response.status },
        );
    }
    return text;
}
