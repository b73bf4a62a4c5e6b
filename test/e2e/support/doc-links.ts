/*
 * Links of the docs check: every relative link of README.md and docs/*.md must name a file of the repository,
 * and an anchor (`#…`) must be the GitHub slug of a heading of the file it points into.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/** One markdown link: where it is and what it points to. */
export interface DocLink {
    /** The file it is in, relative to the root. */
    readonly file: string;
    /** Its line (1-based). */
    readonly line: number;
    /** The target as written. */
    readonly target: string;
}

/** The lines of `markdown` outside fenced code blocks, with inline code removed, each with its 1-based number. */
function proseLines(markdown: string): Array<{ text: string; line: number }> {
    const result: Array<{ text: string; line: number }> = [];
    let fence: string | null = null;
    markdown.split("\n").forEach((text, index) => {
        const open = /^ {0,3}(`{3,}|~{3,})/.exec(text);
        if (fence !== null) {
            if (open !== null && text.trim().startsWith(fence) && /^(`+|~+)$/.test(text.trim())) fence = null;
            return;
        }
        if (open !== null) {
            fence = open[1]!;
            return;
        }
        result.push({ text: text.replace(/(`+)[^`]*?\1/g, ""), line: index + 1 });
    });
    return result;
}

/** Every inline link and image (`[text](target)`, `![alt](target)`) of `markdown`, outside code. */
export function extractLinks(markdown: string, file: string): DocLink[] {
    const links: DocLink[] = [];
    for (const { text, line } of proseLines(markdown)) {
        for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line, target: match[1]! });
    }
    return links;
}

/**
 * The slug GitHub gives a heading's text: inline markup and links reduced to their text, lower-cased, every
 * character that is not a letter, a mark, a digit, `_`, `-` or a space removed, and each space made a `-`.
 */
export function githubSlug(heading: string): string {
    const text = heading
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
        .replace(/<[^>]+>/g, "")
        .trim()
        .toLowerCase();
    return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "").replace(/ /g, "-");
}

/** The anchors of `markdown`'s headings (ATX, outside code), a repeated slug getting `-1`, `-2`, … as on GitHub. */
export function headingAnchors(markdown: string): Set<string> {
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    for (const { text } of proseLinesKeepingCode(markdown)) {
        const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
        if (heading === null) continue;
        const slug = githubSlug(heading[1]!);
        const count = seen.get(slug) ?? 0;
        seen.set(slug, count + 1);
        anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    return anchors;
}

/** Like proseLines, but keeping inline code (a heading's code spans are part of its slug). */
function proseLinesKeepingCode(markdown: string): Array<{ text: string; line: number }> {
    const lines = markdown.split("\n");
    return proseLines(markdown).map(({ line }) => ({ text: lines[line - 1]!, line }));
}

/**
 * Problems of one link in `link.file` (read from `root`): a relative target naming no file, or an anchor that is
 * no heading of the markdown file it points into. External links (a scheme, `//`) are not fetched.
 */
export function linkProblems(link: DocLink, root: string, read: (path: string) => string = (path) => readFileSync(path, "utf8")): string[] {
    const at = `${link.file}:${link.line}: ${link.target}`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith("//")) return [];
    const hash = link.target.indexOf("#");
    const path = hash === -1 ? link.target : link.target.slice(0, hash);
    const anchor = hash === -1 ? null : decodeURIComponent(link.target.slice(hash + 1));
    const resolved = path === "" ? join(root, link.file) : normalize(join(root, dirname(link.file), decodeURIComponent(path)));
    if (!resolved.startsWith(root + "/")) return [`${at}: points outside the repository`];
    if (!existsSync(resolved)) return [`${at}: no such file`];
    if (anchor === null) return [];
    if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) return [`${at}: an anchor into a file that is not markdown`];
    return headingAnchors(read(resolved)).has(anchor) ? [] : [`${at}: no heading of ${resolved.slice(root.length + 1)} has the anchor #${anchor}`];
}
