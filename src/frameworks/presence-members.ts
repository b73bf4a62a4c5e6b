/**
 * A presence channel as far as the members watch needs it: Echo's `here`, `joining` and `leaving`.
 */
export interface PresenceChannelLike<TMember> {
    /** Called with every member once the channel is seeded (at once when it already is). */
    here(callback: (members: TMember[]) => void): unknown;
    /** Called with a user who joined. */
    joining(callback: (member: TMember) => void): unknown;
    /** Called with a user who left. */
    leaving(callback: (member: TMember) => void): unknown;
}

/** Hears the whole member list after each change. */
export type MembersListener<TMember> = (members: readonly TMember[]) => void;

/**
 * The identity of a member: its `id` when it is an object with a string or number `id` (what Laravel's channel
 * callbacks return: the user's fields), else its JSON. Two entries with one identity are one user (two tabs).
 */
export function memberKey(member: unknown): string {
    if (typeof member === "object" && member !== null) {
        const id = (member as { id?: unknown }).id;
        if (typeof id === "string" || typeof id === "number") return "id:" + String(id);
    }
    return "json:" + JSON.stringify(member ?? null);
}

/**
 * The members of one presence channel object, fed by its callbacks (registered once: Echo has no way to remove
 * them) and handed to every current listener as a new array after each change, so that React's and Vue's
 * state sees a new value. Bound: one watch per channel object, dropped with it (weakly held).
 */
class MembersWatch<TMember> {
    /** The members in arrival order, one per {@link memberKey}; null before `here()`. */
    private members: TMember[] | null = null;

    /** The components watching now. */
    readonly listeners = new Set<MembersListener<TMember>>();

    /** Register the channel callbacks that keep the list. */
    constructor(channel: PresenceChannelLike<TMember>) {
        channel.here((members) => {
            const byKey = new Map<string, TMember>();
            for (const member of members) byKey.set(memberKey(member), member);
            this.update([...byKey.values()]);
        });
        channel.joining((member) => {
            const key = memberKey(member);
            const current = this.members ?? [];
            const index = current.findIndex((known) => memberKey(known) === key);
            // A user already listed (another tab) is replaced by the newest info, not listed twice.
            this.update(index === -1 ? [...current, member] : current.map((known, at) => (at === index ? member : known)));
        });
        channel.leaving((member) => {
            const key = memberKey(member);
            this.update((this.members ?? []).filter((known) => memberKey(known) !== key));
        });
    }

    /** The current list; empty before the channel is seeded. */
    current(): readonly TMember[] {
        return this.members ?? [];
    }

    /** Store `members` and tell every listener. */
    private update(members: TMember[]): void {
        this.members = members;
        for (const listener of [...this.listeners]) listener(members);
    }
}

/** The watch of each channel object. */
const watches = new WeakMap<object, MembersWatch<unknown>>();

/**
 * Hear the members of `channel` (deduplicated per user) after each `here`, `joining` and `leaving`, until the
 * returned `stop()` is called; `initial` is the current list (empty before the channel is seeded).
 */
export function watchPresenceMembers<TMember>(channel: PresenceChannelLike<TMember>, listener: MembersListener<TMember>): { initial: readonly TMember[]; stop: () => void } {
    let watch = watches.get(channel) as MembersWatch<TMember> | undefined;
    if (watch === undefined) {
        watch = new MembersWatch<TMember>(channel);
        watches.set(channel, watch as MembersWatch<unknown>);
    }
    const owner = watch;
    owner.listeners.add(listener);
    return { initial: owner.current(), stop: () => owner.listeners.delete(listener) };
}
