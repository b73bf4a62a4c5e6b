// Base64url without padding (RFC 4648 §5, as RFC 7515 §2 uses it in every JWE segment). Only `./jwe`
// imports this, so it lives in the lazily loaded crypto chunk with it.

/** The base64url alphabet: the character at index `i` stands for the 6-bit value `i`. */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Character code (below 128) → its 6-bit value, or 64 for a character outside the alphabet. */
const VALUES = new Uint8Array(128).fill(64);
for (let value = 0; value < 64; value++) VALUES[ALPHABET.charCodeAt(value)] = value;

/**
 * Decode base64url without padding; `undefined` for anything else.
 *
 * Refused: a character outside the URL-safe alphabet (`=`, `+`, `/`, whitespace included), a length of
 * 4n + 1 (no whole byte), and a last character whose unused low bits are not zero (RFC 4648 §3.5: a
 * non-canonical encoding; no JOSE encoder produces one).
 */
export function decodeBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
    const rest = text.length % 4;
    if (rest === 1) return undefined;
    const bytes = new Uint8Array((text.length >> 2) * 3 + (rest === 0 ? 0 : rest - 1));
    let bits = 0; // the undecoded bits, the newest lowest
    let pending = 0; // how many of them there are (always below 8 between characters)
    let at = 0;
    for (let index = 0; index < text.length; index++) {
        const code = text.charCodeAt(index);
        const value = code < 128 ? VALUES[code]! : 64;
        if (value === 64) return undefined;
        bits = ((bits << 6) | value) & 0x3fff;
        pending += 6;
        if (pending >= 8) {
            pending -= 8;
            bytes[at++] = bits >> pending;
            bits &= (1 << pending) - 1;
        }
    }
    return bits === 0 ? bytes : undefined;
}

/**
 * Encode bytes as base64url without padding.
 */
export function encodeBase64url(bytes: Uint8Array): string {
    let text = "";
    let index = 0;
    for (; index + 2 < bytes.length; index += 3) {
        const group = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!;
        text += ALPHABET[group >> 18]! + ALPHABET[(group >> 12) & 63]! + ALPHABET[(group >> 6) & 63]! + ALPHABET[group & 63]!;
    }
    const rest = bytes.length - index;
    if (rest > 0) {
        const group = (bytes[index]! << 16) | (rest === 2 ? bytes[index + 1]! << 8 : 0);
        text += ALPHABET[group >> 18]! + ALPHABET[(group >> 12) & 63]! + (rest === 2 ? ALPHABET[(group >> 6) & 63]! : "");
    }
    return text;
}
