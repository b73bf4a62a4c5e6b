import type { BatchAuthOptions } from "../auth/batch-auth";
import { resolveAuthTimeout, resolveHubTimeouts } from "../auth/limits";
import type { Platform } from "../transport/platform";
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
    /** The `authTimeout` option. */
    readonly authTimeout?: unknown;
    /** The `hubTimeouts` option. */
    readonly hubTimeouts?: unknown;
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
 * it: nothing else authorized meanwhile). The connector's auth requests go through the engine from now on (a leave or a
 * public join is answered from that grant, issue 13), its stream stays its own until another client uses the engine or
 * this tab stops leading; then it moves to the engine's (`move()`).
 */
export function leadOnOwn(locator: { platform: Platform | null }, own: Platform, options: ShareOptions, lead: ClaimedLead, hooks: LeadHooks): void {
    const { granted, response } = hooks.auth;
    const sentAt = hooks.cookie.authorizedAt();
    const shared = sharePlatform(own, options, lead, {
        seed: granted === null || response === null || sentAt === null ? null : { names: [...granted], response, sentAt },
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
 * Tabs share when they would authorize identically: same origin, hub URL, auth endpoint and auth headers (the
 * link's name holds a {@link fingerprint} of the headers, never the headers). The leading tab's engine sends the
 * headers its link was named for, so a tab never has its channels authorized with another tab's credentials. A
 * connector whose headers changed (Echo wrote another bearer or CSRF token) moves to the link of its new headers
 * before its next auth request, leaving the old group. `release()` on the returned platform (the connector's
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
    if (scoped === undefined) links.set(env, (scoped = new Map()));
    const linkFor = (headers: Record<string, string>): TabLink => {
        const name = linkName(platform, headers);
        let link = scoped.get(name);
        if (link === undefined) {
            link = new TabLink(name, env, {
                hub: platform.hub,
                authEndpoint: platform.authEndpoint,
                EventSource: platform.EventSource,
                fetch: platform.fetch,
                // [spec] The headers this link is named for, whichever tab leads: its members authorize identically.
                headers: () => ({ ...headers }),
                timeout: () => resolveAuthTimeout(options.authTimeout),
                hubTimeouts: () => resolveHubTimeouts(options.hubTimeouts),
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
        authorize: (names, signal) => {
            // Credentials changed since the last request: leave the group (a `bye`) and join the new one's first.
            const now = linkFor(headers());
            if (now !== link) (link = now).adopt(client);
            return client.authorize(names, signal);
        },
        stale: () => client.stale(),
        whisperRoom: () => client.room,
        release: () => client.release(),
    };
}
