import type { ChannelCallback, DevUser } from "./options";

/** What a full channel name is, by its Pusher-convention prefix. */
export type ChannelKind = "public" | "private" | "encrypted" | "presence";

/** The outcome of running the channel callbacks for one channel. */
export type ChannelDecision = { granted: true; result: unknown } | { granted: false };

/** Classify a full channel name by its prefix (`private-encrypted-` before `private-`). */
export function channelKind(name: string): ChannelKind {
    if (name.startsWith("private-encrypted-")) return "encrypted";
    if (name.startsWith("private-")) return "private";
    if (name.startsWith("presence-")) return "presence";
    return "public";
}

/** Whether a channel needs authorisation (private, encrypted or presence). */
export function isGuarded(name: string): boolean {
    return channelKind(name) !== "public";
}

/** Strip the first matching Pusher prefix, as Laravel's `normalizeChannelName` does. */
export function normaliseChannelName(name: string): string {
    // [spec] laravel-mercure §2.3: `private-encrypted-`, `private-` or `presence-` stripped.
    for (const prefix of ["private-encrypted-", "private-", "presence-"]) {
        if (name.startsWith(prefix)) return name.slice(prefix.length);
    }
    return name;
}

interface Registration {
    pattern: string;
    regex: RegExp;
    params: string[];
    callback: ChannelCallback;
}

/**
 * The channel authorisation callbacks, as `Broadcast::channel('orders.{id}', fn)` registers them.
 */
export class ChannelRegistry {
    /** Registrations in the order they were made; Laravel tries them in that order. */
    private readonly registrations: Registration[] = [];

    /** Register `callback` for a Laravel-style pattern such as `orders.{id}` (matched on normalised names). */
    add(pattern: string, callback: ChannelCallback): void {
        const params: string[] = [];
        const source = pattern
            .split(/(\{[^}]*\})/)
            .map((part) => {
                if (part.startsWith("{") && part.endsWith("}")) {
                    params.push(part.slice(1, -1));
                    // A parameter is one dot-free segment, as Laravel's `([^\.]+)`.
                    return "([^.]+)";
                }
                return part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
            })
            .join("");
        this.registrations.push({ pattern, regex: new RegExp(`^${source}$`, "s"), params, callback });
    }

    /**
     * Decide whether `user` may join the full channel `name` as Laravel's `verifyUserCanAccessChannel` does:
     * matching callbacks run in registration order; `false` denies at once, a PHP-truthy result grants, any
     * other falsy result (`null`, `0`, `""`, `"0"`, `[]`, `{}`) leaves it to the next match; no decision denies.
     * A callback may return a promise, which is awaited.
     */
    async authorize(name: string, user: DevUser): Promise<ChannelDecision> {
        const normalised = normaliseChannelName(name);
        for (const registration of this.registrations) {
            const match = registration.regex.exec(normalised);
            if (match === null) continue;
            const params: Record<string, string> = Object.create(null) as Record<string, string>;
            registration.params.forEach((param, index) => {
                params[param] = match[index + 1] ?? "";
            });
            const result: unknown = await registration.callback(user, params);
            // [spec] laravel-mercure §2.3: `false` denies; only a truthy result grants.
            if (result === false) return { granted: false };
            if (isPhpTruthy(result)) return { granted: true, result };
        }
        return { granted: false };
    }
}

/**
 * Whether PHP would treat `value` as true: everything except `null`, `false`, `0`, `0.0`, `""`, `"0"` and the
 * empty array, as which an empty JavaScript array or plain object arrives in PHP. `undefined` (no return
 * value) is PHP's `null`.
 */
export function isPhpTruthy(value: unknown): boolean {
    if (value === null || value === undefined || value === false || value === 0 || value === "" || value === "0") {
        return false;
    }
    if (Array.isArray(value)) return value.length > 0;
    if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) return Object.keys(value).length > 0;
    return true;
}
