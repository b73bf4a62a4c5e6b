import type { FetchLike, FetchResponseLike } from "../../src/transport/platform";
import { PREFIX } from "./fake-auth-server";

/** One snapshot request the fake subscription API holds until the test answers it. */
export interface HeldSnapshot {
    url: string;
    init: RequestInit;
}

/** One member of a snapshot or a subscription event: the connection id and the user. */
export interface FakeMember {
    subscriber: string;
    user: { id: number; name: string };
}

/** The path every snapshot request starts with. */
const SNAPSHOT_PATH = "/.well-known/mercure/subscriptions/";

/**
 * A fake hub subscription API (mercure-hub §4.2) in front of another fetch: snapshot GETs wait, in
 * order, until the test answers them; every other request goes to `fallback`.
 */
export class FakeSnapshots {
    /** Every snapshot request, answered or not, in order. */
    readonly requests: HeldSnapshot[] = [];

    /** The answers of the requests not answered yet, oldest first. */
    private readonly pending: Array<(response: FetchResponseLike) => void> = [];

    /** Build the fetch to give the connector; `fallback` is looked up at each call. */
    fetch(fallback: () => FetchLike): FetchLike {
        return (url, init) => {
            if (!new URL(url, "https://app.test/").pathname.startsWith(SNAPSHOT_PATH)) return fallback()(url, init);
            this.requests.push({ url, init });
            return new Promise((resolve) => this.pending.push(resolve));
        };
    }

    /** How many snapshot requests wait for an answer. */
    waiting(): number {
        return this.pending.length;
    }

    /** Answer the oldest waiting request: 200 with these members on `topic`, or a status and raw body. */
    answer(topic: string, members: FakeMember[]): void;
    answer(status: number, body: string): void;
    answer(first: string | number, second: FakeMember[] | string): void {
        const resolve = this.pending.shift();
        if (resolve === undefined) throw new Error("no snapshot request is waiting");
        const status = typeof first === "number" ? first : 200;
        const text =
            typeof second === "string"
                ? second
                : JSON.stringify({ id: "x", type: "subscriptions", subscriptions: second.map((member) => subscription(first as string, member, true)) }, null, 4);
        resolve({ status, text: async () => text });
    }
}

/** The topic of a presence channel with the default prefix. */
export function presenceTopic(name: string): string {
    return PREFIX + "channel/" + encodeURIComponent(name);
}

/** A subscription document as the hub writes it (§5.2): pretty-printed JSON, several `data:` lines. */
export function subscriptionEvent(topic: string, member: FakeMember, active: boolean): string {
    return JSON.stringify(subscription(topic, member, active), null, 4);
}

/** The document of one subscription. */
function subscription(topic: string, { subscriber, user }: FakeMember, active: boolean): Record<string, unknown> {
    return {
        id: "/.well-known/mercure/subscriptions/exact/" + encodeURIComponent(topic) + "/" + encodeURIComponent(subscriber),
        type: "subscription",
        subscriber,
        match: topic,
        match_type: "exact",
        active,
        payload: { user_id: String(user.id), user_info: user },
    };
}
