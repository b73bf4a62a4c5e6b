import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { extractLinks, githubSlug, headingAnchors, linkProblems } from "./support/doc-links";
import { docFiles, ROOT } from "./support/readme-blocks";

// Every relative link of README.md and docs/*.md names a file of the repository, and every anchor a heading of the
// markdown file it points into, with GitHub's heading slugs (see ./support/doc-links.ts).

describe("links of README.md and docs/*.md", () => {
    const files = docFiles();

    it.each(files)("%s links only to files and headings that exist", (file) => {
        const links = extractLinks(readFileSync(join(ROOT, file), "utf8"), file);
        expect(links.flatMap((link) => linkProblems(link, ROOT))).toEqual([]);
    });

    it("links from the README to every docs page", () => {
        const readme = extractLinks(readFileSync(join(ROOT, "README.md"), "utf8"), "README.md").map((link) => link.target.split("#")[0]);
        expect(files.filter((file) => file !== "README.md" && !readme.includes(file))).toEqual([]);
    });
});

/** The pages for the package's contributors, which may name the repository's scripts and files. */
const CONTRIBUTOR_PAGES = new Set(["docs/architecture.md", "docs/benchmarks.md"]);
/** The README's section for contributors (from its heading to the next one). */
const CONTRIBUTOR_SECTION = /^## Working on this package\n[\s\S]*?(?=^## )/m;

/** What only a clone of the repository has: its scripts (`npm run demo`, `npm test`, `npm ci`) and its `src/` and `test/` files. */
export function repositoryMentions(markdown: string): string[] {
    return [...markdown.matchAll(/npm run demo|npm test\b|npm ci\b|(?<![\w./-])(?:src|test)\/[\w./-]+/g)].map((match) => match[0]);
}

describe("what README.md and docs/*.md tell someone who installed the package (issue 51)", () => {
    it.each(docFiles().filter((file) => !CONTRIBUTOR_PAGES.has(file)))("%s names none of the repository's scripts or source and test files", (file) => {
        const text = readFileSync(join(ROOT, file), "utf8").replace(CONTRIBUTOR_SECTION, "");
        expect(repositoryMentions(text)).toEqual([]);
    });

    it("finds the mentions it looks for", () => {
        expect(repositoryMentions("run `npm run demo`, then see test/e2e/x.test.ts and src/dev/server.ts; `npm run dev` and `npm install` are the app's")).toEqual([
            "npm run demo",
            "test/e2e/x.test.ts",
            "src/dev/server.ts",
        ]);
    });
});

describe("the link check itself", () => {
    it("slugs headings as GitHub does", () => {
        expect(githubSlug("Tabs share one connection")).toBe("tabs-share-one-connection");
        expect(githubSlug("Tokens for `curl` and scripts")).toBe("tokens-for-curl-and-scripts");
        expect(githubSlug("Cookie domain, `__Secure-` and `__Host-` prefixes")).toBe("cookie-domain-__secure--and-__host--prefixes");
        expect(githubSlug("`auth_denied`")).toBe("auth_denied");
        expect(githubSlug("In Node.js")).toBe("in-nodejs");
        expect(githubSlug("React and Vue: [hooks](x.md)")).toBe("react-and-vue-hooks");
        expect([...headingAnchors("# A\n## Same\n```md\n## Not a heading\n```\n### Same\n")]).toEqual(["a", "same", "same-1"]);
    });

    it("finds a missing file and a missing anchor, and ignores links in code and external links", () => {
        const root = mkdtempSync(join(tmpdir(), "doc-links-"));
        try {
            mkdirSync(join(root, "docs"));
            writeFileSync(join(root, "README.md"), "# Title\n## Only here\n");
            const page = [
                "[ok](../README.md#only-here) [self](#mine) [gone](missing.md) [bad](../README.md#no-such-heading) [up](../../x.md)",
                "`[in code](nowhere.md)`",
                "```md",
                "[in a block](nowhere.md)",
                "## Not a heading",
                "```",
                "## Mine",
                "[web](https://example.com/x.md) [self, gone](#not-a-heading)",
            ].join("\n");
            writeFileSync(join(root, "docs/page.md"), page);
            const links = extractLinks(page, "docs/page.md");
            expect(links.map((link) => link.target)).toEqual(["../README.md#only-here", "#mine", "missing.md", "../README.md#no-such-heading", "../../x.md", "https://example.com/x.md", "#not-a-heading"]);
            expect(links.flatMap((link) => linkProblems(link, root))).toEqual([
                "docs/page.md:1: missing.md: no such file",
                "docs/page.md:1: ../README.md#no-such-heading: no heading of README.md has the anchor #no-such-heading",
                "docs/page.md:1: ../../x.md: points outside the repository",
                "docs/page.md:8: #not-a-heading: no heading of docs/page.md has the anchor #not-a-heading",
            ]);
        } finally {
            rmSync(root, { recursive: true, force: true });
        }
    });
});
