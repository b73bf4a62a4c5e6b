import type { AuthResult } from "../auth/auth-client";
import { rawUrlDecode } from "../topic/encode";

/*
 * The messages between the tabs' connectors ("clients") and the hub engine of the leading tab, on one
 * `BroadcastChannel` per hub and auth endpoint (in the leading tab, its own clients and the engine
 * exchange the same messages in-process). Every message is structured-clonable.
 *
 * Tabs that run different builds of this package (a page opened before a deploy, one after) join the same link, so
 * a release may only add to these messages what the previous release ignores, in both directions (an engine of
 * either build serving clients of both). A change the previous release would misread must change the link's name
 * (`share-platform.ts`) instead: the two builds' tabs then each share among themselves, as two apps would.
 */

/**
 * A client's message to the engine; `c` is the client's id, unique across tabs. On the bus the sending tab's link adds
 * `k`, the id of its inbox (see {@link inboxName}), where the engine's answers and events for that client go.
 */
export type ToEngine =
    /**
     * The client's channel set (after an `up`, or narrowed by its leaves): recorded for the union, no request; `fresh`:
     * its requests re-sent next are `fresh` (see `auth`), and no request is answered from the last grant from now on;
     * `resync`: after an `up`, with no request of its own to re-send: the engine authorizes the set if its last grant
     * leaves a guarded channel of it out (see `AuthGateway.record`; an engine of an earlier build ignores it).
     */
    | { readonly t: "hello"; readonly c: string; readonly names: readonly string[]; readonly fresh?: boolean | undefined; readonly resync?: boolean; readonly k?: string }
    /**
     * Authorize the client's channel set `names`; answered by a `granted` with the same `r`; `fresh`: not from the last
     * grant (the hub refused the cookie); `p`: a probe of the client's batch isolation (its lone retry, or a part of its
     * set), authorized alone and not recorded as its set (an engine of an earlier build ignores it: it records the names).
     */
    | { readonly t: "auth"; readonly c: string; readonly r: number; readonly names: readonly string[]; readonly fresh?: boolean; readonly p?: boolean; readonly k?: string }
    /** Open virtual stream `s` for this subscribe URL; `w`: a whisper stream (not unioned). */
    | { readonly t: "open"; readonly c: string; readonly s: string; readonly url: string; readonly w: boolean; readonly k?: string }
    /** Close virtual stream `s`. */
    | { readonly t: "close"; readonly c: string; readonly s: string; readonly k?: string }
    /** The client leaves (its connector disconnected, or its page is hidden for good): forget its set and streams. */
    | { readonly t: "bye"; readonly c: string; readonly k?: string }
    /**
     * Is the engine alive? Answered by `pong` from the engine's message handler (no timer: a throttled leader answers
     * too). `n`: the channels of a tab that found the lead taken before its share client loaded (`ringTabs` in
     * load.ts), on the inbox of a tab that leads on its own alone, which authorizes them beside its own while it
     * downloads its engine.
     */
    | { readonly t: "ping"; readonly c: string; readonly k?: string; readonly n?: readonly string[] }
    /** A tab's answer to the engine's `probe` (`c` ""): it is alive. */
    | { readonly t: "here"; readonly c: string; readonly k?: string };

/** The engine's message to every tab, on the link's bus (`e`: the engine's epoch; clients ignore other epochs than the one they follow). */
export type ToTabs =
    /** An engine started: clients re-register (hello, pending auth, their streams from their own cursor). */
    | { readonly t: "up"; readonly e: string }
    /** The leading tab goes away (`pagehide`): streams wait for the next `up`; `id`: see `probe`. */
    | { readonly t: "down"; readonly e: string; readonly id?: string | null }
    /** Answer to `ping`. */
    | { readonly t: "pong"; readonly e: string }
    /** Answer to `ping` of a tab that holds the lock while its engine chunk loads (retries included): wait, do not steal. */
    | { readonly t: "wait"; readonly e: string }
    /**
     * Which tabs are alive? Every follower answers with a `here` (see `tab-link.ts`, liveness). `id`: the engine's cursor
     * (an event id, no data): every event up to it that a tab's open streams wanted was posted to it before, so that a
     * tab whose channels were quiet resumes from there after a hand-over, not from its last own event.
     */
    | { readonly t: "probe"; readonly e: string; readonly id?: string | null }
    /** How many more whisper streams the engine's connection budget leaves (over HTTP/1.1; `Infinity` else). */
    | { readonly t: "room"; readonly e: string; readonly n: number };

/**
 * The engine's message to one client (in one tab's {@link Batch}, or in-process to the leading tab's own clients): never
 * on the bus that every tab hears, so that a tab gets the data of the channels it joined only.
 */
export type ToClient =
    /** Answer to client `c`'s `auth` number `r`. */
    | { readonly t: "granted"; readonly c: string; readonly r: number; readonly result: AuthResult }
    /**
     * Virtual stream `s` is now connecting (0), open (1) or closed for good (2). With 0, `id`: the engine's cursor as it
     * says so, when the stream was open and got everything forwarded to it up to there (it resumes from there).
     */
    | { readonly t: "state"; readonly s: string; readonly state: 0 | 1 | 2; readonly id?: string }
    /** The engine dropped this client (`c` "": every client of the tab) for its silence: re-register as after an `up`. */
    | { readonly t: "dropped"; readonly c: string }
    /** An event of the real main stream (`w` null) or of the whisper stream keyed `w`, for the clients it is addressed to. */
    | EventMessage;

