import { MAX_CHANNELS } from "../auth/limits";
import { loadFailed } from "../error-messages";
import type { MercureError } from "../errors";
import { claimLead, crowded, linkName, listenForTabs, loadShare, markLead, sharingApplies, type ClaimedLead, type LeadHooks, type ShareModule } from "../share/load";
import type { EngineSeed } from "../share/engine";
import type { ShareEnvironment } from "../share/share-platform";
import { channelKind } from "../topic/channel-kind";
import { streamBudget } from "../transport/connection-budget";
import { hasHubToken, loadSetup, needsAdapter, needsSetup, pagePlatform, type Platform, type PlatformOptions } from "../transport/platform";
import { loadDiscovery } from "./load";
import { renderedCursor } from "./rendered-cursor";

/*
 * Where a connector's hub is (mercure-hub §5): the `host` option, else (in the lazily loaded discovery chunk:
 * see `findHub`) a `<link rel="mercure">` in the page's `<head>`, else the `Link` header of the `discover` URL, else
 * `/.well-known/mercure` on the page origin. With `host` given, nothing of the discovery code is loaded.
 */

/** How the connector found its hub. */
export type HubSource = "option" | "link-element" | "link-header" | "well-known";

/** The hub the connector uses, as found. */
export interface HubLocation {
    /** The `host` to resolve the platform with; null for the default (`/.well-known/mercure`, or `missing_platform` outside a browser). */
    readonly host: string | null;
    /**
     * The link's `last-event-id` (with `host`, the page's `<head>` link to that hub: see {@link renderedCursor}): the first
     * `last_event_id`, so that nothing published since the page was rendered is missed.
     */
    readonly lastEventId?: string | undefined;
    /** How it was found. */
    readonly source: HubSource;
}

/** What a channel waiting for a chunk that did not download is told comes next (see {@link loadFailed}). */
const RETRIED = "the channel is not connected, and the retry with backoff downloads it again";

/**
 * Why the platform cannot be resolved yet: a `MercureError` (the hub's discovery: see `connectorHub` in discover.ts),
 * or, for a chunk that did not download, each joined channel's `load_failed`.
 */
export type LocateFailure = MercureError | ((name: string) => MercureError);

/** The connector options that say where the hub is and how to reach it: the platform's, and how to find and share it. */
export interface HubOptions extends PlatformOptions {
    /** The `discover` option. */
    readonly discover?: string | null;
    /** The `heartbeatTimeout` option (`event-source-polyfill`'s). */
    readonly heartbeatTimeout?: number;
    /** The `shareAcrossTabs` option (default true): see `sharePlatform` (share/share-platform.ts). */
    readonly shareAcrossTabs?: boolean;
    /** @internal Tests only: the browser APIs sharing uses, instead of the page's. */
    readonly shareEnvironment?: ShareEnvironment;
    /** The `auth` option: its headers name the tabs' link (see `linkName`). */
    readonly auth?: { readonly headers: Record<string, string> };
}

/**
 * The hub of one connector: where it is (the `host` option, else the discovery chunk's `connectorHub`) and the platform
 * resolved for it at first use. {@link HubLocator.forget} (on `disconnect()`) drops both: the next
 * connection looks the hub up again.
 */
export class HubLocator {
    /** Where the hub is (the `host` option, the page's `<link>`, the `discover` URL), or null until looked up. */
    #location: HubLocation | null = null;

    /** The platform resolved for the located hub, or null until {@link HubLocator.resolve}. */
    platform: Platform | null = null;

    /** Whether the located hub's `last-event-id` was offered as the first cursor (once per connector). */
    #cursorOffered = false;

    /** The claim of the tabs' lead in flight or settled (see `#claimLead`), or null. */
    #claim: Promise<void> | null = null;

    /** The lead the claim won, until the share client takes it over (or it is stolen first), or null. */
    #lead: ClaimedLead | null = null;

    /**
     * The link's name while its claim is hoped won (issue 31): no tab marked the lead (see `markLead`), so the first join
     * authorizes at once instead of after the lock's answer, and opens its stream once the answer came
     * ({@link HubLocator.election}); else null.
     */
    #hope: string | null = null;

