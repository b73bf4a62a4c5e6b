import type { ServerResponse } from "node:http";
import { canSubscribeToAny } from "./grants";
import type { Grant } from "./grants";
import { matchesAny } from "./matchers";
import type { Matcher } from "./matchers";
import { KEEP_ALIVE, serializeEvent } from "./sse";
import { generateEventId } from "./update";
import type { Update } from "./update";

/** One subscription: one matcher parameter of a connection. */
export interface Subscription {
    /** The compiled matcher. */
    readonly matcher: Matcher;
    /** The subscription's payload (from the token), when one applies. */
    readonly payload?: { readonly value: unknown };
}

/** Longest timer Node accepts; longer delays are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** An open event stream: its subscriptions, its token's grants, keep-alive and lifetime timers. */
export class Subscriber {
    /** Hub-assigned per-connection id shared by all its subscriptions. */
    readonly id = generateEventId();

    /** Whether the stream is still writable; flips once, on close. */
    private open = true;

    /** Keep-alive timer, re-armed by every write. */
    private readonly heartbeat: NodeJS.Timeout;

    /** Timer ending the stream at the end of its lifetime, when it has one. */
    private expiry: NodeJS.Timeout | undefined;

    /**
     * Start keep-alives and the lifetime timer (`closesAt`, ms since the epoch, `null` for none); `onExpire`
     * runs when that timer ends the stream, `onClose` once when the stream ends for any reason.
     */
    constructor(
        private readonly res: ServerResponse,
        /** The connection's subscriptions, in query order. */
        readonly subscriptions: readonly Subscription[],
        /** Grants of the token presented, or `null` for an anonymous subscriber. */
        private readonly grants: readonly Grant[] | null,
        options: {
            heartbeatMs: number;
            closesAt: number | null;
            onExpire: () => void;
            onClose: (subscriber: Subscriber) => void;
        },
    ) {
        // [spec] §1.3: keep-alive comments when idle.
        this.heartbeat = setInterval(() => this.write(KEEP_ALIVE), options.heartbeatMs);
        this.heartbeat.unref();
        if (res.destroyed) {
            // The client left before the stream was set up: no timers, never registered.
            this.open = false;
            this.clearTimers();
            return;
        }
        if (options.closesAt !== null) this.armExpiry(options.closesAt, options.onExpire);
        res.once("close", () => {
            if (!this.open) return;
            this.open = false;
            this.clearTimers();
            options.onClose(this);
        });
    }

    /** Whether the stream is still open. */
    get isOpen(): boolean {
        return this.open;
    }

    /** Whether this subscriber should get `update`: a matcher hits, and a private update is granted. */
    accepts(update: Update): boolean {
        if (!matchesAny(this.subscriptions.map((s) => s.matcher), update.topics)) return false;
        // [spec] §2.4: private updates need a subscribe grant on at least one topic; matchers never widen that.
        return !update.private || (this.grants !== null && canSubscribeToAny(this.grants, update.topics));
    }

    /** Write `update` as an SSE event if the stream is open. */
    send(update: Update): void {
        this.write(serializeEvent(update));
    }

    /** Write raw stream text; a no-op on a closed stream. */
    write(chunk: string): void {
        if (!this.open || this.res.destroyed || this.res.writableEnded) return;
        this.res.write(chunk);
        this.heartbeat.refresh();
    }

    /** Hold writes in the response until {@link Subscriber.uncork} (one `write` for many events). */
    cork(): void {
        if (this.open) this.res.cork();
    }

    /** Send what {@link Subscriber.cork} held. */
    uncork(): void {
        this.res.uncork();
    }

    /** End the stream cleanly (the client sees a normal end of body). */
    end(): void {
        if (!this.res.writableEnded) this.res.end();
    }

    /** Drop the connection abruptly, as a network failure would. */
    destroy(): void {
        this.res.socket?.destroy();
        this.res.destroy();
    }

    private armExpiry(closesAt: number, onExpire: () => void): void {
        const remaining = closesAt - Date.now();
        if (remaining <= 0) {
            // [spec] §1.5: end the stream cleanly at the end of its lifetime (never after the token's exp).
            if (this.open) onExpire();
            this.end();
            return;
        }
        this.expiry = setTimeout(() => this.armExpiry(closesAt, onExpire), Math.min(remaining, MAX_TIMER_MS));
        this.expiry.unref();
    }

    private clearTimers(): void {
        clearInterval(this.heartbeat);
        if (this.expiry !== undefined) clearTimeout(this.expiry);
    }
}
