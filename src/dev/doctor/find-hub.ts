import { findHtmlLinks } from "../../discovery/html-links";
import { linksWithRel, parseLinkHeader } from "../../discovery/link-header";
import { discoveredHub } from "../../discovery/link-element";
import { fetchMetadata } from "../../discovery/metadata";
import { probe, probeUrl } from "../../discovery/probe";
import { describeFailure, readHeader, responseUrl } from "../../discovery/response";
import type { FetchLike } from "../../transport/platform";
import { within } from "../../transport/deadline";
import type { CheckResult } from "./checks";

/** Where the hub was found, or why not: the "hub found" line of the report. */
export interface FoundHub {
    /** The report line. */
    readonly result: CheckResult;
    /** The hub URL, or null when none was found. */
    readonly hub: URL | null;
    /** The `last-event-id` the page rendered with the hub's link (mercure-hub §5), or null when none. */
    readonly cursor?: string | null;
}

const NAME = "hub found";

/**
 * Find the hub of an app as a client would: the app page's `Link: <…>; rel="mercure"` header, its
 * `<link rel="mercure">`, the protected-resource metadata of the app origin's default hub path, or a hub
 * answering at `/.well-known/mercure` on the app's origin.
 */
export async function findHub(appUrl: string, fetch: FetchLike, timeout: number): Promise<FoundHub> {
    const page = await within(
        async (signal) => {
            const response = await fetch(appUrl, { method: "GET", headers: { Accept: "text/html, */*;q=0.8" }, redirect: "follow", signal });
            return { response, body: /html/i.test(readHeader(response, "content-type") ?? "") ? await response.text() : "" };
        },
        timeout,
        new AbortController().signal,
    );
    if (page.kind !== "done") {
        const reason = page.kind === "failed" ? describeFailure(page.cause) : "no answer in time";
        return { hub: null, result: { name: NAME, verdict: "fail", detail: `${appUrl} could not be fetched (${reason})`, fix: "check the URL and that the app is running" } };
    }
    const { response, body } = page.value;
    const base = responseUrl(response) ?? appUrl;
    // [spec] mercure-hub §5: a Link header wins over links in the document.
    for (const link of linksWithRel(parseLinkHeader(readHeader(response, "link"), base), "mercure")) {
        const hub = discoveredHub(link.href)?.hub;
        if (hub !== undefined) return found(hub, `Link header of ${appUrl}`, link.params["last-event-id"]);
    }
    for (const link of findHtmlLinks(body, base)) {
        const hub = link.rel.includes("mercure") ? discoveredHub(link.href)?.hub : undefined;
        if (hub !== undefined) return found(hub, '<link rel="mercure"> in the page', link.attributes["last-event-id"]);
    }
    const origin = new URL(base).origin;
    const wellKnown = new URL("/.well-known/mercure", origin);
    const metadata = await fetchMetadata(wellKnown, { fetch, timeout });
    const resource = metadata.kind === "found" ? metadata.validation.metadata?.resource : undefined;
    if (resource !== undefined) return found(new URL(resource), `protected-resource metadata of ${origin}`);
    // A hub refuses or accepts a subscription; an app answers 404 there (or its catch-all page, 200 HTML).
    const answer = await probe({ url: probeUrl(wellKnown), fetch, pageOrigin: null, timeout });
    if (answer.kind === "answered" && (answer.status === 400 || answer.status === 401 || /^text\/event-stream/i.test(answer.contentType ?? ""))) {
        return found(wellKnown, "/.well-known/mercure on the app's origin");
    }
    return {
        hub: null,
        result: {
            name: NAME,
            verdict: "fail",
            detail: `${appUrl} announces no hub, and none answers at ${wellKnown.href}`,
            fix: 'add a Link: <hub URL>; rel="mercure" header or a <link rel="mercure" href="…"> to the page, or serve the hub at /.well-known/mercure',
        },
    };
}

function found(hub: URL, source: string, cursor?: string): FoundHub {
    return { hub, cursor: cursor || null, result: { name: NAME, verdict: "pass", detail: `${hub.href} (${source})` } };
}
