import type { BatchAuth } from "../auth/batch-auth";
import { identifies } from "../auth/credential-options";
import type { CookieRefreshTimer } from "../auth/cookie-refresh";
import type { HubTokenOption } from "../auth/hub-token";
import { lazyChunk, type LazyChunk } from "../lazy-chunk";
import { hasHubToken, pageHref, type Platform } from "../transport/platform";
import type { BroadcastChannelLike, LockManagerLike } from "./tab-link";

/*
 * The only code of tab sharing in the core: whether sharing applies, two loaders, and what a page needs to become the
 * leader before they have loaded (the link's name and {@link claimLead}) and to hear another tab meanwhile
 * ({@link listenForTabs}). The share client (the election's queue, the buses, the virtual `EventSource`s:
 * `./share-platform`) is a chunk loaded once a connector knows it will share with another tab (or another connector of
 * its page), and the hub engine (`./leadership`) beside it: a tab that leads alone loads neither (issue 53).
 */

/** What the lazily loaded share client chunk offers: `./share-platform`'s exports. */
export type ShareModule = typeof import("./share-platform");

/** What the lazily loaded engine chunk offers: `./leadership`'s exports (the engine with it). */
export type EngineModule = typeof import("./leadership");

/** Load the hub engine on first use, once per page (a separate chunk: only the leading tab needs it). */
export const loadEngine: () => Promise<EngineModule> = lazyChunk(() => import("./leadership"));

/**
 * Load the share client on first use, once per page (a separate chunk: a page whose tabs never share never needs it),
 * and prefetch the engine chunk beside it: a lone tab leads at once and needs the engine next, so it downloads in
 * parallel instead of after (a failed prefetch is the leading tab's to retry and report: see `TabLink`). Both import
 * the tabs' protocol, a chunk of its own: it is asked for at the same time too, not once one of them has arrived.
 */
export const loadShare: LazyChunk<ShareModule> = lazyChunk(() => {
    import("./protocol").catch(() => undefined);
    loadEngine().catch(() => undefined);
    return import("./share-platform");
});

/** The connector options that decide whether its tabs share one hub connection. */
export interface ShareChoice {
    /** The `shareAcrossTabs` option (default true). */
    readonly shareAcrossTabs?: boolean;
    /** The `hubToken` option: with one, each tab sends its own header (see `sharePlatform`). */
    readonly hubToken?: HubTokenOption | null;
    /** @internal Tests only: the browser APIs to share with instead of the page's. */
    readonly shareEnvironment?: object;
}

/**
 * Whether a connector with these options shares its hub connection with the other tabs, so that it needs the share
 * client chunk: not with `shareAcrossTabs: false` or a `hubToken`, nor where the page lacks Web Locks (not a secure
 * context), `BroadcastChannel` or a `window` (outside a browser).
 */
export function sharingApplies(options: ShareChoice): boolean {
    if (options.shareAcrossTabs === false || hasHubToken(options.hubToken)) return false;
    return options.shareEnvironment !== undefined || pageCanShare();
}

/** Whether the page has what sharing needs: Web Locks (happy-dom and some embedded browsers have `navigator.locks` null), `BroadcastChannel`, `window`. */
export function pageCanShare(): boolean {
    const scope = globalThis as { navigator?: { locks?: { request?: unknown } | null }; BroadcastChannel?: unknown; window?: unknown };
    return typeof scope.navigator?.locks?.request === "function" && typeof scope.BroadcastChannel === "function" && scope.window != null;
}

/**
 * The name of the tab link (its Web Lock's and its bus's) of the connectors that authorize as the same user: same
 * origin, hub URL, auth endpoint and identifying auth headers (a {@link fingerprint} of them, never the headers
 * themselves). The protocol's version ("2": per-tab inboxes) is in it: tabs of an older build share among themselves.
 */
export function linkName(platform: Pick<Platform, "hub" | "authEndpoint">, headers: Record<string, string>): string {
    const base = pageHref() ?? platform.hub.href;
    return `laravel-echo-mercure 2 ${platform.hub.href} ${new URL(platform.authEndpoint, base).href} ${fingerprint(headers)}`;
}

