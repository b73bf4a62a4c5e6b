import { randomUUID } from "node:crypto";
import { hasForbiddenChars } from "./form";
import { isReservedTopic, WILDCARD } from "./matchers";

/** An update publishable through the hub, as {@link MercureHub.publish} takes it. */
export interface HubUpdate {
    /** Canonical topic first, then alternate topics; at least one. */
    topics: string[];
    /** The payload (opaque to the hub); default "". */
    data?: string;
    /** Deliver only to subscribers whose token grants one of the topics. */
    private?: boolean;
    /** Event id; generated (`urn:uuid:…`) when absent. */
    id?: string;
    /** SSE event type; `mercure` is reserved for the hub. */
    type?: string;
    /** SSE reconnection time in ms. */
    retry?: number;
}

/** A validated update as stored in history and dispatched. */
export interface Update {
    /** Event id (publisher-supplied or generated). */
    readonly id: string;
    /** Canonical and alternate topics, exactly as published. */
    readonly topics: readonly string[];
    /** The payload. */
    readonly data: string;
    /** Whether delivery needs a subscribe grant. */
    readonly private: boolean;
    /** SSE event type, when one was published. */
    readonly type?: string;
    /** SSE `retry`, as the digits published. */
    readonly retry?: string;
}

/** Update fields as they arrive, before validation (`retry` still a string of digits). */
export interface UpdateFields {
    /** Topics, in order. */
    readonly topics: readonly string[];
    /** Payload. */
    readonly data?: string;
    /** Whether the update is private. */
    readonly private: boolean;
    /** Requested id. */
    readonly id?: string;
    /** Requested SSE type. */
    readonly type?: string;
    /** Requested retry. */
    readonly retry?: string;
}

/**
 * Where topics are resolved to test for the reserved namespace: only the path of the result counts, so any
 * fixed origin serves (the reference hub uses this one, whatever its resource identifier).
 */
const RESERVED_NAMESPACE_ORIGIN = "https://mercure.invalid";

/** Most topics one update may carry (the Go hub's limit). */
export const MAX_TOPICS = 1000;

/** The reserved SSE type of hub-generated subscription events. */
export const SUBSCRIPTION_EVENT_TYPE = "mercure";

/** Generate an event id: an IRI, as the protocol requires. */
export function generateEventId(): string {
    return `urn:uuid:${randomUUID()}`;
}

/**
 * Check publish fields against the protocol's rules for a hub served at `hubPath`. Returns the update, or the
 * reason it is a bad request.
 */
export function validateUpdate(
    fields: UpdateFields,
    hubPath: string,
): { ok: true; update: Update } | { ok: false; message: string } {
    // [spec] §3: at least one topic.
    if (fields.topics.length === 0) return { ok: false, message: 'Missing "topic" field.' };
    if (fields.topics.length > MAX_TOPICS) return { ok: false, message: `More than ${MAX_TOPICS} topics.` };
    for (const topic of fields.topics) {
        if (topic === "" || hasForbiddenChars(topic)) return { ok: false, message: "Invalid topic." };
        // [spec] §3: `*` is not a topic, and the hub's own namespace is reserved.
        if (topic === WILDCARD) return { ok: false, message: 'The topic "*" is reserved.' };
        if (isReservedTopic(topic, RESERVED_NAMESPACE_ORIGIN + hubPath, hubPath)) {
            return { ok: false, message: `Topics under ${hubPath} are reserved to the hub.` };
        }
    }
    const { id, type, retry } = fields;
    if (fields.data !== undefined && /\p{Cs}/u.test(fields.data)) return { ok: false, message: "Invalid data." };
    // [spec] §3: ids must not start with `#`, not be `earliest`, no controls or Cf characters.
    if (id !== undefined && (id.startsWith("#") || id === "earliest" || hasForbiddenChars(id))) {
        return { ok: false, message: "Invalid id." };
    }
    if (type !== undefined && (type === SUBSCRIPTION_EVENT_TYPE || hasForbiddenChars(type))) {
        return { ok: false, message: "Invalid type." };
    }
    if (retry !== undefined && !/^[0-9]+$/.test(retry)) return { ok: false, message: "Invalid retry." };
    return {
        ok: true,
        update: {
            id: id ?? generateEventId(),
            topics: [...fields.topics],
            data: fields.data ?? "",
            private: fields.private,
            ...(type !== undefined ? { type } : {}),
            ...(retry !== undefined ? { retry } : {}),
        },
    };
}
