/** The shortest delay before a proactive cookie refresh. */
export const MIN_REFRESH_DELAY_MS = 5_000;

/**
 * Schedules the proactive renewal of the hub cookie, from the `expires_in` of the last auth response.
 *
 * The cookie is httpOnly, so `expires_in` is all the client knows of it. Renewing at 80 % of its lifetime
 * (at least 5 s) leaves time to reopen make-before-break before the hub closes streams for the expired
 * token. A timer that fires after the cookie already expired (the machine slept) is reported as `late`:
 * the hub has closed the old stream, or downgraded it to anonymous, by then.
 */
export class CookieRefreshTimer {
    /** The pending refresh. */
    private timer: ReturnType<typeof setTimeout> | null = null;

    /**
     * Schedule `refresh` for a cookie that lives `expiresIn` seconds from now; `null` schedules nothing
     * (the server gave no usable lifetime). Replaces any earlier schedule.
     */
    arm(expiresIn: number | null, refresh: (late: boolean) => void): void {
        this.cancel();
        if (expiresIn === null) return;
        const authorizedAt = Date.now();
        this.timer = setTimeout(
            () => {
                this.timer = null;
                refresh(Date.now() - authorizedAt >= expiresIn * 1000);
            },
            // [spec] laravel-mercure §8: 80 % of expires_in, at least 5 s.
            Math.max(expiresIn * 800, MIN_REFRESH_DELAY_MS),
        );
    }

    /**
     * Drop the pending refresh.
     */
    cancel(): void {
        if (this.timer !== null) clearTimeout(this.timer);
        this.timer = null;
    }
}