/**
 * A fingerprint of the identifying auth headers (see {@link identifies}; names case-insensitive, order-free): two
 * 32-bit hashes in base 36, so that tabs of other users are told apart without any credential in a lock's or a bus's
 * name. It is only ever in those names, which the browser keeps in memory and shows only to scripts of the origin
 * (`navigator.locks.query()`), which can read the headers themselves; it is never written to storage (issue 50: see
 * {@link markLead}), where a weak value could be recovered from it by brute force, nor sent anywhere.
 */
export function fingerprint(headers: Record<string, string>): string {
    const entries = Object.entries(headers).filter(([name]) => identifies(name));
    const text = JSON.stringify(entries.map(([name, value]) => [name.toLowerCase(), value]).sort());
    let a = 0x811c9dc5;
    let b = text.length;
    for (let at = 0; at < text.length; at++) {
        a = Math.imul(a ^ text.charCodeAt(at), 0x01000193);
        b = Math.imul(b ^ text.charCodeAt(at), 0x5bd1e995) ^ (b >>> 13);
    }
    return (a >>> 0).toString(36) + "." + (b >>> 0).toString(36);
}

/**
 * The lead of a tab link, won by {@link claimLead} before the share client loaded: this tab holds the link's lock, so
 * no other tab authorizes for the link's hub until it is released (the cookie stays this tab's to set). The tab link,
 * once loaded, takes it over (see `TabLink`).
 */
export interface ClaimedLead {
    /** The link's name: the lock's. */
    readonly name: string;
    /** Whether another connector of the page claimed the same link too: then both go through the share client (one request). */
    crowded: boolean;
    /** Release the lock. */
    readonly release: () => void;
    /** Settles once the lock is released; rejects when another tab stole it (a frozen leader's lock is stolen). */
    readonly ended: Promise<unknown>;
}

/** The part of `localStorage` the lead mark uses (see {@link markLead}). */
export interface MarkStorage {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
    /** How many keys there are (to find the marks of earlier builds: see `sharePlatform`). */
    readonly length?: number;
    /** The key at `index`. */
    key?(index: number): string | null;
}

/** This page's lead mark: tells its own from another tab's. */
const PAGE_MARK = Math.random().toString(36).slice(2);

/**
 * Mark the lead of link `name` in the storage of `env` (the tabs' test environment), else in the page's `localStorage`,
 * which every tab of the origin reads synchronously: a tab that holds the link's lock marks it (`held` true), and
 * unmarks it when it lets go (false); a tab about to claim the lock marks it only if no tab did (null). Returns whether
 * the link was unmarked before (no tab led, as far as the storage knows); storage that throws (blocked, full) or is
 * missing: false, as if marked. See the hoped claim in discovery/hub-location.ts.
 *
 * Issue 50: the mark stays on disk when a tab crashes, so nothing of the headers is in it: its key is the link's name
 * without the fingerprint (the hub and the auth endpoint), and its value the leading page's random mark. Tabs of two
 * users in one browser (an "impersonate" tab) share the key: one may wait for its lock's answer instead of hoping (as
 * where a crashed tab left its mark), or hope where the other's lead unmarked it, and then follow the tab that leads;
 * the mark is a hint, which nothing else depends on.
 */
export function markLead(env: { readonly storage?: MarkStorage } | undefined, name: string, held: boolean | null): boolean {
    try {
        const storage = env ? env.storage! : localStorage;
        const key = name.slice(0, name.lastIndexOf(" ")) + " lead";
        const mark = storage.getItem(key);
        if (held ?? mark === null) storage.setItem(key, PAGE_MARK);
        else if (held === false && mark === PAGE_MARK) storage.removeItem(key);
        return mark === null;
    } catch {
        return false;
    }
}

/**
 * Take the lock of link `name` if no tab holds it or waits for it (`ifAvailable`): resolves with the lead, or with
 * null when another tab leads (or the request is refused: an opaque origin). A page's first join then needs neither
 * the share client nor the election to authorize and open its stream: the one leading tab authorizes for every tab.
 * Won, the lead is marked until it is released (see {@link markLead}); lost to another tab, that tab is told at once,
 * with the channels `names()` gives then (see {@link ringTabs}).
 */
