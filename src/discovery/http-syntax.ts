/*
 * The pieces of HTTP field syntax (RFC 9110 §5.6) that `Link` (RFC 8288) and `WWW-Authenticate`
 * (RFC 9110 §11.6.1) share: a cursor over one field value, tokens, quoted strings, and RFC 8187 values.
 */

/** One character of an RFC 9110 `token`. */
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

/**
 * A reading position in one field value. Every reader advances {@link FieldCursor.position}; none
 * throws, whatever the input: a malformed value yields what could be read.
 */
export class FieldCursor {
    /** Index of the next unread character of {@link FieldCursor.text}. */
    position = 0;

    /** Read `text` from its start. */
    constructor(
        /** The field value being read. */
        readonly text: string,
    ) {}

    /** Whether every character was read. */
    get done(): boolean {
        return this.position >= this.text.length;
    }

    /** The next character, or `""` at the end. */
    peek(): string {
        return this.text.charAt(this.position);
    }

    /** Skip optional whitespace (`OWS`: spaces and tabs). */
    skipWhitespace(): void {
        while (this.peek() === " " || this.peek() === "\t") this.position++;
    }

    /** Skip whitespace and empty list elements (`#rule` allows `a, , b`). */
    skipListSeparators(): void {
        while (this.peek() === " " || this.peek() === "\t" || this.peek() === ",") this.position++;
    }

    /** Read a run of token characters (possibly empty). */
    readToken(): string {
        const start = this.position;
        while (!this.done && TCHAR.test(this.peek())) this.position++;
        return this.text.slice(start, this.position);
    }

    /**
     * Read a `quoted-string` starting at the opening quote, unescaping `\x` pairs; an unterminated one
     * runs to the end of the value.
     */
    readQuotedString(): string {
        let value = "";
        this.position++; // the opening DQUOTE
        while (!this.done) {
            const char = this.peek();
            this.position++;
            if (char === '"') return value;
            if (char === "\\" && !this.done) {
                value += this.peek();
                this.position++;
            } else {
                value += char;
            }
        }
        return value;
    }

    /** Read up to (not including) the first of `stops`, or to the end; the result is trimmed. */
    readUntil(stops: string): string {
        const start = this.position;
        while (!this.done && !stops.includes(this.peek())) this.position++;
        return this.text.slice(start, this.position).trim();
    }

    /**
     * Skip to the next `,` that is not inside a quoted string or `<…>`, leaving the cursor on it (or at
     * the end): how a reader recovers from a malformed list element.
     */
    skipToListSeparator(): void {
        while (!this.done) {
            const char = this.peek();
            if (char === ",") return;
            if (char === '"') {
                this.readQuotedString();
            } else if (char === "<") {
                const close = this.text.indexOf(">", this.position);
                this.position = close === -1 ? this.text.length : close + 1;
            } else {
                this.position++;
            }
        }
    }
}

/** Whether `value` is a non-empty RFC 9110 token (and so a valid cookie or parameter name). */
export function isToken(value: string): boolean {
    return value.length > 0 && [...value].every((char) => TCHAR.test(char));
}

/**
 * Decode an RFC 8187 `ext-value` (`UTF-8'en'%E2%82%AC%20rates`) as carried by `title*`-style
 * parameters; `null` when it is malformed or in a charset other than UTF-8 and ISO-8859-1.
 */
export function decodeExtValue(value: string): string | null {
    const match = /^([^']*)'[^']*'(.*)$/.exec(value);
    if (match === null) return null;
    const charset = match[1]!.toLowerCase();
    const encoded = match[2]!;
    if (!/^(?:[!#$&+\-.^_`|~0-9A-Za-z]|%[0-9A-Fa-f]{2})*$/.test(encoded)) return null;
    if (charset === "utf-8") {
        try {
            return decodeURIComponent(encoded);
        } catch {
            return null;
        }
    }
    if (charset === "iso-8859-1") {
        return encoded.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
    return null;
}
