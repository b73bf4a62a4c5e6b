/** The reference hub's default `dispatch_timeout`: streams end this long before their write deadline. */
export const DEFAULT_DISPATCH_TIMEOUT_MS = 5_000;

/** The reference hub's default `write_timeout`: no stream outlives 80–100 % of it, whatever its token. */
export const DEFAULT_WRITE_TIMEOUT_MS = 600_000;

/** What decides how long one event stream may stay open. */
export interface StreamLifetimePolicy {
    /** Cap on every stream in ms (randomised to 80–100 %); 0 disables the cap. */
    readonly writeTimeout: number;
    /** How long before its write deadline a stream ends, in ms, when that is still in the future; 0 for none. */
    readonly dispatchTimeout: number;
    /** Returns a value in [0, 1] placing each deadline within 80–100 % of its duration (values outside are clamped). */
    readonly lifetimeFraction: () => number;
}

/**
 * When the reference hub ends a stream opened at `now` (ms since the epoch) whose token expires at
 * `expiresAt` (`null` without a token or `exp`); `null` when nothing ends it.
 *
 * The write deadline is `now` plus 80–100 % of the write timeout, replaced by `now` plus 80–100 % of the
 * token's remaining life when the token expires before it. The stream ends one dispatch timeout before
 * that deadline, or at the deadline itself when that moment has already passed.
 */
export function streamClosesAt(now: number, expiresAt: number | null, policy: StreamLifetimePolicy): number | null {
    // [spec] mercure-hub §1.5 (Go `getWriteDeadline`): first the write timeout, each draw randomised.
    let deadline: number | null = policy.writeTimeout > 0 ? now + randomised(policy.writeTimeout, policy) : null;
    // [spec] mercure-hub §1.5: a token expiring sooner replaces it, randomised over its remaining life.
    if (expiresAt !== null && (deadline === null || expiresAt < deadline)) {
        deadline = now + randomised(Math.max(0, expiresAt - now), policy);
    }
    if (deadline === null) return null;
    // [spec] mercure-hub §1.5 (Go `newResponseController`): one dispatch timeout early, unless that is past.
    const early = deadline - policy.dispatchTimeout;
    return early > now ? early : deadline;
}

/** 80–100 % of `duration`, placed by the policy's fraction, in whole milliseconds. */
function randomised(duration: number, policy: StreamLifetimePolicy): number {
    const drawn = policy.lifetimeFraction();
    const fraction = Number.isNaN(drawn) ? 0 : Math.min(1, Math.max(0, drawn));
    return Math.floor(duration * (0.8 + 0.2 * fraction));
}
