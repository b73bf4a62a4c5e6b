import type { AuthResult } from "./auth-client";
import type { AuthResponse } from "./auth-response";

/**
 * What one batch auth answer means for the channels in it:
 * - `granted`: a 2xx; the `denied` channels are to be left with an error, the `granted` ones (still
 *   joined) carried;
 * - `newcomers_rejected`: a 4xx for a batch that added channels: an older all-or-nothing server denied
 *   one of the `newcomers`, which are to be left while the others are authorized again;
 * - `rejected`: a 4xx for the channels granted before (a logout, an expired session): report, back off;
 * - `failed`: transient (5xx, network error, timeout): report, back off;
 * - `aborted`: `disconnect()` cancelled the request.
 */
export type BatchOutcome =
    | { kind: "granted"; response: AuthResponse; denied: string[]; granted: string[] }
    | { kind: "newcomers_rejected"; status: number; newcomers: string[]; detail?: string; message?: string | undefined }
    | { kind: "rejected"; status: number; detail?: string; message?: string | undefined }
    | { kind: "failed"; status: number | null; cause: unknown; message?: string | undefined }
    | { kind: "aborted" };

/**
 * Interpret the answer to a batch of `names`: `previous` is what the last successful auth granted (null
 * before any), `joined(name)` whether the channel is still joined now that the answer arrived.
 */
export function interpretBatch(
    names: readonly string[],
    result: AuthResult,
    previous: ReadonlySet<string> | null,
    joined: (name: string) => boolean,
): BatchOutcome {
    switch (result.kind) {
        case "ok": {
            // [spec] laravel-mercure §2.4: per-channel denial, the others keep working.
            const denied = names.filter((name) => result.response.channels.get(name)?.denied === true);
            const granted = names.filter((name) => !denied.includes(name) && joined(name));
            return { kind: "granted", response: result.response, denied, granted };
        }
        case "rejected": {
            // [spec] laravel-mercure §2.8: older servers deny all-or-nothing; the newly joined are the suspects.
            // A 419 (CSRF token mismatch, retried once already) is the session's, never a newcomer's: no channel is left for it.
            const newcomers = result.status === 419 ? [] : names.filter((name) => previous?.has(name) !== true);
            const { status, detail, message } = result;
            const rest = { ...(detail === undefined ? {} : { detail }), message };
            return newcomers.length > 0 ? { kind: "newcomers_rejected", status, newcomers, ...rest } : { kind: "rejected", status, ...rest };
        }
        case "error":
            return { kind: "failed", status: result.status, cause: result.cause, message: result.message };
        case "aborted":
            return result;
    }
}
