/**
 * Percent-encode a string exactly as PHP's `rawurlencode` does (RFC 3986).
 *
 * Every UTF-8 byte except `A-Z a-z 0-9 - _ . ~` becomes `%XX` with uppercase hex. `encodeURIComponent`
 * leaves `! ' ( ) *` alone, so those five are encoded on top. A lone UTF-16 surrogate (which PHP never
 * sees, since PHP strings are bytes) is encoded as U+FFFD, the replacement a browser's TextEncoder uses,
 * instead of throwing.
 */
export function rawUrlEncode(value: string): string {
    // [spec] laravel-mercure §3: enc = PHP rawurlencode of the UTF-8 bytes.
    return encodeUtf8Component(value).replace(
        /[!'()*]/g,
        (char) => "%" + char.charCodeAt(0).toString(16).toUpperCase(),
    );
}

/**
 * Reverse {@link rawUrlEncode}; returns `null` when the value is not valid percent-encoded UTF-8.
 */
export function rawUrlDecode(value: string): string | null {
    try {
        return decodeURIComponent(value);
    } catch {
        return null;
    }
}

/** `encodeURIComponent`, with lone surrogates replaced by U+FFFD instead of throwing. */
function encodeUtf8Component(value: string): string {
    try {
        return encodeURIComponent(value);
    } catch {
        // A high surrogate followed by a low one is a pair and stays (the first alternative wins); any other
        // surrogate is lone.
        return encodeURIComponent(value.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]/g, (unit) => (unit.length > 1 ? unit : "\uFFFD")));
    }
}
