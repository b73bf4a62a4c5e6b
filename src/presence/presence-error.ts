import { MercureError } from "../errors";

/**
 * The error code presence adds to {@link MercureError}: `presence_snapshot_failed`, the active-subscriptions
 * snapshot of a presence channel could not be fetched or read; the channel stays unseeded (no `here()`) and
 * is retried on the next refresh. (A throwing `here()`, `joining()` or `leaving()` callback is reported by
 * the channel itself, as `callback_failed`, like any other callback.)
 */
export type PresenceErrorCode = "presence_snapshot_failed";

/**
 * Create a presence {@link MercureError} for `channel`; the one place presence builds its errors.
 */
export function presenceError(
    code: PresenceErrorCode,
    channel: string,
    message: string,
    details: { status?: number; cause?: unknown } = {},
): MercureError {
    return new MercureError(code, message, { channel, ...details });
}
