/** One `<link>` element found in HTML text. */
export interface HtmlLink {
    /** The `rel` tokens, lower-cased. */
    readonly rel: readonly string[];
    /** The `href`, resolved against the document's base; the raw value when it cannot be resolved. */
    readonly href: string;
    /** Every attribute by lower-cased name, entities decoded (first occurrence wins). */
    readonly attributes: Readonly<Record<string, string>>;
}

/**
 * Find the `<link>` elements of an HTML document given as text (where no DOM is available, as in Node.js
 * or on a fetched response): comments are skipped, attributes may be quoted either way or unquoted (a `>` in a
 * quoted value does not end the tag), and the first `<base href>` changes the base. A scanner, not a full HTML
 * parser: a `<link>` written inside a script's string would be found too.
 *
 * Linear in the length of `html` whatever it holds: one pass, every character read a bounded number of times (a
 * hostile page of unterminated tags, comments or quotes cannot make it backtrack); a tag or comment left open runs
 * to the end of the text, as in a browser.
 */
export function findHtmlLinks(html: string, documentUrl: string): HtmlLink[] {
    let base: string | undefined;
    const found: Array<Record<string, string>> = [];
    for (let at = 0; at < html.length; at++) {
        if (html.charCodeAt(at) !== 60 /* < */) continue;
        const next = html.charCodeAt(at + 1) | 32; // Lower-cased when a letter.
        if (next === 33 /* ! */ && html.startsWith("<!--", at)) {
            const end = html.indexOf("-->", at + 4);
            if (end < 0) break;
            at = end + 2;
            continue;
        }
        // Only the four letters after "<" and the character after them are read: other tags' names are never scanned.
        if (next !== 108 /* l */ && next !== 98 /* b */) continue;
        const name = html.slice(at + 1, at + 5).toLowerCase();
        const after = html.charCodeAt(at + 5);
        if ((name !== "link" && name !== "base") || !(isSpace(after) || after === SLASH || after === GT || Number.isNaN(after))) continue;
        const tag = readAttributes(html, at + 5);
        if (tag === null) break;
        at = tag.end - 1;
        if (name === "link") found.push(tag.attributes);
        else if (base === undefined && tag.attributes["href"] !== undefined) base = resolve(tag.attributes["href"], documentUrl);
    }
    const links: HtmlLink[] = [];
    for (const attributes of found) {
        const rel = (attributes["rel"] ?? "")
            .split(/[\t\n\f\r ]+/)
            .filter((token) => token !== "")
            .map((token) => token.toLowerCase());
        const href = attributes["href"];
        if (href === undefined) continue;
        links.push({ rel, href: resolve(href.trim(), base ?? documentUrl), attributes });
    }
    return links;
}

/** How many attributes of one tag are read (a real `<link>` has a handful): the rest are scanned past, not copied. */
const MAX_ATTRIBUTES = 64;

/**
 * The attributes of the tag whose name ends at `from`, up to its `>`: by lower-cased name, entities decoded,
 * the first occurrence winning (of the first {@link MAX_ATTRIBUTES}); and where the tag ends. Null when the text ends
 * first (an open tag or quote).
 */
function readAttributes(html: string, from: number): { attributes: Record<string, string>; end: number } | null {
    const attributes: Record<string, string> = Object.create(null) as Record<string, string>;
    const length = html.length;
    let seen = 0;
    let at = from;
    for (;;) {
        let code = html.charCodeAt(at);
        while (isSpace(code) || code === SLASH) code = html.charCodeAt(++at);
        if (at >= length) return null;
        if (code === GT) return { attributes, end: at + 1 };
        const start = at; // A name's first character may be "=" (HTML: a stray "=" starts a name).
        do code = html.charCodeAt(++at);
        while (at < length && !isSpace(code) && code !== SLASH && code !== GT && code !== EQUALS);
        const nameEnd = at;
        while (isSpace(code)) code = html.charCodeAt(++at);
        let valueStart = at;
        let valueEnd = at;
        if (code === EQUALS) {
            do code = html.charCodeAt(++at);
            while (isSpace(code));
            if (code === 34 || code === 39) {
                const close = html.indexOf(code === 34 ? '"' : "'", at + 1);
                if (close < 0) return null;
                [valueStart, valueEnd, at] = [at + 1, close, close + 1];
            } else {
                valueStart = at;
                while (at < length && !isSpace(code) && code !== GT) code = html.charCodeAt(++at);
                valueEnd = at;
            }
        } else at = nameEnd;
        if (seen++ >= MAX_ATTRIBUTES) continue;
        const name = html.slice(start, nameEnd).toLowerCase();
        if (!(name in attributes)) attributes[name] = decodeEntities(html.slice(valueStart, valueEnd));
    }
}

const SLASH = 47;
const EQUALS = 61;
const GT = 62;

/** HTML's ASCII whitespace: tab, LF, FF, CR, space. */
function isSpace(code: number): boolean {
    return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}

const NAMED: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(value: string): string {
    return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, body: string) => {
        if (body[0] === "#") {
            const code = body[1] === "x" || body[1] === "X" ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
            return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
        }
        return NAMED[body.toLowerCase()] ?? entity;
    });
}

function resolve(href: string, base: string): string {
    try {
        return new URL(href, base).href;
    } catch {
        return href;
    }
}
