import type { StampStorage } from "../auth/auth-stamp";
import type { BatchAuthOptions } from "../auth/batch-auth";
import { dynamicCredentials, identifies, type CredentialOptions } from "../auth/credential-options";
import { resolveAuthTimeout, resolveHubTimeouts } from "../auth/limits";
import { loadCredentials } from "../auth/load-credentials";
import type { Platform } from "../transport/platform";
import type { EngineSeed } from "./engine";
import { linkName, pageCanShare, type ClaimedLead, type LeadHooks, type MarkStorage } from "./load";
import { TabLink, type DirectLead, type ShareEnvironment } from "./tab-link";

export type { DirectLead, ShareEnvironment } from "./tab-link";

/** The connector options sharing reads. */
export interface ShareOptions {
    /** The `shareAcrossTabs` option (default true). */
    readonly shareAcrossTabs?: boolean;
    /** @internal Tests only: the browser APIs to share with instead of the page's. */
    readonly shareEnvironment?: ShareEnvironment;
    /** The auth request's headers (the engine of a leading tab sends them). */
    readonly auth?: BatchAuthOptions["auth"];
    /** The `csrfToken` option (the engine of a leading tab reads the page's CSRF token at each request). */
    readonly csrfToken?: unknown;
    /** The `bearerToken` option. */
    readonly bearerToken?: unknown;
    /** The `authTimeout` option. */
    readonly authTimeout?: unknown;
    /** The `hubTimeouts` option. */
    readonly hubTimeouts?: unknown;
    /** @internal Tests only: where auth requests write their stamp (see `auth-stamp.ts`) instead of the page's `localStorage`. */
    readonly authStamps?: StampStorage;
}

/** Every tab link of this page by environment and scope: one per hub and auth endpoint. */
const links = new WeakMap<object, Map<string, TabLink>>();

/** The page's environment once found (one object, so that the page's connectors share their tab links), or null. */
let page: ShareEnvironment | null | undefined;

/**
 * The page's own Web Locks, `BroadcastChannel`, `window`, `document` and a `MessageChannel` task hop, or null where one is missing
 * (not a secure context, not a browser: see {@link pageCanShare}).
 */
function pageEnvironment(): ShareEnvironment | null {
    if (page !== undefined) return page;
    if (!pageCanShare()) return (page = null);
    const scope = globalThis as unknown as {
        navigator: { locks: ShareEnvironment["locks"] };
        BroadcastChannel: ShareEnvironment["BroadcastChannel"];
        MessageChannel?: typeof MessageChannel;
        window: ShareEnvironment["page"];
        document?: ShareEnvironment["lifecycle"];
    };
    const hop = typeof scope.MessageChannel === "function" ? messageHop(scope.MessageChannel) : undefined;
    return (page = {
        locks: scope.navigator.locks,
        BroadcastChannel: scope.BroadcastChannel,
        page: scope.window,
        lifecycle: scope.document ?? null,
        // Read where it is used (`markLead` catches what reading it throws where storage is blocked).
        get storage(): MarkStorage {
            return localStorage;
        },
        ...(hop === undefined ? {} : { hop }),
    });
}

/**
 * A task hop through a `MessageChannel`: a posted message runs as a task of its own, soon, and unlike a timer it is
 * not throttled in a hidden tab (browser-facts: hidden tabs' timers wake at most once a second), where the
 * leading tab often is.
 */
function messageHop(Channel: typeof MessageChannel): (task: () => void) => void {
    const channel = new Channel();
    const tasks: Array<() => void> = [];
    channel.port1.onmessage = () => tasks.shift()?.();
    return (task) => {
        tasks.push(task);
        channel.port2.postMessage(null);
    };
}

/**
 * Take over a connector that won the tabs' lead (`claimLead`) before this chunk loaded, and connects on its own (see
 * `HubLocator`): the link leads with that lock, and its engine starts from the connector's last auth (the cookie holds
 * it: nothing else authorized meanwhile), or from `widened`, the union it authorized for another tab too while this
 * chunk downloaded (issue 53). The connector's auth requests go through the engine from now on (a leave or a
 * public join is answered from that grant, issue 13), its stream stays its own until another client uses the engine or
 * this tab stops leading; then it moves to the engine's (`move()`).
 */
export function leadOnOwn(locator: { platform: Platform | null }, own: Platform, options: ShareOptions, lead: ClaimedLead, hooks: LeadHooks, widened: EngineSeed | null = null): void {
    const { granted, response } = hooks.auth;
    const sentAt = hooks.cookie.authorizedAt();
    const shared = sharePlatform(own, options, lead, {
        seed: widened ?? (granted === null || response === null || sentAt === null ? null : { names: [...granted], response, sentAt }),
        upgrade: () => {
            if (locator.platform !== mixed) return;
            locator.platform = shared;
            hooks.move();
        },
    });
    const mixed: Platform = { ...shared, EventSource: own.EventSource };
    locator.platform = mixed;
}

