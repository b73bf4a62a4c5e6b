import { browserPage, saveResume, sessionFingerprint, takeResume, type ResumePage } from "../dispatch/page-resume";
import type { Capability } from "./capabilities";
import type { ConnectorHost } from "./connector-host";

/**
 * The `resumeAcrossPages` option (issue 52 part 2), loaded when the connector is created with it, beside what the first
 * join downloads and awaited with the other capabilities before the first stream opens (no round trip of its own).
 * At the first granted auth, the stream's hub known, it takes the record the tab's previous page left for that hub
 * (see `takeResume` in dispatch/page-resume.ts) and makes its cursor the first `last_event_id`, unless the page already
 * has one: a `last-event-id` rendered into the page wins. When the page leaves (`pagehide`, which also runs for a page
 * that enters the back/forward cache: the next page resumes from it, and the restored page keeps its own state), it
 * writes the id of the last event it received for the next page.
 */
export function create(host: ConnectorHost): Capability {
    return createResume(host, browserPage());
}

/** {@link create} on the page APIs `page` (tests). */
export function createResume(host: ConnectorHost, page: ResumePage): Capability {
    const options = host.hubOptions as { csrfToken?: unknown };
    const scope = globalThis as { Laravel?: { csrfToken?: unknown }; document?: Document; addEventListener?: (type: string, listener: () => void) => void };
    // The page's session token, in Echo's order (a function given as `csrfToken` is not called: it may be async).
    const rendered = [scope.Laravel?.csrfToken, options.csrfToken, scope.document?.querySelector?.('meta[name="csrf-token"]')?.getAttribute("content")];
    const session = sessionFingerprint(rendered.find((token) => typeof token === "string" && token !== ""));
    /** Whether the record was taken (at the first granted auth; once per connector). */
    let taken = false;
    scope.addEventListener?.("pagehide", () => {
        const cursor = host.dispatcher.cursor;
        const hub = host.hub.platform?.hub.href;
        // [spec] mercure-hub §1.4: event ids are hub-wide cursors; the next page's stream asks for what followed this one.
        if (cursor !== null && hub !== undefined && session !== null && taken) saveResume(page, hub, { cursor, at: page.now(), session });
    });
    return {
        authorized: ({ platform }) => {
            if (taken) return;
            taken = true;
            const { cursor, outcome } = takeResume(page, platform.hub.href, session);
            const rendered = host.dispatcher.cursor !== null;
            if (!rendered && cursor !== null) host.dispatcher.cursor = cursor;
            host.log?.("resume", { outcome: rendered && cursor !== null ? "rendered cursor" : outcome, cursor });
        },
    };
}