    /** The tabs' test environment of the hoped claim (its page's claims: see `crowded`), or undefined: this page. */
    #hopeEnv: object | undefined = undefined;

    /** A hoped claim was lost after this connector resolved its own platform: the next auth request must reach Laravel (see `#claimLead`). */
    #stale = false;

    /** While this connector leads alone on its own platform (see `#direct`): starts its share client's download, unless it failed (null). */
    #share: (() => Promise<void> | null) | null = null;

    /** What the connector lends for a lead it won. */
    readonly #hooks: LeadHooks;

    /** The hub locator of a connector that lends it `hooks` (for a tabs' lead it wins: see `#direct`). */
    constructor(hooks: LeadHooks) {
        this.#hooks = hooks;
    }

    /**
     * Whether the platform can be resolved without waiting: the hub is known (the `host` option), and every chunk the
     * options need is loaded (the platform set-up, the share client); false: call
     * {@link HubLocator.prepare}.
     */
    locate(options: HubOptions): boolean {
        // [spec] mercure-hub §5: the page's `<head>` link to the hub `host` names may carry the cursor it was rendered at.
        if (options.host) this.#location ??= { host: options.host, source: "option", lastEventId: renderedCursor(options.host) };
        return this.#location !== null && (this.#alone() || !this.#needs(options));
    }

    /**
     * What {@link HubLocator.locate} found missing: [spec] mercure-hub §5: the hub of a connector without `host`
     * (the discovery chunk's `connectorHub`), while the chunks load. True when ready; the error when not (a `MercureError`: `status`
     * set when the `discover` URL answered without a link, else retried with backoff; a function giving each channel its
     * `load_failed`: retried with backoff); false when `signal` aborted first.
     */
    async prepare(options: HubOptions, signal: AbortSignal, log: ((step: string, detail: object) => void) | null): Promise<boolean | LocateFailure> {
        if (this.#location === null) {
            void this.#load(options); // The chunks download while the hub is looked up, not after.
            log?.("discover", { url: options.discover });
            // Everything the chunk gives back that is not a location is a MercureError (see connectorHub).
            const found = await loadDiscovery().then(
                (chunk) => chunk.connectorHub(options.discover, options.fetch, signal),
                (error: unknown): LocateFailure => (name) => loadFailed(name, "hub discovery", error, RETRIED + " (or set the connector's `host`)"),
            );
            if (signal.aborted) return false;
            if (!("source" in found)) return found;
            this.#location = found;
        }
        const failure = await this.#ready(options);
        return signal.aborted ? false : (failure ?? true);
    }

