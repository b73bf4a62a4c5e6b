import { errorStatus } from "../error-messages";

/** How the stream switch classed a stream error (see `StreamSwitch.failed`), "ignored" aside. */
export type StreamFailure = "replacement_refused" | "interrupted" | "closed";

/** What the connector does about one stream error. */
export interface FailurePlan {
    /** Authorize again and open a new stream (after backoff, or at once after a shared grant was refused). */
    readonly retry: boolean;
    /** The hub refused a native reconnect of a stream that had opened: the retry's auth must reach Laravel for a new cookie. */
    readonly reconnectRefused: boolean;
    /** Probe the hub to name the cause. */
    readonly diagnose: boolean;
    /** A 400: a malformed request (e.g. a bad `hubToken`) that cannot heal by retrying; diagnosed, then `failed`. */
    readonly fatal: boolean;
}

/**
 * Plan the answer to a stream error: `failure` as the stream switch classed it, `event` the error event, `opened`
 * whether the stream ever opened, `failedToConnect` whether it failed to connect (before it opened, or its native
 * reconnect failed too), `replacementPending` whether a replacement stream is still opening.
 */
export function planStreamFailure(failure: StreamFailure, event: Event, opened: boolean, failedToConnect: boolean, replacementPending: boolean): FailurePlan {
    // [spec] laravel-mercure §8: a terminal failure (any non-2xx, e.g. 401 for an expired cookie) needs a new auth and a
    // new stream, unless a pending replacement takes over; a transient one retries itself.
    const fatal = failure === "closed" && errorStatus(event) === 400;
    // [spec] mercure-hub §1.5: a native reconnect presents the cookie the stream opened with, which may have expired
    // since: the hub refuses it with 401 even for public topics on an anonymous hub. The retry's new cookie cures that,
    // so this refusal is not diagnosed; the retry's, if refused too, is (issue 27).
    const reconnectRefused = failure === "closed" && !fatal && opened;
    const retry = !fatal && (failure === "replacement_refused" || (failure === "closed" && !replacementPending));
    // Issue 30: a stream that failed to connect is diagnosed as well, so a hub that is down is named; a first
    // interruption reconnects by itself.
    const diagnose = (failure === "closed" && !reconnectRefused) || (failure === "interrupted" && failedToConnect);
    return { retry, reconnectRefused, diagnose, fatal };
}
