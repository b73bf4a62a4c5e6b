import type { StreamMessage } from "../transport/platform";
import { DeliveryLedger } from "./delivery-ledger";
import { routeMessage, type Route } from "./router";
import { createSocketId } from "./socket-id";

/**
 * The receiving end of the main stream: this connection's socket id, the cursor, and the ledger that
 * makes an update reach each channel once even when two streams (a make-before-break overlap, a replay
 * after a reconnect) deliver it.
 */
export class Dispatcher {
    /** This connection's id for `toOthers()`; stable for the connector's life. */
    readonly socketId = createSocketId();

    /** The last event id seen, sent as `last_event_id` on every reopen; null before any or after a reset. */
    cursor: string | null = null;

    /**
     * Which channels each recent event id reached. With `resumeAcrossPages`, the resume capability wraps it in one that
     * also lists the last deliveries for the tab's next page, and claims the previous page's (see `page-resume.ts`).
     */
    ledger: Pick<DeliveryLedger, "claim" | "clear"> = new DeliveryLedger();

    /**
     * Take one main-stream message: move the cursor, route it (laravel-mercure §4.4), and keep only the
     * channels that have not received this event id yet. `carried(name)` says whether the channel is
     * joined and carried by the stream that delivered the message.
     */
    receive(event: StreamMessage, carried: (name: string) => boolean): { id: string | null; route: Route | null } {
        // [spec] §4.4 step 1: every message moves the cursor, even one that is then dropped.
        // Read once: the browser's getter builds a new string on every read.
        const lastEventId = event.lastEventId;
        const id = lastEventId !== "" ? lastEventId : null;
        if (id !== null) this.cursor = id;
        const route = routeMessage(event.data, this.socketId, carried);
        if (route === null || id === null) return { id, route };
        const channels = route.channels.filter((name) => this.ledger.claim(id, name));
        if (channels.length === route.channels.length) return { id, route };
        return { id, route: channels.length === 0 ? null : { ...route, channels } };
    }

    /**
     * Forget the cursor and the ledger (after `disconnect()`); the socket id stays.
     */
    reset(): void {
        this.cursor = null;
        this.ledger.clear();
    }
}