    /**
     * Resolve the platform now if the hub is known (the `host` option), else as soon as the chunks its options need
     * have loaded, while `current()` holds: the connector's construction, so that a join finds the chunks loaded or
     * loading, and, when tabs share one connection, the election under way. Nothing is reported here: a failure shows
     * again at the first join.
     */
    resolveEarly(options: HubOptions, cursor: { cursor: string | null }, log: ((step: string, detail: object) => void) | null, current: () => boolean): void {
        const quietly = (): void => {
            if (this.platform !== null || !current()) return;
            try {
                this.resolve(options, cursor, log);
            } catch {
                // Reported on the channels by the first batch's own resolution.
            }
        };
        if (this.locate(options)) quietly();
        else if (this.#location !== null) void this.#ready(options).then((failure) => failure === null && quietly());
    }

    /**
     * Claim the tabs' lead where it applies (see `#claimLead`), and load the chunks `options` need (see `#load`) unless
     * the claim is won alone: a tab that wins it authorizes and opens its stream itself, and downloads the share
     * client after its first connection (see `#direct`). Without a claim the chunks download at once; with one, once it
     * has settled. Resolves with null when the platform can be resolved, else with the failure of a chunk.
     */
    #ready(options: HubOptions): Promise<LocateFailure | null> {
        const claimed = this.#claimLead(options);
        const loading = this.#claim === null ? this.#load(options) : null;
        return claimed.then(() => (this.#alone() ? null : (loading ?? this.#load(options))));
    }

    /**
     * Claim the lead of the tabs (`claimLead`) when the connector will share but the share client has not loaded yet
     * and the page's own platform is at hand; settles once the claim has (the lead, if won, in `#lead`).
     * Stolen before the share client took it over (a tab that heard nothing from this one's engine), the lead is
     * dropped: the connector reconnects through the share client. Where no tab marked the lead, the claim is hoped won
     * (`#hope`) until the lock answers: then another tab leads after all (it was marked in between, or by no build that
     * marks), and this connector's auth requests may have replaced the browser's hub cookie under that tab's streams, so
     * its next request goes through the share client to Laravel, not from the engine's last grant: the union's grants
     * are in the cookie again, and the engine's stream reopens with them.
     */
    #claimLead(options: HubOptions): Promise<void> {
        if (this.#claim === null && this.#location !== null && sharingApplies(options) && !loadShare.loaded() && (!needsSetup(options) || loadSetup.loaded())) {
            try {
                const own = this.#own(options);
                const env = options.shareEnvironment;
                const name = linkName(own, { ...options.auth?.headers });
                const claim: Promise<void> = claimLead((env ?? (globalThis.navigator as unknown as ShareEnvironment)).locks, name, env, () => this.#hooks.names()).then(
                    (lead) => {
                        // Dropped meanwhile (the share client loaded first, or `disconnect()`): not this connector's to hold.
                        if (this.#claim !== claim) return lead?.release();
                        this.#lead = lead;
                        if (this.#hope !== null && lead === null) {
                            this.#drop();
                            this.#stale ||= this.platform !== null;
                            this.platform = null;
                        }
                        this.#hope = null;
                        lead?.ended.catch(() => {
                            if (this.#lead !== lead) return;
                            const connected = this.platform !== null;
                            this.#drop();
                            if (!connected) return;
                            this.platform = null;
                            this.#hooks.move();
                        });
                    },
                    () => undefined,
                );
                this.#claim = claim;
                this.#hopeEnv = env;
                if (!crowded(name, env) && markLead(env, name, null)) this.#hope = name;
            } catch {
                // The platform does not resolve: the refresh reports it.
            }
        }
        return this.#claim ?? Promise.resolve();
    }

    /** Whether this connector leads the tabs on its own: it won the lead (or hopes so), and no other connector of the page claimed it. */
    #alone(): boolean {
        return this.#hope !== null ? !crowded(this.#hope, this.#hopeEnv) : this.#lead !== null && !this.#lead.crowded;
    }

    /**
     * Null unless the lead is hoped won (see `#claimLead`); else a promise that settles once the lock answered: the
     * refresh opens no stream before, and none on a platform that then is no longer {@link HubLocator.platform}.
     */
    election(): Promise<void> | null {
        return this.#hope !== null ? this.#claim : null;
    }

    /**
     * Issue 13 meets issue 53: the refresh is about to authorize the joined channels `names`. Where this connector leads
     * alone and they are not its last grant (a join, a leave), its share client downloads now, and the refresh waits for
     * it instead of sending a request (the download costs one round trip, as the request would): its engine then
     * answers joins and leaves from the grant while the cookie is fresh, without a request, as it does for tabs that
     * share. Null when there is nothing to wait for (a page that joins its channels once never downloads it); else a
     * promise that settles once the share client took the connector over, or did not download (then the refresh sends
     * its own request).
     */
    handover(names: readonly string[]): Promise<void> | null {
        const granted = this.#hooks.auth.granted;
        if (granted === null || (names.length === granted.size && names.every((name) => granted.has(name)))) return null;
        return this.#share?.() ?? null;
    }

    /** Forget the lead and its claim (handed over, stolen, or released). */
    #drop(): void {
        this.#share = null;
        this.#lead = null;
        this.#claim = null;
        this.#hope = null;
    }

    /**
     * Whether `options` need a chunk that has not loaded yet: the platform set-up's, the share client's (each loaded once
     * per page, and kept across `disconnect()`).
     */
    #needs(options: HubOptions): boolean {
        return (needsSetup(options) && !loadSetup.loaded()) || (sharingApplies(options) && !loadShare.loaded());
    }

