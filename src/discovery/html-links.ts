/** One `<link>` element found in HTML text. */
export interface HtmlLink {
    /** The `rel` tokens, lower-cased. */
    readonly rel: readonly string[];
    /** The `href`, resolved against the document's base; the raw value when it cannot be resolved. */
    readonly href: string;
    /** Every attribute by lower-cased name, entities decoded (first occurrence wins). */
    readonly attributes: Readonly<Record<string, string>>;
}

/** The elements HTML's parser keeps in `<head>`: any other start tag ends it (the body begins), as text does. */
const HEAD_ELEMENTS = new Set(["html", "head", "base", "link", "meta", "title", "style", "script", "noscript", "template", "basefont", "bgsound"]);

/** Head elements whose content is no markup for the page (raw text, or a template's inert content): skipped to their end tag. */
const OPAQUE_ELEMENTS = new Set(["title", "style", "script", "noscript", "template"]);

/** End tags that end `<head>`: its own, and those HTML's parser treats as the start of the body. */
const HEAD_ENDS = new Set(["head", "body", "html", "br"]);

/**
 * Find the `<link>` elements of an HTML document's `<head>`, given as text (where no DOM is available, as in Node.js
 * or on a fetched response): comments are skipped, attributes may be quoted either way or unquoted (a `>` in a
 * quoted value does not end the tag), the first `<base href>` of the head changes the base, and the content of
 * `<script>`, `<style>`, `<title>`, `<noscript>` and `<template>` is skipped. The head ends where HTML's parser ends
 * it: at `</head>`, at the first start tag that cannot be in a head (`<body>`, `<div>`, ...), or at text. Only the
 * head is read: the body often holds what users wrote, and a link written there must not name the hub.
 *
 * Linear in the length of `html` whatever it holds: one pass, every character read a bounded number of times (a
 * hostile page of unterminated tags, comments or quotes cannot make it backtrack); a tag or comment left open runs
 * to the end of the text, as in a browser.
 */
export function findHtmlLinks(html: string, documentUrl: string): HtmlLink[] {
    let base: string | undefined;
    const found: Array<Record<string, string>> = [];
    for (let at = 0; at < html.length; at++) {
        const code = html.charCodeAt(at);
        if (code !== 60 /* < */) {
            if (isSpace(code)) continue;
            break; // Text: the body has begun.
        }
        const next = html.charCodeAt(at + 1);
        if (next === 33 /* ! */ || next === 63 /* ? */) {
            // A comment, or a doctype (a bogus comment up to ">").
            const comment = html.startsWith("<!--", at);
            const end = html.indexOf(comment ? "-->" : ">", at + 2);
            if (end < 0) break;
            at = end + (comment ? 2 : 0);
            continue;
        }
        const closing = next === SLASH;
        const nameStart = at + (closing ? 2 : 1);
        let nameEnd = nameStart;
        while (isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
        const name = html.slice(nameStart, nameEnd).toLowerCase();
        // "<" not followed by a letter is text.
        if (name === "" || !/^[a-z]/.test(name)) break;
        if (closing) {
            if (HEAD_ENDS.has(name)) break;
            const end = html.indexOf(">", nameEnd);
            if (end < 0) break;
            at = end;
            continue;
        }
        if (!HEAD_ELEMENTS.has(name)) break;
        const tag = readAttributes(html, nameEnd);
        if (tag === null) break;
        at = tag.end - 1;
        if (name === "link") found.push(tag.attributes);
        else if (name === "base" && base === undefined && tag.attributes["href"] !== undefined) base = resolve(tag.attributes["href"], documentUrl);
        if (OPAQUE_ELEMENTS.has(name)) {
            const close = new RegExp(`</${name}`, "ig");
            close.lastIndex = tag.end;
            if (close.exec(html) === null) break;
            at = close.lastIndex - name.length - 3; // Back to the "<" of the end tag, read next.
        }
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

/** Whether `code` continues a tag name (ASCII letters and digits, and `-` of custom elements). */
function isNameChar(code: number): boolean {
    return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57) || code === 45;
}

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
