import { whisperOnPublicChannel } from "../error-messages";
import { MercureError, type MercureErrorCode } from "../errors";

/**
 * What went wrong with a whisper on one channel: an HTTP status of the hub's answer to the POST, or
 * one of these reasons.
 *
 * - `public`: `whisper()` on a public channel, which has no whisper topic (code `unsupported`).
 * - `disabled`: the auth response's `client_events` is not `true` (code `whisper_disabled`).
 * - `closed`: the hub refused or closed the channel's whisper stream (code `stream_error`).
 * - `limit`: the channel gets no whisper stream because the others hold every connection an HTTP/1.1 hub
 *   leaves for them (code `stream_error`).
 * - `network`, `timeout`, `seal`: the POST could not be made or answered, or the whisper could not be
 *   encrypted (code `whisper_failed`, as for every status).
 * - `unrenewed`: the hub answered 401 and the re-authorization that should renew the cookie failed or
 *   timed out, so the whisper was not retried (code `whisper_failed`, status 401).
 */
export type WhisperFailure = number | "public" | "disabled" | "closed" | "limit" | "network" | "timeout" | "seal" | "unrenewed";

/**
 * The one place the whisper module builds its errors: a `MercureError` naming the channel, with one
 * sentence per failure that says what to fix.
 *
 * New codes: `whisper_disabled` (the server has `client_events` off) and `whisper_failed` (a publish
 * did not go through; `status` holds the hub's HTTP status when there was one).
 */
export function whisperError(channel: string, failure: WhisperFailure, cause?: unknown): MercureError {
    const on = `The whisper on channel "${channel}" `;
    let code: MercureErrorCode = "whisper_failed";
    let message: string;
    switch (failure) {
        case "public":
            return whisperOnPublicChannel(channel);
        case "disabled":
            code = "whisper_disabled";
            // [spec] laravel-mercure §7.1: the error names the server option.
            message = `Whispers on channel "${channel}" are off: set client_events to true in config/broadcasting.php.`;
            break;
        case "closed":
            code = "stream_error";
            message = `The hub closed the whisper stream of channel "${channel}"; reconnecting with backoff.`;
            break;
        case "limit":
            code = "stream_error";
            message = `Channel "${channel}" receives no whispers until another channel stops listening for them: the page holds the most whisper streams an HTTP/1.1 hub leaves room for (browsers open 6 connections per host); serve the hub over HTTPS (HTTP/2) to lift the limit.`;
            break;
        case "network":
            message = on + "could not reach the hub (network or CORS error): check that the hub is up and that its cors_origins list this page.";
            break;
        case "timeout":
            message = on + "got no answer from the hub in time.";
            break;
        case "seal":
            message = on + "could not be encrypted and was not sent.";
            break;
        case 400: {
            // [spec] mercure-hub §3: a cookie-authenticated POST from an origin not in publish_origins gets 400.
            const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
            message = on + `got HTTP 400: the page origin${typeof origin === "string" ? ` (${origin})` : ""} is probably missing from the hub's publish_origins.`;
            break;
        }
        case "unrenewed":
            // [spec] laravel-mercure §7.2: no fresh cookie, no retry; the auth error on the channel says why.
            message = on + "got HTTP 401 (the hub refused the cookie) and was not sent again: re-authorizing the channels did not succeed in time, and the auth error on this channel says why.";
            break;
        case 401:
            // [spec] laravel-mercure §10 "Same key": the hub checks the subscriber cookie with its publisher key.
            message = on + "got HTTP 401 after re-authorizing: the hub must verify cookies with Laravel's key (one secret for publisher and subscriber).";
            break;
        case 403:
            message = on + "got HTTP 403 (insufficient scope): check client_events in config/broadcasting.php and the channel's authorization.";
            break;
        default:
            // A redirect is not followed with the hub token (auth/hub-token.ts): a browser shows it as status 0.
            message = on + (failure < 100 || (failure > 299 && failure < 400) ? "was answered with a redirect, not followed: set `host` to the hub's own URL." : `got HTTP ${failure}; see the hub's log.`);
    }
    const status = typeof failure === "number" ? failure : failure === "unrenewed" ? 401 : undefined;
    return new MercureError(code, message, { channel, status, cause });
}