    /**
     * Load the chunks `options` need, both at once (with the share client, the engine chunk too: see {@link loadShare});
     * resolves with null once all have loaded, else with the failure of one that did not (downloaded again at the next
     * call). A failed set-up is named after what needed it: the `hubToken` option, the `EventSource` adapter, else the
     * connection set-up (outside a page, a part missing, a `host` that does not parse).
     */
    async #load(options: HubOptions): Promise<LocateFailure | null> {
        const [setup, share] = await Promise.allSettled([needsSetup(options) && loadSetup(), sharingApplies(options) && loadShare()]);
        const failed = setup.status === "rejected" ? setup : share.status === "rejected" ? share : null;
        if (failed === null) return null;
        const part = failed !== setup ? "tab sharing" : hasHubToken(options.hubToken) ? "`hubToken`" : needsAdapter(options) ? "EventSource adapter" : "connection set-up";
        return (name) => loadFailed(name, part, failed.reason, RETRIED);
    }

    /**
     * Resolve the platform for the located hub with `options` (throws a `MercureError` naming the missing piece), and offer
     * the link's `last-event-id` to `cursor` if it has none, once per connector (not after a `disconnect()`): the
     * discovered link's, or for the `host` option the `<head>` link to that hub (see {@link renderedCursor}).
     */
    resolve(options: HubOptions, cursor: { cursor: string | null }, log: ((step: string, detail: object) => void) | null): Platform {
        const location = this.#location;
        const own = this.#own(options, log);
        // Shared across tabs when the browser allows it: the auth and the streams go to the leading tab's engine. The
        // share client once loaded, which leaves the platform as it is where the options do not share; it takes over a
        // lead this connector won, and lets it keep its own stream while it leads alone (`leadOnOwn`).
        const lead = this.#lead;
        const alone = this.#alone();
        const share = loadShare.loaded();
        if (share !== undefined) this.#drop();
        if (share !== undefined && alone && lead !== null) share.leadOnOwn(this, own, options, lead, this.#hooks);
        else this.platform = share?.sharePlatform(own, options, lead) ?? (alone ? this.#direct(own, options) : own);
        const platform = this.platform!;
        if (this.#stale) platform.stale?.();
        this.#stale = false;
        log?.("hub", { url: platform.hub.href, source: location?.source });
        // [spec] mercure-hub §5: a link's last-event-id is the first cursor (not after a disconnect()).
        if (!this.#cursorOffered) cursor.cursor ??= location?.lastEventId ?? null;
        this.#cursorOffered = true;
        return platform;
    }

    /** The page's own platform for the located hub: the set-up's once loaded (its checks resolve a common page's options as `pagePlatform` does). */
    #own(options: HubOptions, log: PlatformOptions["log"] = null): Platform {
        const located = { ...options, host: this.#location?.host ?? options.host, log };
        return loadSetup.loaded()?.resolvePlatform(located) ?? pagePlatform(located);
    }

    /**
     * The platform of a connector that leads the tabs before the share client has loaded: its own. Issue 53: a tab that
     * leads alone needs no share client until another tab pings the link's bus (see `listenForTabs`: a second tab, a tab
     * back from the back/forward cache) or its channels change (see {@link HubLocator.handover}). Loaded, it takes the
     * lead and the connector over (`leadOnOwn` in share-platform.ts) once no refresh runs: none of the connector's own
     * auth requests is in flight then, and its last answer is the cookie's. Not downloaded once the connector no longer leads on its
     * own (`disconnect()`, the lead stolen meanwhile). A download that fails is not tried again here: the other tab hears
     * no engine and takes the lead over after its ping timeout, and this connector's next connection downloads the share
     * client again.
     *
     * A tab that found the lead taken names its channels in its ring (`ringTabs`): while the download runs, this
     * connector authorizes the guarded ones beside its own in one request (the request the engine would send once
     * loaded, a round trip earlier), and the engine starts from that grant, so that it answers that tab's first auth
     * request without one. Only when no refresh of its own runs then; and the engine starts from the connector's own
     * grant instead when a request of its own was sent after it (its answer may be the cookie's), or when it failed.
     */
    #direct(own: Platform, options: HubOptions): Platform {
        const hooks = this.#hooks;
        // The lead won, once the claim has settled (a hoped claim has not yet).
        let lead: ClaimedLead | null = null;
        /** Whether this connector still leads on its own platform (not stolen, handed over or disconnected). */
        const leading = (): boolean => this.platform === own && lead !== null && this.#lead === lead;
        /** The share client's download and take-over, once started; settles once taken over (or not to be). */
        let download: Promise<void> | null = null;
        /** Whether the download failed (not tried again here). */
        let failed = false;
        let stop = (): void => undefined;
        /** The union authorized for another tab's ring (see above), once asked for: its grant, or null (failed). */
        let widened: Promise<EngineSeed | null> | null = null;
        const aborter = new AbortController();
        const widen = (names: readonly string[]): void => {
            const { granted, response } = hooks.auth;
            if (widened !== null || granted === null || response === null || hooks.running() !== null) return;
            const extra = names.filter((name) => channelKind(name) !== "public" && !granted.has(name));
            if (extra.length === 0) return;
            const union = [...granted, ...extra].slice(0, MAX_CHANNELS);
            const sentAt = Date.now();
            widened = hooks.auth.request(union, own, aborter.signal).then(
                (result) => (result.kind === "ok" ? { names: [...granted], granted: union.filter((name) => result.response.channels.get(name)?.denied !== true), response: result.response, sentAt } : null),
                () => null,
            );
        };
        /** Take over once no refresh runs and the union's request (if any) has settled. */
        const takeover = (share: ShareModule, done: () => void): void => {
            if (!leading()) return done();
            const running = hooks.running();
            if (running !== null) return void running.then(() => takeover(share, done));
            if (widened !== null) return void widened.then((seed) => take(share, seed, done));
            take(share, null, done);
        };
        const take = (share: ShareModule, seed: EngineSeed | null, done: () => void): void => {
            if (!leading()) return done();
            if (hooks.running() !== null) return takeover(share, done); // A refresh began while the union's request ran.
            stop(); // The tab link hears the bus from now on (and answers `wait` while the engine chunk loads).
            this.#drop();
            // A request of the connector's own sent after the union's: the cookie may be that request's.
            const sentAfter = (hooks.cookie.authorizedAt() ?? 0) > (seed?.sentAt ?? Infinity);
            share.leadOnOwn(this, own, options, lead!, hooks, sentAfter ? null : seed);
            done();
        };
        /** Start the download unless started: the download, or null when this connector no longer leads alone or it failed. */
        const start = (): Promise<void> | null => {
            if (!leading() || failed) return null;
            return (download ??= loadShare().then(
                (share) => new Promise<void>((done) => takeover(share, done)),
                () => void (failed = true),
            ));
        };
        void this.#claim?.then(() => {
            lead = this.#lead;
            if (!leading()) return;
            // While the download is under way, another tab is told to wait; once it failed, nothing (see `listenForTabs`).
            stop = listenForTabs(options.shareEnvironment, lead!.name, (names) => {
                if (!leading()) return null;
                const download = start();
                if (download !== null) widen(names);
                return download !== null;
            });
            this.#share = start;
            const end = (): void => (stop(), aborter.abort());
            void lead!.ended.then(end, end);
        });
        return own;
    }

    /** How many streams the connector may hold on the hub (see {@link streamBudget}); unlimited until resolved. */
    budget(): number {
        return this.platform === null ? Infinity : streamBudget(this.platform.hub);
    }

    /** Forget the hub and its platform, and release a lead not handed over (`disconnect()`). */
    forget(): void {
        this.platform?.release?.();
        this.#lead?.release();
        this.#drop();
        this.#location = null;
        this.platform = null;
    }
}
