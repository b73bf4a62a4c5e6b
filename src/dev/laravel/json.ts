/**
 * Encode a value the way PHP's `json_encode` does with Laravel's default flags (none): `/` is escaped as
 * `\/` and every non-ASCII UTF-16 unit as a lowercase `\uXXXX` escape.
 */
export function phpJsonEncode(value: unknown): string {
    // [spec] laravel-mercure §2.5: "slashes are escaped as `\/`, non-ASCII as `\uXXXX`".
    // `/` and non-ASCII characters can only occur inside JSON strings, so escaping the whole output is safe.
    return JSON.stringify(value)
        .replace(/\//g, "\\/")
        .replace(/[\u0080-\uffff]/g, (char) => "\\u" + char.charCodeAt(0).toString(16).padStart(4, "0"));
}

/**
 * Map a broadcast payload to what PHP would encode: a missing payload or an empty object is an empty PHP
 * array, which `json_encode` writes as `[]`.
 */
export function phpPayload(payload: unknown): unknown {
    // [spec] laravel-mercure §4.3: "an empty payload encodes as `[]`".
    if (payload === undefined || payload === null) return [];
    if (isPlainObject(payload) && Object.keys(payload).length === 0) return [];
    return payload;
}

/** Whether a value is a non-null, non-array object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
