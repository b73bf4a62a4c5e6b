/*
 * The warning for an event no listener matched ("my listener never fires", issue 33): a lazily loaded chunk (see
 * `./load-unheard-event`), so that its text costs the first render nothing.
 */

/**
 * Warn that event `event` arrived on channel `channel` with no listener for it, with the likely fix; never the payload.
 * `namespace` is the channel's namespace as it prefixes event names (`App\Events`), or `""`: an event under it is
 * listened to by the rest of its name, its backslashes written as dots (`App\Events\Orders\OrderShipped` is
 * `listen("Orders.OrderShipped")`, as Echo's own formatter reads it); any other name takes a leading dot.
 */
export function warnUnheard(channel: string, event: string, namespace = ""): void {
    const prefix = namespace === "" ? null : namespace + "\\";
    const fix =
        prefix !== null && event.startsWith(prefix) && event.length > prefix.length
            ? `listen("${event.slice(prefix.length).replace(/\\/g, ".")}") hears it (the namespace option puts ${prefix} in front of a name without a leading dot)`
            : `a broadcastAs() name needs a dot: listen(".${event}"), or see the namespace option`;
    console.warn(`laravel-echo-mercure: no listener on "${channel}" for "${event}"; ${fix}`);
}
