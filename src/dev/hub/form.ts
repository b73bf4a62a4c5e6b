/** One `name=value` pair of a form-urlencoded string, in order of appearance. */
export type FormField = readonly [name: string, value: string];

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Parse `application/x-www-form-urlencoded` bytes like `URLSearchParams`, but return `null` instead of
 * substituting U+FFFD when a name or value is not valid UTF-8.
 */
export function parseForm(input: Uint8Array): FormField[] | null {
    const fields: FormField[] = [];
    let start = 0;
    for (let i = 0; i <= input.length; i++) {
        if (i < input.length && input[i] !== 0x26 /* & */) continue;
        if (i > start) {
            const part = input.subarray(start, i);
            const eq = part.indexOf(0x3d /* = */);
            const name = decodeComponent(eq === -1 ? part : part.subarray(0, eq));
            const value = decodeComponent(eq === -1 ? new Uint8Array(0) : part.subarray(eq + 1));
            if (name === null || value === null) return null;
            fields.push([name, value]);
        }
        start = i + 1;
    }
    return fields;
}

/** Percent-decode one form component (`+` is a space) and decode it as strict UTF-8. */
function decodeComponent(bytes: Uint8Array): string | null {
    const out = new Uint8Array(bytes.length);
    let n = 0;
    for (let i = 0; i < bytes.length; i++) {
        const byte = bytes[i]!;
        if (byte === 0x2b /* + */) {
            out[n++] = 0x20;
        } else if (byte === 0x25 /* % */ && i + 2 < bytes.length && isHex(bytes[i + 1]!) && isHex(bytes[i + 2]!)) {
            out[n++] = parseInt(String.fromCharCode(bytes[i + 1]!, bytes[i + 2]!), 16);
            i += 2;
        } else {
            out[n++] = byte;
        }
    }
    try {
        return UTF8.decode(out.subarray(0, n));
    } catch {
        return null;
    }
}

function isHex(byte: number): boolean {
    return (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66);
}

/** True when `value` has a control character (C0, DEL, C1), a Unicode format (`Cf`) character or a lone surrogate. */
export function hasForbiddenChars(value: string): boolean {
    // [spec] §1.2, §3: matcher values, topics, ids and types must not carry controls or Cf characters.
    return /[\p{Cc}\p{Cf}\p{Cs}]/u.test(value);
}

/** Length of `value` in UTF-8 bytes (limits are stated in bytes). */
export function utf8Length(value: string): number {
    return Buffer.byteLength(value, "utf8");
}
