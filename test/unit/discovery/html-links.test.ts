import { describe, expect, it } from "vitest";
import { findHtmlLinks } from "../../../src/discovery/html-links";

const PAGE = "https://example.com/page";
const MB = 1 << 20;

/** `unit` repeated to `bytes` characters. */
const fill = (unit: string, bytes: number): string => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

/** Pages built to make a backtracking scanner quadratic: many tags, quotes or comments that never end. */
function hostilePages(bytes: number): Record<string, string> {
    return {
        "unterminated <link": fill("<link ", bytes),
        "unterminated <base": fill("<base ", bytes),
        "other tags without >": fill("<a", bytes),
        "a tag name that never ends": "<" + fill("a<", bytes),
        "unterminated quotes in one tag": "<link rel=mercure " + fill('x="', bytes),
        "many attributes, closed at the end": "<link " + fill("a=b ", bytes) + ">",
        "unterminated comments": fill("<!--", bytes),
        "entity-like runs": '<link href="' + fill("&#x1", bytes) + '">',
    };
}

/**
 * The least CPU time (this process's user and system time, in ms) of `runs` calls of `task`: CPU time does not count
 * the waits of a loaded machine whose other processes take the cores, and the least run is what the code costs.
 */
function leastTime(task: () => unknown, runs: number): number {
    let least = Infinity;
    for (let run = 0; run < runs; run++) {
        const start = process.cpuUsage();
        task();
        const used = process.cpuUsage(start);
        least = Math.min(least, (used.user + used.system) / 1_000);
    }
    return least;
}

describe("findHtmlLinks() on hostile HTML", () => {
    it("scans 1 MB hostile pages in linear time: under 50 ms of CPU each, and within a small multiple of one plain pass over the same text", () => {
        // A small page first: a quadratic scanner already takes far too long here (and the test ends in seconds, not hours).
        for (const [shape, html] of Object.entries(hostilePages(64 * 1024))) expect(leastTime(() => findHtmlLinks(html, PAGE), 3), shape).toBeLessThan(50);
        for (const [shape, html] of Object.entries(hostilePages(MB))) {
            // The baseline: the same text read once, character by character, by a loop as simple as a scan can be.
            const baseline = leastTime(() => {
                let count = 0;
                for (let at = 0; at < html.length; at++) if (html.charCodeAt(at) === 60) count++;
                return count;
            }, 7);
            const scan = leastTime(() => findHtmlLinks(html, PAGE), 7);
            expect(scan, shape).toBeLessThan(50);
            // Linear: a few passes over the text. Quadratic would be about a million times the baseline at 1 MB.
            expect(scan, `${shape}: ${scan.toFixed(2)} ms against a ${baseline.toFixed(2)} ms baseline`).toBeLessThan(Math.max(baseline, 0.5) * 40);
        }
    }, 120_000); // CPU time is what is asserted; the wall time of 100+ scans on a loaded 2-core machine can pass the default 5 s.

    it("still finds the links of a head full of noise, and honours the first <base href>", () => {
        const noise = "<meta x='1'> <!-- c --> <script>if (a<b) x = '<link rel=mercure href=/evil>'</script> <title><link></title> ";
        const html = "<!doctype html><html><head>" + noise.repeat(Math.ceil(200_000 / noise.length)) + '<base target=x><base href="/app/"><base href="/other/"><link rel="preload mercure" href="hub?a=1&amp;b=2"><link href=\'x>y\' rel=icon>';
        const links = findHtmlLinks(html, PAGE);
        expect(links.map((link) => [link.rel, link.href])).toEqual([
            [["preload", "mercure"], "https://example.com/app/hub?a=1&b=2"],
            [["icon"], "https://example.com/app/x%3Ey"],
        ]);
    });

    it("ignores a <link> left open at the end, inside a comment, or named otherwise (<linked>, <links>)", () => {
        expect(findHtmlLinks('<linked rel=mercure href=/a><links rel=mercure href=/b><!-- <link rel=mercure href=/c> --><link rel=mercure href="/d', PAGE)).toEqual([]);
    });

    // Issue 50 point 4: the body often holds what users wrote; a link there must not name the hub.
    it("reads the <head> only: it ends at </head>, <body>, any tag a head cannot hold, or text, as HTML's parser ends it", () => {
        const head = '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>a <link rel=mercure href=/in-title></title>';
        const own = '<link rel="mercure" href="/hub">';
        const tail = '<link rel="mercure" href="https://evil.test/hub"><base href="https://evil.test/">';
        for (const end of ["</head>", "<body>", "<div>", "hello", "&nbsp;", "<p class=x>", "</body>", "<custom-element>", "< "]) {
            expect(findHtmlLinks(head + own + end + tail, PAGE).map((link) => link.href), end).toEqual(["https://example.com/hub"]);
        }
        // Skipped content: a script, a style, a template or a noscript holds no element of the page.
        const opaque = "<script>'<link rel=mercure href=/s>'</script><style>/* <link rel=mercure href=/st> */</style><template><link rel=mercure href=/t></template><noscript><link rel=mercure href=/n></noscript>";
        expect(findHtmlLinks(opaque + own, PAGE).map((link) => link.href)).toEqual(["https://example.com/hub"]);
        // An implied head (no <head> tag) holds the links before the first body content.
        expect(findHtmlLinks(own + "<p>" + tail, PAGE).map((link) => link.href)).toEqual(["https://example.com/hub"]);
    });

    it("keeps prototype-looking attribute names as plain data", () => {
        const [link] = findHtmlLinks('<link __proto__="x" constructor=y rel=mercure href=/hub>', PAGE);
        expect(link!.attributes["__proto__"]).toBe("x");
        expect(link!.attributes["constructor"]).toBe("y");
        expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    });
});
