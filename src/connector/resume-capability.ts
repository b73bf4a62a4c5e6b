import { ANSWER_STAMP_KEY, AUTH_STAMP_KEY, readStamp, type StampStorage } from "../auth/auth-stamp";
import { renewalDelay } from "../auth/cookie-refresh";
import { browserPage, ResumeLedger, saveResume, sessionFingerprint, takeResume, type CookieGrant, type ResumePage } from "../dispatch/page-resume";
import { channelKind } from "../topic/channel-kind";
import type { Platform } from "../transport/platform";
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
 * page's on), with the last events it received (see `ResumeRecord.delivered`), which the next page does not deliver again.
 *
 * Issue 53's navigation: the page that leaves also writes what the hub cookie holds, when its streams were its own (see
 * `ownStreams`): its last grant's channels, topic prefix, lifetime and auth stamp. The next page's first
 * batch then opens its stream beside its auth request instead of after it ({@link ResumeCapability.early}), when the
 * cookie still holds that grant and it covers the batch; the answer keeps the stream when it grants the same channels.
 */
export function create(host: ConnectorHost): ResumeCapability {
    const options = host.hubOptions as { auth?: { headers: Record<string, unknown> }; resumeEnvironment?: ResumeEnvironment; authStamps?: StampStorage };
    // The page's session token as Echo read it at construction (`window.Laravel.csrfToken`, a string `csrfToken` option,
    // `<meta name="csrf-token">`, in that order) into `auth.headers`; a `csrfToken` function is not called (it may be async).
    return createResume(host, options.resumeEnvironment ?? pageEnvironment(options.auth?.headers["X-CSRF-TOKEN"]), options.authStamps);
}

