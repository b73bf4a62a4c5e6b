/**
 * The stable codes a {@link LaravelDevError} can carry.
 *
 * - `invalid_option`: a {@link BroadcastingAppOptions} value cannot be used (caught at construction).
 * - `invalid_input`: a broadcast request is malformed (no channel list, no event name).
 * - `access_denied`: Laravel's `AccessDeniedHttpException`; the auth endpoint answers 403.
 * - `broadcast_exception`: Laravel's `BroadcastException` (missing encryption key, cookie domain); answers 500.
 * - `hub_rejected`: the Mercure hub answered a publish with a non-2xx status.
 * - `hub_unreachable`: the Mercure hub could not be reached (or did not answer in time).
 * - `invalid_jwe`: a compact JWE could not be opened.
 */
export type LaravelDevErrorCode =
    | "invalid_option"
    | "invalid_input"
    | "access_denied"
    | "broadcast_exception"
    | "hub_rejected"
    | "hub_unreachable"
    | "invalid_jwe";

const STATUS_BY_CODE: Record<LaravelDevErrorCode, number> = {
    invalid_option: 500,
    invalid_input: 422,
    access_denied: 403,
    broadcast_exception: 500,
    hub_rejected: 502,
    hub_unreachable: 502,
    invalid_jwe: 500,
};

/**
 * The one error class of the Laravel-compatible dev app: a stable `code`, the HTTP status the app answers
 * with when the error escapes a request, and the `cause` kept.
 */
export class LaravelDevError extends Error {
    /** The stable, machine-readable reason for this error. */
    readonly code: LaravelDevErrorCode;

    /** The HTTP status the dev app answers with when this error ends a request. */
    readonly status: number;

    /** The status the Mercure hub answered with, for `hub_rejected`. */
    readonly hubStatus: number | undefined;

    /** Create an error with a stable code and a one-sentence message that says what to do. */
    constructor(
        code: LaravelDevErrorCode,
        message: string,
        details: { hubStatus?: number; cause?: unknown } = {},
    ) {
        super(message, details.cause === undefined ? undefined : { cause: details.cause });
        this.name = "LaravelDevError";
        this.code = code;
        this.status = STATUS_BY_CODE[code];
        this.hubStatus = details.hubStatus;
    }
}
