/**
 * Whether `value` (parsed JSON: an auth response, a subscription event, a JWK) is a non-null, non-array object.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
