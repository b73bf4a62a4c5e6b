import type { AuthResult } from "../auth/auth-client";

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

/** A client's message to the engine; `c` is the client's id, unique across tabs. */
export type ToEngine =
    /** The client's channel set (after an `up`): recorded for the union, no request. */
    | { readonly t: "hello"; readonly c: string; readonly names: readonly string[] }
    /** Authorize the client's channel set `names`; answered by a `granted` with the same `r`; `fresh`: not from the last grant (the hub refused the cookie). */
    | { readonly t: "auth"; readonly c: string; readonly r: number; readonly names: readonly string[]; readonly fresh?: boolean }
    /** Open virtual stream `s` for this subscribe URL; `w`: a whisper stream (not unioned). */
    | { readonly t: "open"; readonly c: string; readonly s: string; readonly url: string; readonly w: boolean }
    /** Close virtual stream `s`. */
    | { readonly t: "close"; readonly c: string; readonly s: string }
    /** The client leaves (its connector disconnected, or its page is hidden for good): forget its set and streams. */
    | { readonly t: "bye"; readonly c: string }
    /** Is the engine alive? Answered by `pong` from the engine's message handler (no timer: a throttled leader answers too). */
    | { readonly t: "ping"; readonly c: string };

/** The engine's message to the clients; `e` is the engine's epoch (clients ignore other epochs than the one they follow). */
export type ToClient =
    /** An engine started: clients re-register (hello, pending auth, their streams from their own cursor). */
    | { readonly t: "up"; readonly e: string }
    /** The leading tab goes away (`pagehide`): streams wait for the next `up`. */
    | { readonly t: "down"; readonly e: string }
    /** Answer to `ping`. */
    | { readonly t: "pong"; readonly e: string }
    /** Answer to client `c`'s `auth` number `r`. */
    | { readonly t: "granted"; readonly e: string; readonly c: string; readonly r: number; readonly result: AuthResult }
    /** Virtual stream `s` is now connecting (0), open (1) or closed for good (2). */
    | { readonly t: "state"; readonly e: string; readonly s: string; readonly state: 0 | 1 | 2 }
    /** An event of the real main stream (`w` null: for every virtual main stream) or of the whisper stream keyed `w`. */
    | EventMessage
    /** The events of one of the leading tab's tasks (a network chunk of the real streams), in order, in one bus message. */
    | { readonly t: "events"; readonly e: string; readonly events: readonly EventMessage[] };

/** One event of a real stream as the engine hands it to the clients (see {@link ToClient}). */
export type EventMessage = {
    readonly t: "event";
    readonly e: string;
    readonly w: string | null;
    readonly type: "message" | "mercure";
    readonly data: string;
    readonly id: string;
    /** Only for virtual stream `s`: a replay of what it missed before it opened (see `stream-mux.ts`). */
    readonly s?: string;
};

/** The key of a whisper stream: its `match` topics (laravel-mercure §7.3: one per channel), whatever its cursor. */
export function whisperKey(url: string): string {
    return new URL(url).searchParams.getAll("match").join("\n");
}

/** A fresh id (clients, epochs): a UUID where available, else a random base-36 string with the time. */
export function newId(): string {
    const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
    if (typeof crypto?.randomUUID === "function") return crypto.randomUUID();
    return Math.random().toString(36).slice(2) + "." + Date.now().toString(36);
}

/**
 * Whether `data`, heard on the bus, is an engine's message (`ToClient`) with the shape its type needs: anything else (another
 * script's post on the same name, a forged or truncated message) is dropped, never followed. The engine checks the
 * clients' messages itself (`engine.ts`: only the leading tab's engine reads them).
 */
export function isClientMessage(data: unknown): data is ToClient {
    const m = data as Record<string, unknown> | null;
    const str = (value: unknown): value is string => typeof value === "string";
    if (typeof m !== "object" || m === null || !str(m["e"]) || m["e"] === "") return false;
    const { t, s, result } = m as { t: unknown; s: unknown; result: { kind?: unknown; response?: { channels?: unknown } } | null };
    switch (t) {
        case "up":
        case "down":
        case "pong":
            return true;
        case "granted":
            return str(m["c"]) && typeof m["r"] === "number" && (result?.kind === "ok" ? result.response?.channels instanceof Map : /^(rejected|error|aborted)$/.test(String(result?.kind)));
        case "state":
            return str(s) && [0, 1, 2].includes(m["state"] as number);
        case "event":
            return (m["w"] === null || str(m["w"])) && /^(message|mercure)$/.test(String(m["type"])) && str(m["data"]) && str(m["id"]) && (s === undefined || str(s));
        case "events":
            return Array.isArray(m["events"]) && m["events"].every((event: unknown) => isClientMessage(event) && event.t === "event" && event.e === m["e"]);
    }
    return false;
}