/**
 * The platform a connector runs on when its tabs share one hub connection: `platform` with its auth request
 * and its `EventSource`s going to the leading tab's engine (see `tab-link.ts`), or `platform` itself when
 * sharing is off (`shareAcrossTabs: false`), the hub is reached with a `hubToken` (header auth), or impossible (no Web Locks: not a secure context such as
 * `http://app.test`; no `BroadcastChannel`; outside a browser): then each connector connects on its own, as
 * before sharing existed, and the browser's one hub cookie holds the grants of whichever tab authorized last.
 *
 * Tabs share when they authorize as the same user: same origin, hub URL, auth endpoint and identifying auth headers (the
 * link's name holds a {@link fingerprint} of them, never the headers; a CSRF token identifies no one: see `identifies`).
 * The leading tab's engine sends the identifying headers its link was named for, so a tab never has its channels
 * authorized with another user's credentials, and the CSRF token its own page would send now (see
 * {@link engineHeaders}). A connector whose identifying headers changed (Echo wrote another bearer token) moves to the
 * link of its new headers before its next auth request, leaving the old group; a link that no client of this tab uses
 * any more lets its lock and buses go (see `TabLink.vacate`). `release()` on the returned platform (the connector's
 * `disconnect()`) makes the connector leave the union; the tab keeps leading.
 */
export function sharePlatform(platform: Platform, options: ShareOptions, lead: ClaimedLead | null = null, direct?: DirectLead): Platform {
    // With a hub token each tab's streams carry their own Authorization header: no browser-wide cookie to
    // keep covering every tab, and the leading tab's token source would have to serve channels it never asked for.
    if (options.shareAcrossTabs === false || platform.hubToken !== null) return platform;
    const env = options.shareEnvironment ?? pageEnvironment();
    if (env === null) {
        lead?.release();
        return platform;
    }
    let scoped = links.get(env);
    if (scoped === undefined) {
        links.set(env, (scoped = new Map()));
        forgetOldMarks(env);
    }
    const linkFor = (headers: Record<string, string>): TabLink => {
        const name = linkName(platform, headers);
        for (const [other, left] of scoped) if (left.closed) scoped.delete(other); // Vacated links: nothing of them is kept.
        let link = scoped.get(name);
        if (link === undefined) {
            const identity = only(headers, true);
            link = new TabLink(name, env, {
                hub: platform.hub,
                authEndpoint: platform.authEndpoint,
                EventSource: platform.EventSource,
                fetch: platform.fetch,
                // [spec] The identifying headers this link is named for, whichever tab leads: its members are one user.
                headers: (refused) => engineHeaders(options, identity, refused),
                timeout: () => resolveAuthTimeout(options.authTimeout),
                hubTimeouts: () => resolveHubTimeouts(options.hubTimeouts),
                stamps: options.authStamps,
            });
            scoped.set(name, link);
        }
        return link;
    };
    const headers = (): Record<string, string> => ({ ...options.auth?.headers });
    let link = linkFor(headers());
    const client = link.client();
    if (direct !== undefined) client.announce(direct.seed?.names ?? []);
    // A lead the core claimed for this link: it leads with it (a lead of other credentials is released, and a connector
    // that connected on its own moves to the engine).
    if (lead !== null && !link.takeLead(lead, direct && { ...direct, client: client.id })) {
        lead.release();
        if (direct !== undefined) queueMicrotask(() => direct.upgrade());
    }
    return {
        ...platform,
        EventSource: client.EventSource,
        whisperEventSource: client.whisperEventSource,
        authorize: (names, signal, probe) => {
            // Credentials changed since the last request: leave the group (a `bye`) and join the new one's first.
            const now = linkFor(headers());
            if (now !== link) {
                const left = link;
                (link = now).adopt(client);
                left.vacate();
            }
            return client.authorize(names, signal, probe);
        },
        stale: () => client.stale(),
        whisperRoom: () => client.room,
        release: () => client.release(),
    };
}

/** The entries of `headers` that identify the user (`identifying`), or the others (the CSRF token's: see `identifies`). */
function only(headers: Record<string, string>, identifying: boolean): Record<string, string> {
    return Object.fromEntries(Object.entries(headers).filter(([name]) => identifies(name) === identifying));
}

/**
 * The headers of the engine's next auth request: the identifying ones its link is named for (`identity`), and the CSRF
 * token as the leading tab's own connector would send it now (`options`: the connector that made the link), read at
 * each request: the page's token (`window.Laravel.csrfToken`, the `csrfToken` option, the meta tag), else the
 * `XSRF-TOKEN` cookie; after a 419 (`refused`), the cookie first. The cookie is the origin's, the same in every tab and
 * renewed by every response Laravel sends, so the engine sends a token valid for the session whichever tab's request
 * it serves; a meta tag may be older than the session's token (the page was rendered before a login), which the 419
 * and the cookie repair. No tab's token ever crosses the tabs' bus. Rejects when a credential function throws.
 */
async function engineHeaders(options: ShareOptions, identity: Record<string, string>, refused: boolean): Promise<Record<string, string>> {
    const page = options as CredentialOptions;
    if (page.auth === undefined) return { ...identity };
    const current = dynamicCredentials(page, refused) ? await (await loadCredentials()).credentialHeaders(page, refused) : (page.auth.headers as Record<string, string>);
    return { ...identity, ...only(current, false) };
}

/**
 * Remove the lead marks that builds before issue 50 left in `localStorage` (a tab that crashed while it led): their key
 * held the fingerprint of the auth headers, from which a weak value could be recovered. Once per page and environment.
 */
function forgetOldMarks(env: ShareEnvironment): void {
    try {
        const storage = env.storage!;
        const keys = Array.from({ length: storage.length ?? 0 }, (_, at) => storage.key?.(at));
        for (const key of keys) if (key != null && /^laravel-echo-mercure 2 \S+ \S+ \S+ lead$/.test(key)) storage.removeItem(key);
    } catch {
        // Storage blocked, or none: nothing was marked there either.
    }
}
