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
 * writes the id of the last event it received for the next page (a page that never connected passes the previous
 * page's on).
 */
export function create(host: ConnectorHost): Capability {
    const options = host.hubOptions as { auth?: { headers: Record<string, unknown> }; resumeEnvironment?: ResumeEnvironment };
    // The page's session token as Echo read it at construction (`window.Laravel.csrfToken`, a string `csrfToken` option,
    // `<meta name="csrf-token">`, in that order) into `auth.headers`; a `csrfToken` function is not called (it may be async).
    return createResume(host, options.resumeEnvironment ?? pageEnvironment(options.auth?.headers["X-CSRF-TOKEN"]));
}

/** @internal Tests only (the simulation): one tab's page APIs, its page's session token, and where its `pagehide` is heard. */
export interface ResumeEnvironment {
    /** The tab's storage, history length, navigation type and clock. */
    readonly page: ResumePage;
    /** The page's session CSRF token, or null for none. */
    readonly token: unknown;
    /** Where `pagehide` is heard (`window`), or undefined outside a page. */
    readonly window: { addEventListener(type: "pagehide", listener: () => void): void } | undefined;
}

/** The page's own environment; `token`: the page's session CSRF token as Echo read it (anything but a string is none). */
function pageEnvironment(token: unknown): ResumeEnvironment {
    const scope = globalThis as { addEventListener?: (type: "pagehide", listener: () => void) => void };
    const window = typeof scope.addEventListener === "function" ? (scope as Required<typeof scope>) : undefined;
    return { page: browserPage(), token, window };
}

/** {@link create} in `env` (tests). */
export function createResume(host: ConnectorHost, env: ResumeEnvironment): Capability {
    const { page } = env;
    const session = sessionFingerprint(env.token);
    /** Whether the record was taken (at the first granted auth; once per connector). */
    let taken = false;
    env.window?.addEventListener("pagehide", () => {
        const hub = host.hub.platform?.hub.href;
        if (hub === undefined || session === null) return;
        // A page that never connected passes the previous page's cursor on (it received nothing after it); else, [spec]
        // mercure-hub §1.4: event ids are hub-wide cursors, and the next page's stream asks for what followed this one's.
        const cursor = taken ? host.dispatcher.cursor : takeResume(page, hub, session).cursor;
        if (cursor !== null) saveResume(page, hub, { cursor, at: page.now(), session });
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
