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
        let wellFormed = "";
        for (let i = 0; i < value.length; i++) {
            const code = value.charCodeAt(i);
            const next = value.charCodeAt(i + 1);
            if (code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
                wellFormed += value[i] + value[i + 1];
                i++;
            } else if (code >= 0xd800 && code <= 0xdfff) {
                wellFormed += "\uFFFD";
            } else {
                wellFormed += value[i];
            }
        }
        return encodeURIComponent(wellFormed);
    }
}