export function claimLead(locks: LockManagerLike, name: string, env?: BusEnvironment & { readonly storage?: MarkStorage }, names: () => readonly string[] = () => []): Promise<ClaimedLead | null> {
    const claims = pageClaims(env);
    const first = claims.get(name);
    if (first !== undefined) {
        first.lead.crowded = true;
        // After the first claim has settled, so that the page's connectors keep their order.
        return first.settled.then(() => null);
    }
    let release = (): void => undefined;
    const held = new Promise<void>(
        (done) =>
            (release = () => {
                // The claim is over: the page's next claim of the link is a first one again (`connect()` after `disconnect()`).
                if (claims.get(name)?.lead === lead) claims.delete(name);
                done();
            }),
    );
    let lead!: ClaimedLead;
    const settled = new Promise<ClaimedLead | null>((resolve) => {
        // A request that throws (an opaque origin) or rejects before its callback: not claimed.
        const ended = Promise.resolve().then(() =>
            locks.request(name, { ifAvailable: true }, (lock) => {
                resolve(lock === null ? null : lead);
                // Another tab leads: it loads its share client now, beside this page's (issue 53: see `ringTabs`).
                if (lock === null) return void ringTabs(env, name, names());
                markLead(env, name, true);
                return held.then(() => void markLead(env, name, false));
            }),
        );
        lead = { name, crowded: false, release, ended };
        ended.catch(() => resolve(null));
    });
    claims.set(name, { lead, settled });
    return settled;
}

/** A page's first claim of a link (see {@link pageClaims}). */
type Claim = { readonly lead: ClaimedLead; readonly settled: Promise<unknown> };

/**
 * The first claim of each link a page made, until released: a later one finds the link crowded (see
 * {@link ClaimedLead.crowded}). The page is the one of `env` (the tabs' test environment: each is a page, as each
 * environment has its own tab links in share-platform.ts), else this page.
 */
function pageClaims(env: object | undefined): Map<string, Claim> {
    const page = env ?? claimsByPage;
    let claims = claimsByPage.get(page);
    if (claims === undefined) claimsByPage.set(page, (claims = new Map()));
    return claims;
}

/** Every page's claims (see {@link pageClaims}): one page in a browser, one per tabs' environment in tests. */
const claimsByPage = new WeakMap<object, Map<string, Claim>>();

/** Whether another connector of the page (of `env`: see {@link pageClaims}) claimed link `name` after its first claim (see {@link ClaimedLead.crowded}). */
export function crowded(name: string, env?: object): boolean {
    return pageClaims(env).get(name)?.lead.crowded === true;
}

/** What a connector lends for the tabs' lead it claims before the share client has loaded (see `HubLocator`). */
export interface LeadHooks {
    /**
     * What the connector's last auth request granted (the engine starts from it: see `leadOnOwn` in share-platform.ts),
     * and its batch request (another tab's channels authorized with its own: see `HubLocator`'s `#direct`).
     */
    readonly auth: Pick<BatchAuth, "granted" | "response" | "request">;
    /** The channels the connector has joined (another tab's ring names them: see {@link ringTabs}). */
    names(): readonly string[];
    /** When that request was sent (see `CookieRefreshTimer.authorizedAt`). */
    readonly cookie: Pick<CookieRefreshTimer, "authorizedAt">;
    /**
     * The platform changed: open the connector's stream again through it, whatever its state (one reconnecting by
     * itself is closed at once: it would reconnect on the old platform; one lost is opened again by the next retry,
     * through the new platform too).
     */
    move(): void;
    /** Null when no refresh runs; else a promise that resolves once none does (until then an auth request of its own may be in flight). */
    running(): Promise<void> | null;
}

/** What {@link listenForTabs} and {@link ringTabs} need of the page: its `BroadcastChannel` and where `freeze`/`resume` are heard. */
export interface BusEnvironment {
    readonly BroadcastChannel: new (name: string) => BroadcastChannelLike;
    readonly lifecycle?: { addEventListener(type: "freeze" | "resume", listener: () => void): void; removeEventListener?(type: "freeze" | "resume", listener: () => void): void } | null;
}

