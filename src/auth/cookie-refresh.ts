import { setClampedTimeout } from "../timers";

/**
 * The hub timings that decide when it ends a subscriber's stream, in milliseconds (the reference hub's
 * `dispatch_timeout` and `write_timeout`).
 */
export interface HubTimeouts {
    /** Subtracted from the stream's deadline. Default 5000. */
    dispatch: number;
    /** The longest a stream lives whatever its token says. Default 600000. */
    write: number;
}

/** The reference hub's defaults. */
export const DEFAULT_HUB_TIMEOUTS: Readonly<HubTimeouts> = { dispatch: 5_000, write: 600_000 };

/**
 * The earliest moment, in milliseconds after the auth that set its cookie, at which the reference hub may
 * end a stream: `null` for `expiresIn` means the server gave no lifetime, and only the write timeout counts.
 */
export function earliestHubClose(expiresIn: number | null, hub: HubTimeouts): number {
    // [spec] mercure-hub §1.5: the hub ends the stream at U(0.8, 1) × min(remaining token life,
    // write_timeout) minus dispatch_timeout. A stream opens after its auth, so counting from the auth is
    // never late.
    const life = expiresIn === null ? hub.write : Math.min(expiresIn * 1_000, hub.write);
    return 0.8 * life - hub.dispatch;
}

/**
 * The shortest time between an auth and the renewal that follows it, on every path (the timer, the wall-clock check,
 * a stream that opens after the credential reads as expired), so that a tiny or misread lifetime (a tiny `expires_in`,
 * a token whose `exp` is behind the page's clock) cannot make the connector renew in a loop (issue 29).
 */
export const MIN_RENEWAL_DELAY = 5_000;

/**
 * When to renew the cookie and replace the stream, in milliseconds after the auth: 10 % (at least 1 s)
 * before {@link earliestHubClose}, leaving time for the auth request and the open; never sooner than
 * {@link MIN_RENEWAL_DELAY}; `Infinity` when the hub never ends the stream.
 */
export function renewalDelay(expiresIn: number | null, hub: HubTimeouts): number {
    const minDelay = MIN_RENEWAL_DELAY;
    /** The smallest head start a renewal takes on the hub's earliest close, for the auth request and the open. */
    const minMargin = 1_000;
    const earliest = earliestHubClose(expiresIn, hub);
    // `write` Infinity without a lifetime: no renewal (Infinity − Infinity would be NaN, a timer of 0 ms: a loop).
    if (earliest === Infinity) return Infinity;
    return Math.max(minDelay, Math.floor(earliest - Math.max(0.1 * earliest, minMargin)));
}

/**
 * The renewal of the hub cookie and of the stream that carries it, scheduled from the `expires_in` of
 * the last auth response and the hub's timings, and checked against the wall clock.
 *
 * The cookie is httpOnly, so `expires_in` is all the client knows of it. A timer can run late (a machine
 * that slept, a throttled background tab), so {@link CookieRefreshTimer.check} compares the wall clock
 * with the deadline whenever the connector has reason to (a native reconnect, `online`, the page shown
 * again). A renewal that runs after the cookie expired is reported as `expired`: the hub has closed the
 * old stream, or downgraded it to anonymous, by then.
 */
export class CookieRefreshTimer {
    /** The pending renewal. */
    #timer: ReturnType<typeof setTimeout> | undefined;

    /** The callback of the pending renewal, or null when none is armed. */
    #renew: ((expired: boolean) => void) | null = null;

    /** Wall-clock time (ms) by which the pending renewal must run, or null when none is armed. */
    #dueAt: number | null = null;

    /** The last successful auth: when it was requested and the cookie's lifetime, or null. */
    #cookie: { requestedAt: number; expiresIn: number | null } | null = null;

    /**
     * Record a successful auth requested at `requestedAt` (wall clock, ms): the cookie it set lives
     * `expiresIn` seconds (`null`: unknown). Leaves a pending renewal as it is.
     */
    authorized(requestedAt: number, expiresIn: number | null): void {
        this.#cookie = { requestedAt, expiresIn };
    }

    /** When the last successful auth was requested (wall clock, ms); null when none since the last reset. */
    authorizedAt(): number | null {
        return this.#cookie?.requestedAt ?? null;
    }

    /** When the cookie of the last successful auth is due for renewal (wall clock, ms), before the hub may end a stream opened on it; Infinity when none. */
    renewalAt(hub: HubTimeouts): number {
        const cookie = this.#cookie;
        return cookie === null ? Infinity : cookie.requestedAt + renewalDelay(cookie.expiresIn, hub);
    }

    /** When the cookie of the last successful auth expires (wall clock, ms); null when unknown. */
    expiresAt(): number | null {
        const cookie = this.#cookie;
        return cookie === null || cookie.expiresIn === null ? null : cookie.requestedAt + cookie.expiresIn * 1_000;
    }

    /**
     * A stream was opened with the cookie of the last auth: call `renew` before the hub may end it.
     * Replaces any earlier schedule.
     */
    arm(hub: HubTimeouts, renew: (expired: boolean) => void): void {
        this.cancel();
        const cookie = this.#cookie;
        if (cookie === null) return;
        this.#renew = renew;
        this.#dueAt = cookie.requestedAt + renewalDelay(cookie.expiresIn, hub);
        this.#timer = setClampedTimeout(() => this.#fire(), this.#dueAt - Date.now());
    }

    /**
     * Run the pending renewal now if the wall clock says it is due or the cookie expired (the timer ran
     * late or not yet); returns whether it ran.
     */
    check(): boolean {
        if (this.#dueAt === null || (Date.now() < this.#dueAt && !this.isExpired())) return false;
        this.#fire();
        return true;
    }

    /**
     * Whether the cookie of the last auth has expired by the wall clock, counted only from {@link MIN_RENEWAL_DELAY}
     * after its auth: a lifetime shorter than that cannot be renewed sooner (the renewal is armed at the floor), and
     * reading it as expired at once would renew at every open, as fast as the hub answers (issue 29).
     */
    isExpired(): boolean {
        const cookie = this.#cookie;
        if (cookie === null || cookie.expiresIn === null) return false;
        const age = Date.now() - cookie.requestedAt;
        return age >= MIN_RENEWAL_DELAY && age >= cookie.expiresIn * 1_000;
    }

    /**
     * Drop the pending renewal; what is known of the cookie stays.
     */
    cancel(): void {
        clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#renew = null;
        this.#dueAt = null;
    }

    /**
     * Drop the pending renewal and forget the cookie (no channel left, or `disconnect()`).
     */
    reset(): void {
        this.cancel();
        this.#cookie = null;
    }

    /** Run the pending renewal once. */
    #fire(): void {
        const renew = this.#renew;
        this.cancel();
        renew?.(this.isExpired());
    }
}
