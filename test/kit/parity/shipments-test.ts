/** What the component test needs of where it runs: the kit in memory, or the dev stack in Chromium. */
export interface Stage {
    /** Mount the component for user 1. */
    mount(): Promise<void>;
    /** The socket id of the component's Echo. */
    socketId(): Promise<string>;
    /** Broadcast as Laravel does (the kit's event naming), `socket` for `toOthers()`. */
    broadcast(channel: string, event: string, payload: unknown, socket?: string): Promise<void>;
    /** Wait until the component shows `text` (the kit: after `hub.flush()`, at once or never). */
    shows(text: string): Promise<void>;
    /** The component's text, its lines joined with " | ". */
    text(): Promise<string>;
}

/** The notification event Laravel broadcasts (laravel-mercure §4.6), verbatim. */
const NOTIFICATION = "\\Illuminate\\Notifications\\Events\\BroadcastNotificationCreated";

/**
 * The component test, written once: it listens, ignores its own broadcast (`toOthers()`), shows a shipment, then a
 * notification. Resolves with what the component shows at the end.
 */
export async function shipmentsComponentTest(stage: Stage): Promise<string> {
    await stage.mount();
    await stage.shows("Listening");
    await stage.broadcast("private-orders.42", "OrderShipped", { order: { id: 1 } }, await stage.socketId());
    await stage.broadcast("private-orders.42", "OrderShipped", { order: { id: 2 } });
    await stage.shows("Order #2 shipped");
    await stage.broadcast("private-App.Models.User.1", NOTIFICATION, { title: "Your invoice is ready", id: "n-1", type: "App\\Notifications\\InvoiceReady" });
    await stage.shows("Your invoice is ready");
    return stage.text();
}

/** What the component shows at the end of {@link shipmentsComponentTest}, wherever it ran. */
export const EXPECTED_TEXT = "Listening | Order #2 shipped | Your invoice is ready";
