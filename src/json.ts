/**
 * Whether `value` (parsed JSON: an auth response, a subscription event, a JWK) is a non-null, non-array object.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parse JSON `text` (an auth response, a snapshot, a subscription event); `undefined` when it is not JSON,
 * which no JSON text parses to, so an {@link isRecord} check after it rejects both.
 */
export function parseJson(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return undefined;
    }
}
