/*
 * The warning for an event no listener matched ("my listener never fires", issue 33): a lazily loaded chunk (see
 * `./load-unheard-event`), so that its text costs the first render nothing.
 */

/** Warn that event `event` arrived on channel `channel` with no listener for it, with the likely fix; never the payload. */
export function warnUnheard(channel: string, event: string): void {
    console.warn(
        `laravel-echo-mercure: no listener on "${channel}" for "${event}"; a broadcastAs() name needs a dot: listen(".${event}"), or see the namespace option`,
    );
}
