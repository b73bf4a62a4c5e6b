/**
 * The cause a diagnosis names (each one a `MercureErrorCode`).
 *
 * - `invalid_token`: the hub refused the token (401 `invalid_token`): audience, issuer, key or expiry.
 * - `insufficient_scope`: the token lacks a grant (403).
 * - `cookie_missing`: no token reached the hub (401 without error): cookie name, domain, `SameSite`, prefix.
 * - `cors_refused`: the hub's CORS settings do not allow the page origin with credentials.
 * - `too_many_matchers`: the subscribe request carries more matchers than the hub accepts (400).
 * - `publish_origin_refused`: a whisper came from an origin missing from the hub's `publish_origins` (400).
 * - `hub_outdated`: a Mercure 0.x hub (it asks for `topic`, or challenges like 0.x and has no metadata).
 * - `hub_not_found`: the URL answers, but not as a hub (404, 405, 410).
 * - `hub_unreachable`: no answer at all, or no response headers in time.
 * - `hub_refused`: any other refusal (another 4xx, a 5xx).
 */
export type DiagnosisCode =
    | "invalid_token"
    | "insufficient_scope"
    | "cookie_missing"
    | "cors_refused"
    | "too_many_matchers"
    | "publish_origin_refused"
    | "hub_outdated"
    | "hub_not_found"
    | "hub_unreachable"
    | "hub_refused";

/**
 * The stable codes a {@link MercureError} can carry.
 *
 * - `invalid_option`: an option has a value the connector cannot use (for example a malformed `host`).
 * - `missing_platform`: `host`, `EventSource` or `fetch` is unavailable in this environment.
 * - `auth_denied`: the server answered the batch auth request and denied this channel.
 * - `auth_rejected`: the server rejected the whole batch auth request with a 4xx status.
 * - `auth_failed`: the batch auth request failed transiently (5xx, network error, unreadable body).
 * - `channel_limit`: the channel would exceed the 100 channels a connection may carry.
 * - `stream_error`: the hub's event stream reported an error or closed.
 * - `unsupported`: the feature is not available on this connector or channel.
 * - `decrypt_failed`: an event on an encrypted channel could not be decrypted with that channel's key and
 *   was dropped; the message is the same whatever the reason (kept as `cause`).
 * - `crypto_unavailable`: WebCrypto (`crypto.subtle`) is missing (a plain-http page other than localhost).
 * - `presence_snapshot_failed`: a presence channel's active-subscriptions snapshot could not be fetched or read.
 * - `callback_failed`: a user callback (`here()`, `joining()`, `leaving()`, a listener) threw.
 * - `whisper_disabled`: the server's `client_events` is off, so `whisper()` sent nothing.
 * - `whisper_failed`: the hub refused a whisper publish, or it could not be sent.
 * - `load_failed`: a part of the connector loaded on first use (presence, encrypted channels, whispers, tab sharing)
 *   could not be downloaded; the next use downloads it again.
 *
 * Diagnostics (a probe of the hub after a stream failed for good, or a whisper was refused) name the cause:
 *
 * - `invalid_token`: the hub refused the token (audience, issuer, key or expiry; the message says which).
 * - `insufficient_scope`: the token lacks the subscribe or publish grant the request needs.
 * - `cookie_missing`: no token reached the hub (cookie name, domain, `SameSite`, `__Secure-` prefix).
 * - `cors_refused`: the hub's CORS settings do not allow the page origin with credentials.
 * - `too_many_matchers`: the subscribe request carries more matchers than the hub accepts.
 * - `publish_origin_refused`: a whisper came from an origin missing from the hub's publish origins.
 * - `hub_outdated`: a Mercure 0.x hub: upgrade it (the connector stops retrying).
 * - `hub_not_found`: the hub URL answers, but not as a Mercure hub (404, 405, 410).
 * - `hub_unreachable`: the hub did not answer, or sent no response headers in time.
 * - `hub_refused`: the hub refused the request for another reason (another 4xx, a 5xx).
 * - `discovery_failed`: no hub could be found from the `discover` URL's `Link` header (or `discoverHub()`'s).
 */
export type MercureErrorCode =
    | "invalid_option"
    | "missing_platform"
    | "auth_denied"
    | "auth_rejected"
    | "auth_failed"
    | "channel_limit"
    | "stream_error"
    | "unsupported"
    | "decrypt_failed"
    | "crypto_unavailable"
    | "presence_snapshot_failed"
    | "callback_failed"
    | "whisper_disabled"
    | "whisper_failed"
    | "load_failed"
    | DiagnosisCode
    | "discovery_failed";

/**
 * The error for a feature a later version brings (presence, encryption, whispers): thrown, not swallowed.
 */
export function unsupported(feature: string, channel: string): MercureError {
    return new MercureError("unsupported", `${feature} on channel "${channel}" is not supported by this version of laravel-echo-mercure yet.`, { channel });
}

/**
 * The one error class of the package: a stable `code`, a one-sentence message, and the `cause` kept.
 */
export class MercureError extends Error {
    // `declare`d: the constructor assigns these (name last, keeping their order), so no field definitions are emitted.

    /** The stable, machine-readable reason for this error. */
    declare readonly code: MercureErrorCode;

    /** The full channel name this error concerns, when it concerns one. */
    declare readonly channel: string | undefined;

    /** The HTTP status involved, when an HTTP response caused this error. */
    declare readonly status: number | undefined;

    /**
     * Create an error with a stable code and a message that says what to do.
     */
    constructor(
        code: MercureErrorCode,
        message: string,
        details: { channel?: string; status?: number; cause?: unknown } = {},
    ) {
        super(message, details.cause === undefined ? undefined : { cause: details.cause });
        this.code = code;
        this.channel = details.channel;
        this.status = details.status;
        this.name = "MercureError";
    }
}

/**
 * A short description of a thrown value, for a message: an error's message, else the value as text.
 */
export function describeCause(cause: unknown): string {
    return cause instanceof Error ? cause.message : String(cause);
}