/**
 * What the engine posts to one tab, on that tab's inbox: the messages of one of the leading tab's tasks for that tab's
 * clients, in order, in one bus message (one structured clone and one delivery per task and tab, not per event).
 */
export interface Batch {
    readonly t: "batch";
    readonly e: string;
    readonly m: readonly ToClient[];
}

/** One event of a real stream as the engine hands it to the clients it is addressed to (see {@link ToClient}). */
export type EventMessage = {
    readonly t: "event";
    readonly w: string | null;
    readonly type: "message" | "mercure";
    readonly data: string;
    readonly id: string;
    /** Only for virtual stream `s`: a replay of what it missed before it opened (see `stream-mux.ts`). */
    readonly s?: string;
};

/** The name of the inbox of tab `tab` on link `link`: the bus where the engine posts that tab's {@link Batch}es. */
export function inboxName(link: string, tab: string): string {
    return link + " inbox " + tab;
}

/** The client a virtual stream id belongs to (stream ids are `<client id>/<n>`). */
export function clientOf(stream: string): string {
    return stream.slice(0, stream.lastIndexOf("/"));
}

/** The key of a whisper stream: its `match` topics (laravel-mercure §7.3: one per channel), whatever its cursor. */
export function whisperKey(url: string): string {
    return new URL(url).searchParams.getAll("match").join("\n");
}

/**
 * The channel names a main stream's `match` topics carry: each topic itself (a legacy server's topic is the bare name)
 * and, for `…channel/<enc(name)>` (laravel-mercure §3: an encoded name has no `/`), the decoded name.
 */
export function topicNames(topics: readonly string[]): ReadonlySet<string> {
    const names = new Set<string>(topics);
    for (const topic of topics) {
        const encoded = /channel\/([^/]*)$/.exec(topic)?.[1];
        const name = encoded === undefined ? null : rawUrlDecode(encoded);
        if (name !== null) names.add(name);
    }
    return names;
}

/** The channel names a whisper stream's `match` topics are for: `…whisper/<enc(name)>` (laravel-mercure §3), decoded. */
export function whisperNames(url: string): string[] {
    const names: string[] = [];
    for (const topic of new URL(url).searchParams.getAll("match")) {
        const encoded = /whisper\/([^/]*)$/.exec(topic)?.[1];
        const name = encoded === undefined ? null : rawUrlDecode(encoded);
        if (name !== null) names.push(name);
    }
    return names;
}

/** A fresh id (clients, epochs): a UUID where available, else a random base-36 string with the time. */
export function newId(): string {
    const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
    if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
    return Math.random().toString(36).slice(2) + "." + Date.now().toString(36);
}

/** Whether `data`, heard on the link's bus, is an engine's {@link ToTabs} message: anything else is dropped, never followed. */
export function isTabsMessage(data: unknown): data is ToTabs {
    const m = data as Record<string, unknown> | null;
    if (typeof m !== "object" || m === null || typeof m["e"] !== "string" || m["e"] === "") return false;
    return m["t"] === "room" ? typeof m["n"] === "number" : /^(up|down|pong|wait|probe)$/.test(String(m["t"]));
}

/**
 * Whether `data`, heard on a tab's inbox, is an engine's {@link Batch} whose every message has the shape its type needs:
 * anything else (another script's post on the same name, a forged or truncated message) is dropped, never followed. The
 * engine checks the clients' messages itself (`engine.ts`: only the leading tab's engine reads them).
 */
export function isBatch(data: unknown): data is Batch {
    const m = data as Record<string, unknown> | null;
    return typeof m === "object" && m !== null && m["t"] === "batch" && typeof m["e"] === "string" && m["e"] !== "" && Array.isArray(m["m"]) && m["m"].every(isClientMessage);
}

/** Whether `data` is one {@link ToClient} message with the shape its type needs. */
function isClientMessage(data: unknown): data is ToClient {
    const m = data as Record<string, unknown> | null;
    const str = (value: unknown): value is string => typeof value === "string";
    if (typeof m !== "object" || m === null) return false;
    const { t, s, result } = m as { t: unknown; s: unknown; result: { kind?: unknown; response?: { channels?: unknown } } | null };
    switch (t) {
        case "granted":
            return str(m["c"]) && typeof m["r"] === "number" && (result?.kind === "ok" ? result.response?.channels instanceof Map : /^(rejected|error|aborted)$/.test(String(result?.kind)));
        case "state":
            return str(s) && [0, 1, 2].includes(m["state"] as number) && (m["id"] === undefined || str(m["id"]));
        case "dropped":
            return str(m["c"]);
        case "event":
            return (m["w"] === null || str(m["w"])) && /^(message|mercure)$/.test(String(m["type"])) && str(m["data"]) && str(m["id"]) && (s === undefined || str(s));
    }
    return false;
}