/** The resume capability: the hooks, and the navigation's early stream. */
export interface ResumeCapability extends Capability {
    /**
     * The page's first batch, `names` on `platform`, is being authorized (`request`, sent in `generation`). Once the tabs'
     * election has answered, while the answer has not come and the connector's streams are its own: where the tab's
     * previous page left a grant the hub cookie still holds (no auth request sent in the origin since, its renewal not
     * yet due) and it covers every channel of the batch (public and private ones only: a presence channel needs its
     * member in the new grant, an encrypted one its key), takes the record now (its cursor too) and opens the stream
     * beside the request, on the grant's topic prefix, its renewal due by that cookie's life. Its first event then costs
     * one round trip, not two. Its channels count as subscribed once the answer granted them (see `StreamEvents.open`);
     * an answer that grants the same channels keeps it, any other replaces it make-before-break on the new cookie.
     */
    early(names: readonly string[], platform: Platform, generation: number, request: Promise<unknown>): void;
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

/**
 * Whether the connector's streams on `platform` are its own `EventSource`s on the browser's hub cookie, authorized by its
 * own requests: not the tabs' engine's (a shared platform authorizes through it), nor on a hub token.
 */
const ownStreams = (platform: Platform | null): boolean => platform !== null && platform.authorize === undefined && platform.hubToken === null;

/** {@link create} in `env` (tests); `stamps`: where auth requests write their stamp (see `auth-stamp.ts`). */
export function createResume(host: ConnectorHost, env: ResumeEnvironment, stamps?: StampStorage): ResumeCapability {
    const { page } = env;
    const session = sessionFingerprint(env.token);
    /** The page's delivery ledger, listing its last deliveries for the next page. */
    const ledger = (host.dispatcher.ledger = new ResumeLedger(host.dispatcher.ledger));
    /** Whether the record was taken (at the first batch's early stream or first granted auth; once per connector). */
    let taken = false;
    /** What the hub cookie holds, as this page's last grant left it; null when that is not known. */
    const cookieGrant = (): CookieGrant | null => {
        const { granted, response } = host.auth;
        const sentAt = host.cookieRefresh.authorizedAt();
        const expiresAt = host.cookieRefresh.expiresAt();
        if (!ownStreams(host.hub.platform) || granted === null || response?.stamp === undefined || response.fromGrant || sentAt === null || expiresAt === null) return null;
        return { names: [...granted], prefix: response.topicPrefix, sentAt, expiresIn: (expiresAt - sentAt) / 1_000, stamp: response.stamp };
    };
    env.window?.addEventListener("pagehide", () => {
        const hub = host.hub.platform?.hub.href;
        if (hub === undefined || session === null) return;
        // A page that never connected passes the previous page's record on (it received nothing after its cursor, and
        // the stamp tells whether the cookie changed since); else, [spec] mercure-hub §1.4: event ids are hub-wide
        // cursors, and the next page's stream asks for what followed this one's.
        const previous = taken ? null : takeResume(page, hub, session);
        const cursor = previous === null ? host.dispatcher.cursor : previous.cursor;
        const grant = previous === null ? cookieGrant() : previous.grant;
        const delivered = previous === null ? ledger.newest() : previous.delivered;
        if (cursor !== null || grant !== null) saveResume(page, hub, { cursor, at: page.now(), session, delivered, ...(grant === null ? {} : { grant }) });
    });
    /** Take the record of `hub` (once) and resume from its cursor unless the page has one; its grant, or null. */
    const take = (hub: string): CookieGrant | null => {
        if (taken) return null;
        taken = true;
        const { cursor, grant, delivered, outcome } = takeResume(page, hub, session);
        const rendered = host.dispatcher.cursor !== null;
        if (!rendered && cursor !== null) {
            host.dispatcher.cursor = cursor;
            // What the previous page received comes once: a replay from an older cursor than its (the tabs' stream, on
            // another tab's) delivers it again, and the ledger drops it. A rendered cursor has none of it in the page.
            ledger.claimAll(delivered);
        }
        host.log?.("resume", { outcome: rendered && cursor !== null ? "rendered cursor" : outcome, cursor });
        return grant;
    };
    /** The grant the previous page left when the cookie still holds it and it covers `names` (see `early`), else null. */
    const covering = (names: readonly string[], platform: Platform): CookieGrant | null => {
        const grant = take(platform.hub.href);
        if (grant === null) return null;
        const now = page.now();
        const due = grant.sentAt + renewalDelay(grant.expiresIn, host.hubTimeouts());
        const covered = names.every((name) => {
            const kind = channelKind(name);
            return kind === "public" || (kind === "private" && grant.names.includes(name));
        });
        // No auth request in the origin since that grant's but this connector's first, in flight: the last stamp is its,
        // and it replaced the grant's (a second one of the connector's own: not its first batch); and no answer since the
        // grant's but this request's (another request, sent before it, may have been answered after the grant's).
        const [own, ...more] = host.auth.stamped;
        const answered = readStamp(stamps, ANSWER_STAMP_KEY) ?? grant.stamp;
        const replaced =
            own === undefined || more.length > 0 || own.replaced !== grant.stamp || readStamp(stamps, AUTH_STAMP_KEY) !== own.stamp || (answered !== grant.stamp && answered !== own.stamp);
        const why = replaced ? "cookie replaced" : !(now >= grant.sentAt && now < due) ? "cookie due" : !covered ? "not covered" : null;
        host.log?.("early stream", why === null ? { channels: names } : { skipped: why });
        return why === null ? grant : null;
    };
    return {
        authorized: ({ platform }) => void take(platform.hub.href),
        early: (names, platform, generation, request) => {
            let answered = false;
            void request.then(() => (answered = true));
            void Promise.resolve(host.hub.election()).then(() => {
                const late = answered || generation !== host.generation() || host.streams.latest() !== null || host.hub.platform !== platform;
                if (late || !ownStreams(platform)) return;
                host.settle(() => {
                    const grant = covering(names, platform);
                    if (grant === null) return;
                    host.cookieRefresh.authorized(grant.sentAt, grant.expiresIn);
                    host.openStream([...names], grant.prefix, platform);
                });
            });
        },
    };
}
