import { MercureError } from "./errors";

/*
 * The errors the connector reports on channels' `error()` callbacks, one factory each: one sentence that
 * names the channel, endpoint or status involved and says what happens next or what to do.
 */

/**
 * The server denied one channel of the batch (laravel-mercure §2.4). Laravel denies every guarded channel
 * when nobody is logged in, so the message names both causes.
 */
export function authDenied(name: string): MercureError {
    return new MercureError(
        "auth_denied",
        `The broadcasting auth request denied channel "${name}": check that a user is logged in and that its callback in routes/channels.php returns true.`,
        { channel: name },
    );
}

/** What the server said in its JSON error body (`message`, one line, bounded: see auth-client.ts), quoted as data. */
function serverSaid(message: string | undefined): string {
    return message === undefined ? "" : `, the server said ${JSON.stringify(message)}`;
}

/**
 * What a refused batch answer was and its usual cause: `detail` (an answer that was not Laravel's JSON, see
 * auth-client.ts), a 419 (CSRF), a 401 (no user), or nothing to add; with the server's `message`, when it sent one.
 */
function rejection(status: number, detail: string | undefined, message?: string): string {
    // A browser shows a redirect it was told not to follow as status 0: no status to name.
    return ` (${status ? `HTTP ${status}` : ""}${serverSaid(message)}${
        detail !== undefined
            ? `${status ? ": " : ""}${detail}; is a user logged in, or does middleware redirect?`
            : status === 419
              ? ": the CSRF token did not match the session, even after reading it again: reload the page, or pass `csrfToken` as a function"
              : status === 401
                ? ": no user is logged in"
                : ""
    })`;
}

/** An all-or-nothing server rejected a batch with newly joined channels; `name` was one of them (§2.8). */
export function authRejectedNewcomer(name: string, status: number, newcomers: readonly string[], detail?: string, message?: string): MercureError {
    return new MercureError(
        "auth_rejected",
        `The broadcasting auth request was denied${rejection(status, detail, message)} after joining [${newcomers.join(", ")}]; channel "${name}" was left.`,
        { channel: name, status: status || undefined },
    );
}

/** The server rejected the batch of channels it had granted before (a logout, an expired session). */
export function authRejected(name: string, status: number, endpoint: string, detail?: string, message?: string): MercureError {
    return new MercureError(
        "auth_rejected",
        `The broadcasting auth request to "${endpoint}" was rejected${rejection(status, detail, message)} for channel "${name}"; retrying with backoff.`,
        { channel: name, status: status || undefined },
    );
}

/** The auth request failed transiently: 5xx (with the server's `message`, when its JSON body had one), network error or timeout. */
export function authFailed(name: string, endpoint: string, status: number | null, cause: unknown, message?: string): MercureError {
    const reason = status === null ? describe(cause) : `HTTP ${status}${serverSaid(message)}`;
    return new MercureError("auth_failed", `The broadcasting auth request to "${endpoint}" failed (${reason}); retrying with backoff.`, {
        channel: name,
        status: status ?? undefined,
        cause,
    });
}

/** The channel would exceed what one connection may carry. */
export function channelLimit(name: string, max: number): MercureError {
    return new MercureError(
        "channel_limit",
        `At most ${max} channels fit one connection; channel "${name}" was not joined: leave channels you no longer need.`,
        { channel: name },
    );
}

/** Why a hub stream failed, as {@link streamError} words it. */
export type StreamFailure = "closed" | "interrupted" | "replacement_refused";

/**
 * The hub stream failed; `cause` is the EventSource's error event, whose `code` or `status` is the HTTP status when the
 * implementation reports one (the `eventsource` package and `event-source-polyfill` do; browsers never do). Why it was
 * refused is the diagnosis's to say (`connector/stream-diagnosis.ts`), in a second error that follows this one.
 */
export function streamError(name: string, failure: StreamFailure, cause: Event): MercureError {
    const status = errorStatus(cause);
    const message =
        failure === "closed"
            ? `The hub ${status === undefined ? "refused or closed the event stream" : `refused the event stream with HTTP ${status}`}; ${
                  // [spec] A 400 is never retried (stream-failure.ts): the request must change first.
                  status === 400 ? "not retrying: fix the cause, then call connect()" : "re-authorizing with backoff"
              }.`
            : failure === "interrupted"
              ? "The hub event stream was interrupted; the EventSource reconnects by itself."
              : "The replacement hub stream was refused; retrying with backoff.";
    return new MercureError("stream_error", `${message} (channel "${name}")`, { channel: name, status, cause });
}

/** `whisper()` on a public channel, which has no whisper topic (laravel-mercure §7.1). */
export function whisperOnPublicChannel(name: string): MercureError {
    return new MercureError("unsupported", `Public channel "${name}" cannot whisper: use a private, presence or encrypted private channel.`, {
        channel: name,
    });
}

/**
 * The code of a part loaded on first use (`part`: "presence", "encrypted channel", "whisper", "tab sharing") could not be
 * downloaded for channel `name` (offline, or a deploy replaced the page's files); `next`: what happens now.
 */
export function loadFailed(name: string, part: string, cause: unknown, next: string): MercureError {
    return new MercureError(
        "load_failed",
        `The ${part} code for channel "${name}" could not be downloaded (${describe(cause)}): ${next}; check the network, or reload the page after a deploy.`,
        { channel: name, cause },
    );
}

/**
 * A stream did not open in time even after the streams it replaced were closed: the browser is most likely
 * out of HTTP/1.1 connections to the hub (other tabs hold them), which nothing on this page can free.
 */
export function streamStalled(name: string, seconds: number): MercureError {
    return new MercureError(
        "stream_error",
        `The hub stream of channel "${name}" did not open within ${seconds} s: the browser is likely out of connections to the hub (6 over HTTP/1.1, for every tab); retrying with backoff. Serve the hub over HTTP/2 to lift the limit.`,
        { channel: name },
    );
}

/** Something threw where nothing should (a broken EventSource polyfill, a fetch wrapper that throws). */
export function unexpectedFailure(name: string, cause: unknown): MercureError {
    return new MercureError("stream_error", `Connecting channel "${name}" failed unexpectedly (${describe(cause)}); retrying with backoff.`, {
        channel: name,
        cause,
    });
}

/** The host, EventSource or fetch could not be resolved; the same error, addressed to channel `name`. */
export function platformFailure(name: string, cause: unknown): MercureError {
    const failure =
        cause instanceof MercureError ? cause : new MercureError("invalid_option", "The connector options could not be resolved.", { cause });
    return new MercureError(failure.code, failure.message, { channel: name, cause: failure });
}

/** A short description of a thrown value. */
function describe(cause: unknown): string {
    return cause instanceof Error ? cause.message : "network error";
}

/** The HTTP status an `EventSource` error event carries: `status` (the polyfill's) or `code` (the `eventsource` package's). */
export function errorStatus(event: Event): number | undefined {
    const { status, code } = event as { status?: unknown; code?: unknown };
    const value = typeof status === "number" && status !== 0 ? status : code;
    return typeof value === "number" && Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
}
