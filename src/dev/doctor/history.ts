import { probe, probeUrl } from "../../discovery/probe";
import type { FetchLike } from "../../transport/platform";
import type { CheckResult } from "./checks";

/*
 * Whether what is broadcast while the browser moves between pages reaches the next page (issue 52): the page the app
 * renders carries the hub's last event id (`last-event-id` on its hub link, mercure-hub §5), and the hub replays from
 * it only if it keeps history. The doctor subscribes from the cursor the app page rendered and reads the hub's
 * `Mercure-Last-Event-ID` answer (mercure-hub §1.4): the cursor itself when the hub can replay from it, `earliest`
 * when it cannot (no history, as the reference hub's default local transport; or an event already evicted).
 */

const NAME = "history across pages";

/** Where docs/channels-and-events.md shows how to render the cursor and what the hub needs. */
const DOCS = "docs/channels-and-events.md, “Nothing lost between pages”";

/**
 * The report line: `cursor` is the `last-event-id` the app page rendered with its hub link (null when none), sent to
 * `hub` with `headers` (the credentials the doctor may send there, or null: anonymously).
 */
export async function checkHistory(hub: URL, cursor: string | null, headers: Record<string, string> | null, fetch: FetchLike, timeout: number): Promise<CheckResult> {
    if (cursor === null) {
        return {
            name: NAME,
            verdict: "warn",
            detail: "the page renders no last-event-id with its hub link: what is broadcast between its render and its scripts' join is lost",
            fix: `render the hub's last event id into the page's <link rel="mercure"> (${DOCS})`,
        };
    }
    if (cursor === "earliest") {
        return { name: NAME, verdict: "skip", detail: "the page's cursor is earliest (nothing was published yet): whether the hub keeps history shows once something was" };
    }
    // [spec] mercure-hub §1.2: a matcher nobody publishes on, and the cursor as `last_event_id`.
    const url = new URL(probeUrl(hub));
    url.searchParams.append("last_event_id", cursor);
    // Not followed through a redirect: the credentials go to the hub URL checked, nowhere else.
    const answer = await probe({ url: url.href, fetch: (target, init) => fetch(target, { ...init, redirect: "manual" }), pageOrigin: null, timeout, ...(headers === null ? {} : { headers }) });
    if (answer.kind !== "answered") {
        return { name: NAME, verdict: "skip", detail: `a subscription from the page's cursor got ${answer.kind === "unreachable" ? answer.reason : "no answer in time"}` };
    }
    const { status, lastEventId: replayedFrom } = answer;
    if (status !== 200 || replayedFrom === null) {
        const why = status !== 200 ? `HTTP ${status}` : "no Mercure-Last-Event-ID header";
        return { name: NAME, verdict: "skip", detail: `a subscription from the page's cursor got ${why}${headers === null ? " (pass --cookie or --token for a hub without anonymous access)" : ""}` };
    }
    if (replayedFrom === cursor) {
        return { name: NAME, verdict: "pass", detail: `the hub replays from the page's cursor (${cursor}): what is broadcast before the page joins still arrives` };
    }
    return {
        name: NAME,
        verdict: "warn",
        detail: `the hub answered Mercure-Last-Event-ID: ${replayedFrom} to the page's cursor ${cursor}: it keeps no history (or no longer has that event), so nothing broadcast before a page joins can be replayed`,
        fix: `keep history on the hub (the Go hub and FrankenPHP: a persistent transport, e.g. bolt), see ${DOCS}`,
    };
}