/** The page's own {@link BusEnvironment}, unless `env` (the tabs' test environment) is given. */
function busEnvironment(env: BusEnvironment | undefined): BusEnvironment {
    return env ?? { BroadcastChannel, lifecycle: (globalThis as { document?: BusEnvironment["lifecycle"] }).document };
}

/**
 * Issue 53: while a connector leads its tabs on its own, before the share client has loaded, listen on the link's bus
 * (`name`) for another tab. A lone tab (most pages) then never downloads the share client and the engine: they load
 * when another tab's connector pings the link ({@link ringTabs}, and its tab link's pings), and a tab that waits for
 * them is told to `wait` (tab-link.ts) instead of stealing the lock. At each ping, unless this page is frozen (it
 * would make the other tab wait for a download that does not run before it resumes: that tab steals the lock after its
 * ping timeout, as from a frozen leader), `heard()` says whether the share client is downloading (answer `wait`), has
 * failed to (stay silent: the other tab steals the lock after its timeout), or that this tab no longer leads on its own
 * (null: stop listening). `heard` gets the channels the other tab named in its ring (see {@link ringTabs}; none from
 * a tab link's own ping). Returns what stops listening.
 */
export function listenForTabs(env: BusEnvironment | undefined, name: string, heard: (names: readonly string[]) => boolean | null): () => void {
    const page = busEnvironment(env);
    let frozen = false;
    const freeze = (): void => void (frozen = true);
    const resume = (): void => void (frozen = false);
    page.lifecycle?.addEventListener("freeze", freeze);
    page.lifecycle?.addEventListener("resume", resume);
    const bus = new page.BroadcastChannel(name);
    const inbox = new page.BroadcastChannel(loneInbox(name));
    const stop = (): void => {
        bus.onmessage = inbox.onmessage = null;
        bus.close();
        inbox.close();
        page.lifecycle?.removeEventListener?.("freeze", freeze);
        page.lifecycle?.removeEventListener?.("resume", resume);
    };
    bus.onmessage = inbox.onmessage = (event) => {
        const message = event.data as { t?: unknown; n?: unknown } | null;
        if (message?.t !== "ping" || frozen) return;
        // A stray or forged ping names what it likes: only strings are kept (the union it may ask for is cut at 100 names).
        const names = Array.isArray(message.n) ? message.n.filter((each): each is string => typeof each === "string") : [];
        const loading = heard(names);
        if (loading === null) stop();
        // [spec] A tab link's `wait` (protocol.ts): its epoch is no engine's, and is never followed.
        else if (loading) bus.postMessage({ t: "wait", e: "loading" });
    };
    return stop;
}

/**
 * Issue 53: tell a tab that leads link `name` on its own (see {@link listenForTabs}) that this tab will follow it, as
 * soon as this tab knows, before its own share client has loaded: both tabs then download it at the same time, not
 * one after the other, and the leading tab authorizes this tab's channels `names` (if any, sent to its inbox alone)
 * beside its own meanwhile, so that its engine answers this tab's first auth request from that grant. A `ping` with no
 * client (a tab link's own after a `pageshow`): an engine answers it with `pong`.
 */
export function ringTabs(env: BusEnvironment | undefined, name: string, names: readonly string[] = []): void {
    const page = busEnvironment(env);
    const bus = new page.BroadcastChannel(name);
    bus.postMessage({ t: "ping", c: "", k: "" });
    bus.close();
    if (names.length === 0) return;
    // The channels go to the leading tab alone: the link's bus is every tab's, and a tab never hears of channels it did not join.
    const inbox = new page.BroadcastChannel(loneInbox(name));
    inbox.postMessage({ t: "ping", c: "", k: "", n: [...names] });
    inbox.close();
}

/**
 * The inbox of the tab that leads link `name` on its own (see {@link listenForTabs}): named as an engine's inbox is
 * (`inboxName` in protocol.ts), since that tab authorizes for every tab as an engine does; no engine's epoch is "lone".
 */
function loneInbox(name: string): string {
    return `${name} inbox engine lone`;
}
