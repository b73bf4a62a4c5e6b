import { MercureError } from "../errors";
import type { DiagnosisCode } from "./classify";

/**
 * The codes this module's errors carry, all members of `MercureErrorCode`: every
 * {@link DiagnosisCode}, and `discovery_failed` (no hub could be found from a `Link` header or a
 * `<link rel="mercure">`).
 */
export type DiscoveryErrorCode = DiagnosisCode | "discovery_failed";

/**
 * The one place this module builds a `MercureError`: a stable code, a one-sentence message, and the
 * channel, status and cause when there are some.
 */
export function discoveryError(
    code: DiscoveryErrorCode,
    message: string,
    details: { channel?: string; status?: number; cause?: unknown } = {},
): MercureError {
    return new MercureError(code, message, details);
}
