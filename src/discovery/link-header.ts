import { decodeExtValue, FieldCursor } from "./http-syntax";

/**
 * One link of a `Link` header (RFC 8288): its target, its relation types and its parameters.
 */
export interface LinkValue {
    /** The target exactly as written between `<` and `>` (trimmed). */
    readonly target: string;
    /**
     * The target resolved against the base URL given to {@link parseLinkHeader} (or as an absolute URL
     * when no base was given); the target as written when it cannot be resolved.
     */
    readonly href: string;
    /** The relation types of the first `rel` parameter, lower-cased, in order (`rel="a b"` gives two). */
    readonly rel: readonly string[];
    /**
     * The parameters by lower-cased name, first occurrence wins (RFC 8288 §3.3 and §3.4.1); a parameter
     * without a value has `""`; `name*` parameters are decoded (RFC 8187) and kept under `name*`.
     */
    readonly params: Readonly<Record<string, string>>;
    /** Every parameter in order, repeated ones included (for example several `hreflang`). */
    readonly paramList: readonly (readonly [name: string, value: string])[];
}

/**
 * Parse `Link` header values (RFC 8288 §3, parsed as its Appendix B says): several links in one value
 * and across values (pass every header line as an array), several relation types in one `rel`, quoted
 * parameters containing `,` and `;`, case-insensitive parameter names and relation types, and relative
 * targets resolved against `base` (the response URL). A malformed link is skipped; the others are kept.
 */
export function parseLinkHeader(value: string | readonly string[] | null | undefined, base?: string | URL): LinkValue[] {
    const fields = value === null || value === undefined ? [] : typeof value === "string" ? [value] : value;
    const links: LinkValue[] = [];
    for (const field of fields) readField(new FieldCursor(field), base, links);
    return links;
}

/** The links among `links` that have relation type `rel` (compared case-insensitively). */
export function linksWithRel(links: readonly LinkValue[], rel: string): LinkValue[] {
    const wanted = rel.toLowerCase();
    return links.filter((link) => link.rel.includes(wanted));
}

function readField(cursor: FieldCursor, base: string | URL | undefined, links: LinkValue[]): void {
    for (;;) {
        cursor.skipListSeparators();
        if (cursor.done) return;
        // [spec] RFC 8288 §3: link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
        if (cursor.peek() !== "<") {
            cursor.skipToListSeparator();
            continue;
        }
        const close = cursor.text.indexOf(">", cursor.position);
        if (close === -1) return; // An unterminated target: nothing after it can be told apart.
        const target = cursor.text.slice(cursor.position + 1, close).trim();
        cursor.position = close + 1;
        links.push(buildLink(target, readParameters(cursor), base));
    }
}

/** Read `; name=value` parameters up to the `,` ending this link (RFC 8288 Appendix B.3). */
function readParameters(cursor: FieldCursor): [string, string][] {
    const params: [string, string][] = [];
    for (;;) {
        cursor.skipWhitespace();
        if (cursor.done || cursor.peek() === ",") return params;
        if (cursor.peek() !== ";") {
            // Stray characters after the target or a value: skip to the next parameter or link.
            cursor.readUntil(";,");
            continue;
        }
        cursor.position++;
        cursor.skipWhitespace();
        // [spec] RFC 8288 §3: parameter names are case-insensitive.
        const name = cursor.readUntil("=;, \t").toLowerCase();
        cursor.skipWhitespace();
        let value = "";
        if (cursor.peek() === "=") {
            cursor.position++;
            cursor.skipWhitespace();
            // [spec] RFC 8288 §3: a value is a token or a quoted-string, which may hold `,` and `;`.
            value = cursor.peek() === '"' ? cursor.readQuotedString() : cursor.readUntil(";,");
        }
        if (name === "") continue;
        // [spec] RFC 8288 §3: `name*` values use the RFC 8187 encoding.
        if (name.endsWith("*")) value = decodeExtValue(value) ?? value;
        params.push([name, value]);
    }
}

function buildLink(target: string, paramList: [string, string][], base: string | URL | undefined): LinkValue {
    const params: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const [name, value] of paramList) {
        if (!(name in params)) params[name] = value;
    }
    // [spec] RFC 8288 §3.3: only the first `rel` counts; relation types are separated by whitespace and
    // compared case-insensitively (§2.1.1 registered, §2.1.2 extension types).
    const rel = (params["rel"] ?? "")
        .split(/[ \t\r\n]+/)
        .filter((type) => type !== "")
        .map((type) => type.toLowerCase());
    return { target, href: resolve(target, base), rel, params, paramList };
}

function resolve(target: string, base: string | URL | undefined): string {
    try {
        // [spec] RFC 8288 §3.1: a relative target is resolved against the base URI of the response.
        return (base === undefined ? new URL(target) : new URL(target, base)).href;
    } catch {
        return target;
    }
}
