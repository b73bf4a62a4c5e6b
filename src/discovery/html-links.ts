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
 * or on a fetched response): comments are skipped, attributes may be quoted either way or unquoted, and
 * a `<base href>` changes the base. A scanner, not a full HTML parser: a `<link>` written inside a
 * script's string would be found too.
 */
export function findHtmlLinks(html: string, documentUrl: string): HtmlLink[] {
    const text = html.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
    let base = documentUrl;
    const baseTag = /<base\b([^>]*)>/i.exec(text);
    const baseHref = baseTag === null ? undefined : readAttributes(baseTag[1]!)["href"];
    if (baseHref !== undefined) base = resolve(baseHref, documentUrl);
    const links: HtmlLink[] = [];
    for (const match of text.matchAll(/<link\b([^>]*)>/gi)) {
        const attributes = readAttributes(match[1]!);
        const rel = (attributes["rel"] ?? "")
            .split(/[\t\n\f\r ]+/)
            .filter((token) => token !== "")
            .map((token) => token.toLowerCase());
        const href = attributes["href"];
        if (href === undefined) continue;
        links.push({ rel, href: resolve(href.trim(), base), attributes });
    }
    return links;
}

function readAttributes(source: string): Record<string, string> {
    const attributes: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const match of source.matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
        const name = match[1]!.toLowerCase();
        if (!(name in attributes)) attributes[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? "");
    }
    return attributes;
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
