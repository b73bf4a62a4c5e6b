import { vi } from "vitest";
import { MercureConnector } from "../../src/connector/mercure-connector";
import type { MercureConnectorOptions } from "../../src/connector/options";
import type { MercureChannel } from "../../src/channel/mercure-channel";
import type { MercurePresenceChannel } from "../../src/presence/mercure-presence-channel";
import type { MercureError } from "../../src/errors";
import type { ShareEnvironment } from "../../src/share/tab-link";
import { FakeBrowser, type FakeTab } from "../fakes/fake-tabs";
import { freshRealm } from "./chunks";
import { log, openForChannel } from "./determinism";
import { authorizes, HUB_URL, Network, type NetworkTab, type Profile, type Published, type Whispered } from "./network";

/*
 * The world one run drives: browser profiles (one per user: each its own Web Locks, BroadcastChannels and hub cookie),
 * their tabs (a `MercureConnector` each, on the project's fake browser), the network (network.ts), and what every tab
 * observed (events, whispers, errors, `subscribed()`, presence callbacks), which the invariants (invariants.ts) read.
 */

/** The channels a page may join: two public, private ones (`private-orders.N` is user N's alone), two presence, one encrypted. */
export const CHANNELS = ["news", "sport", "private-team", "private-orders.1", "private-orders.2", "presence-room.1", "presence-room.2", "private-encrypted-chat"] as const;

/** Whether a channel is guarded (private, encrypted, presence): it can whisper. */
export const guarded = (name: string): boolean => /^(private|presence)-/.test(name);

/** How one run's world is set up (drawn by the command generator: see commands.ts). */
export interface WorldConfig {
    /** The hub keeps history across restarts and replays after `Last-Event-ID` (the reference hub's bolt transport); else none (local). */
    readonly history: boolean;
    /** User 2's pages give `bearerToken` as a function (such a connector runs alone: `hasFunction`), else as a string. */
    readonly bearerFunction: boolean;
    /**
     * User 1's pages give Echo no CSRF token and the connector reads Laravel's `XSRF-TOKEN` cookie (a Sanctum SPA); else
     * they give their page's token (`<meta name="csrf-token">`, the `csrfToken` option) and there is no such cookie.
     * The realm has one `document.cookie`: user 2's pages always give a page token (see KNOWN_BUGS 49.1).
     */
    readonly xsrfCookie: boolean;
    /** With `xsrfCookie`: Laravel sends a new `XSRF-TOKEN` value with every auth answer (it does; see KNOWN_BUGS 49.1). */
    readonly rotateXsrf: boolean;
    /** The connectors' `leaveDelay` (ms). */
    readonly leaveDelay: number;
}

/** One join of a channel in a tab, and everything the tab observed on it. */
export interface Membership {
    readonly tab: SimTab;
    readonly name: string;
    readonly channel: MercureChannel;
    readonly joinedAt: number;
    /** When the page left it, or null. */
    left: number | null;
    /** Deliveries of each broadcast id, and of each whisper id. */
    readonly events: Map<number, number>;
    readonly whispers: Map<number, number>;
    /** When broadcasts arrived (it worked then). */
    readonly delivered: number[];
    /** Its `error()` reports and its `subscribed()` calls. */
    readonly errors: Array<{ at: number; code: string; message: string }>;
    readonly subscribed: number[];
    /** Since when a whisper listener is registered, or null. */
    listeningSince: number | null;
    /** Presence: the members as the callbacks told them (`here()`, then `joining` / `leaving`), by user id; null before `here()`. */
    view: Map<number, unknown> | null;
}

/** What the world expects a membership to receive: a broadcast or a whisper, published at `at`. */
export interface Expectation {
    readonly kind: "broadcast" | "whisper";
    readonly id: number;
    readonly membership: Membership;
    readonly at: number;
}

/**
 * Issue 53's navigation: how often a page opened its stream beside its first auth request, and why it did not (the
 * `early stream` step of the `debug` log), since the last {@link World} was created: a test checks that its scenario
 * took the path it is about.
 */
export const earlyStreams = { opened: 0, skipped: new Map<string, number>() };

/** Count one `early stream` step. */
function tallyEarly(detail: { skipped?: string }): void {
    if (detail.skipped === undefined) earlyStreams.opened++;
    else earlyStreams.skipped.set(detail.skipped, (earlyStreams.skipped.get(detail.skipped) ?? 0) + 1);
}

/** What a page of a tab took over from the tab's previous page with `resumeAcrossPages` (see {@link World.navigate}). */
export interface Navigation {
    /** The previous page of the tab. */
    readonly from: SimTab;
    /** When it left (`pagehide`). */
    readonly at: number;
    /** The channels it held then, which this page joins again: each until that join was first subscribed or left. */
    readonly channels: Set<string>;
    /** What this page's resume capability logged (`resumed`, `none`, ...), once it took the record; null before. */
    outcome: string | null;
}

/** A simulated tab: its fake browser tab, its connector, its joins; {@link NetworkTab} for the network. */
export class SimTab implements NetworkTab {
    dead = false;
    /** The browser tab's `sessionStorage` (a page that navigates hands it to the next page of the tab). */
    storage = new Map<string, string>();
    /** The navigation that opened this page (issue 52), or null for a tab's first page. */
    navigation: Navigation | null = null;
    /** The page's own `pagehide` listeners (`resumeAcrossPages`), besides its tab links' on {@link SimTab.fake}. */
    readonly pagehide: Array<() => void> = [];
    /** Its channels by name (the current join of each). */
    readonly memberships = new Map<string, Membership>();
    /** Every channel it ever joined (a message about any other one must never reach it). */
    readonly ever = new Set<string>();
    /** Its page's connector (made once the tab exists: its `fetch` and `EventSource` are the tab's). */
    connector!: MercureConnector;
    /**
     * Its page was rendered with the hub's last event id in its `<head>` link (issue 52: see `World.navigate`): the id of
     * the last broadcast published then (0 for none); null for a page rendered without.
     */
    rendered: number | null = null;
    /** When its page last made a whisper or registered a whisper listener: each downloads the whisper code if it is missing. */
    whisperUsedAt = -Infinity;

    constructor(
        readonly id: string,
        readonly profile: Profile & { readonly browser: FakeBrowser },
        readonly fake: FakeTab,
    ) {}
}

/** `SIM_TRACE=<file>`: every connector logs its protocol steps (its `debug` option), with the fake clock and its tab. */
const trace = process.env["SIM_TRACE"] !== undefined && process.env["SIM_TRACE"] !== "";

/** Counts the runs of this process: each run's auth endpoint differs by it (see {@link World.authEndpoint}). */
let runs = 0;

/** The world of one run. */
export class World {
    /**
     * The connectors' `authEndpoint`, with the run's number in its query: the tabs of one profile share a tab link named
     * after it, and the simulation's tabs share one realm, whose page-wide state (the lead claims of share/load.ts) a
     * run must not inherit from the one before.
     */
    readonly authEndpoint = `/broadcasting/auth?run=${++runs}`;
    readonly network: Network;
    readonly profiles: Array<Profile & { readonly browser: FakeBrowser; bearer: string; hang: number; readonly stamps: Map<string, string> }>;
    readonly tabs: SimTab[] = [];
    /** Violations seen as they happened (a second delivery, a callback out of order), thrown by the next check. */
    readonly violations: string[] = [];
    /** What the tabs must receive (see invariants.ts), until resolved. */
    expectations: Expectation[] = [];
    /** The step being run (1-based), for messages. */
    step = 0;
    /** The id of the current step's probe broadcast, or null (the hub was down). */
    probe: number | null = null;
    /** When the invariants were last checked: errors since then are checked for a cause (see invariants.ts). */
    checkedAt = -Infinity;
    /** Each tab that closed, was discarded, reloaded or froze, and when: the tabs of its profile may be handed over. */
    readonly handovers: Array<{ readonly tab: SimTab; readonly at: number }> = [];
    /** The auth requests of the last minutes (the resource check counts them; older ones are dropped). */
    readonly authHistory: Network["authRequests"] = [];
    /** Whisper payload ids sent, by id: the tab and channel. */
    readonly sent = new Map<number, { tab: SimTab; channel: string }>();
    #whisperIds = 0;
    /** Every join of the run (see {@link World.memberships}). */
    readonly #joins: Membership[] = [];

    constructor(
        readonly config: WorldConfig,
        readonly random: () => number,
        /** The issue 49 points left out (known-bugs.ts): some bounds allow for them. */
        readonly known: ReadonlySet<string>,
    ) {
        earlyStreams.opened = 0;
        earlyStreams.skipped.clear();
        this.network = new Network(
            { history: config.history },
            (kind) => (kind === "auth" ? 5 + Math.floor(random() * 200) : kind === "stream" ? 2 + Math.floor(random() * 60) : 2 + Math.floor(random() * 40)),
            random,
        );
        this.profiles = [1, 2].map((user) => ({ id: user, user, cookie: null, rotatesXsrf: user === 1 && config.xsrfCookie && config.rotateXsrf, browser: new FakeBrowser(), bearer: "token-2a", hang: 0, stamps: new Map<string, string>() }));
        document.cookie = config.xsrfCookie ? `XSRF-TOKEN=${this.network.xsrf}; path=/` : "XSRF-TOKEN=; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/";
        this.network.onBroadcast = (published) => this.#expectBroadcast(published);
        this.network.onWhisper = (whispered) => this.#expectWhisper(whispered);
    }

    /** The tabs still open (neither closed nor discarded). */
    alive(): SimTab[] {
        return this.tabs.filter((tab) => !tab.dead);
    }

    /**
     * Open a tab of `profile` (0: user 1, 1: user 2) whose page joins `channels` (`listen`: with a whisper listener on the
     * guarded ones); `navigation`: the next page of a tab (issue 52), with `resumeAcrossPages`, which joins them
     * `joinAfterMs` after its connector is created.
     */
    openTab(profileIndex: number, channels: readonly string[], listen: boolean, navigation?: { from: SimTab; joinAfterMs: number; renderedAfter?: number }): SimTab {
        const profile = this.profiles[profileIndex]!;
        const fake = profile.browser.tab();
        const id = "t" + (this.tabs.length + 1);
        const tab = new SimTab(id, profile, fake);
        if (navigation !== undefined) {
            tab.rendered = navigation.renderedAfter ?? null;
            tab.storage = navigation.from.storage;
            tab.navigation = { from: navigation.from, at: Date.now(), channels: new Set(channels), outcome: null };
        }
        // A dead tab's lock requests are never answered (its page is gone); the fake browser already drops its messages.
        const env: ShareEnvironment = {
            ...fake.env,
            locks: { request: (name, options, callback) => (tab.dead ? new Promise(() => undefined) : fake.env.locks.request(name, options, callback)) },
        };
        const credentials: MercureConnectorOptions =
            profile.user === 1
                ? this.config.xsrfCookie
                    ? {}
                    : { csrfToken: "csrf-1" }
                : {
                      csrfToken: "csrf-2",
                      bearerToken: this.config.bearerFunction
                          ? () => {
                              if (!(profile.hang > 0 && profile.hang-- > 0)) return profile.bearer;
                              // A function that never settles: the batch fails at the auth deadline (issue 49 point 6), a fault of the profile's.
                              this.network.failures.push({ at: Date.now() + 15_000, profile, kind: "fault" });
                              // And liveness counts from that deadline, as from a faulty answer.
                              this.network.faultAt.set(profile, Math.max(this.network.faultAt.get(profile) ?? -Infinity, Date.now() + 15_000));
                              return new Promise<string>(() => undefined);
                          }
                          : profile.bearer,
                  };
        tab.connector = new MercureConnector({
            host: HUB_URL,
            authEndpoint: this.authEndpoint,
            eventSource: this.network.eventSourceFor(tab),
            fetch: this.network.fetchFor(tab),
            shareEnvironment: env,
            // The profile's `localStorage` for the auth stamps every connector and engine writes (issue 53's navigation).
            authStamps: {
                getItem: (key: string) => profile.stamps.get(key) ?? null,
                setItem: (key: string, value: string) => void profile.stamps.set(key, value),
                removeItem: (key: string) => void profile.stamps.delete(key),
            },
            leaveDelay: this.config.leaveDelay,
            ...(trace || tab.navigation !== null
                ? {
                      debug: (what: string, detail?: object) => {
                          if (what === "resume" && tab.navigation !== null) tab.navigation.outcome = String((detail as { outcome?: unknown }).outcome);
                          if (what === "early stream") tallyEarly(detail as { skipped?: string });
                          if (trace) log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} ${id} ${what} ${JSON.stringify(detail)}`);
                      },
                  }
                : {}),
            ...(tab.navigation !== null || navigation !== undefined ? { resumeAcrossPages: true, resumeEnvironment: this.#resumeEnvironment(tab) } : {}),
            ...credentials,
        });
        this.tabs.push(tab);
        const joinAll = () => {
            if (!tab.dead) for (const name of channels) this.join(tab, name, listen);
        };
        if (navigation !== undefined && navigation.joinAfterMs > 0) setTimeout(joinAll, navigation.joinAfterMs);
        else joinAll();
        return tab;
    }

    /**
     * The page APIs of `tab` for `resumeAcrossPages`: its browser tab's storage, a history of 2 entries (the next page of
     * a tab), its profile's session CSRF token (40 characters: one Laravel session per profile), its `pagehide`.
     */
    #resumeEnvironment(tab: SimTab) {
        const storage = {
            getItem: (key: string) => tab.storage.get(key) ?? null,
            setItem: (key: string, value: string) => void tab.storage.set(key, value),
            removeItem: (key: string) => void tab.storage.delete(key),
        };
        return {
            page: { storage, historyLength: 2, navigation: "navigate", now: () => Date.now(), startedAt: Date.now() },
            token: `session-of-user-${tab.profile.user}`.padEnd(40, "x"),
            // Apart from the tab links' (whose count the bounds check), fired by close() with them.
            window: { addEventListener: (_type: "pagehide", listener: () => void) => void tab.pagehide.push(listener) },
        };
    }

    /** The page of `tab` joins `name` and listens to it (`listen`: for whispers too, on a guarded channel). */
    join(tab: SimTab, name: string, listen: boolean): void {
        const existing = tab.memberships.get(name);
        if (existing !== undefined && existing.left === null && this.#registered(existing)) return;
        const connector = tab.connector;
        const channel = name.startsWith("presence-")
            ? connector.presenceChannel(name.slice("presence-".length))
            : name.startsWith("private-encrypted-")
              ? connector.encryptedPrivateChannel(name.slice("private-encrypted-".length))
              : connector.channel(name);
        const membership: Membership = { tab, name, channel, joinedAt: Date.now(), left: null, events: new Map(), whispers: new Map(), delivered: [], errors: [], subscribed: [], listeningSince: null, view: null };
        tab.memberships.set(name, membership);
        this.#joins.push(membership);
        tab.ever.add(name);
        // A page rendered with the hub's cursor gets what was published since its render on what it joins before its
        // first stream opened: the hub replays it (with history).
        if (this.#replaysFromRender(tab)) {
            for (const published of this.network.broadcasts) {
                if (published.id > tab.rendered! && published.channels.includes(name) && authorizes(tab.profile.user, name)) {
                    this.expectations.push({ kind: "broadcast", id: published.id, membership, at: published.at });
                }
            }
        }
        const live = () => tab.memberships.get(name) === membership && membership.left === null;
        channel.listen(".sim", (payload: { b?: number }) => {
            const id = payload?.b;
            if (typeof id !== "number") return this.violate(`${tab.id} got a malformed event on ${name}: ${JSON.stringify(payload)}`);
            if (!live()) this.violate(`${tab.id} got broadcast #${id} on ${name} after leaving it`);
            const channels = this.network.broadcasts.find((published) => published.id === id)?.channels;
            if (!channels?.includes(name)) this.violate(`${tab.id} got broadcast #${id} of ${JSON.stringify(channels)} on ${name}`);
            if (!authorizes(tab.profile.user, name)) this.violate(`${tab.id} (user ${tab.profile.user}) got broadcast #${id} on ${name}, which user ${tab.profile.user} may not join`);
            const count = (membership.events.get(id) ?? 0) + 1;
            membership.events.set(id, count);
            membership.delivered.push(Date.now());
            if (count > 1) this.violate(`${tab.id} got broadcast #${id} on ${name} ${count} times`);
            // In the order published: the hub writes and replays in order, so no path (a catch-up beside the shared stream,
            // the shared stream resumed for another tab's cursor) may bring an older broadcast after a newer one.
            let newest = 0;
            for (const got of membership.events.keys()) newest = Math.max(newest, got);
            if (count === 1 && newest > id) this.violate(`${tab.id} got broadcast #${id} on ${name} after #${newest}, published later`);
            // Issue 52: nothing an earlier page of the browser tab received comes again on a later one (see "fresh-page-replay"
            // in known-bugs.ts for the pages that resumed nothing).
            for (let page = tab.navigation?.from, from = tab; page !== undefined; from = page, page = page.navigation?.from) {
                if (this.known.has("fresh-page-replay") && (from.navigation?.outcome !== "resumed" || from.rendered !== null)) break;
                if (this.memberships(page).some((earlier) => earlier.name === name && earlier.events.has(id))) {
                    this.violate(`${tab.id} got broadcast #${id} on ${name}, which ${page.id}, an earlier page of its browser tab, had got`);
                }
            }
        });
        channel.error((error: MercureError) => membership.errors.push({ at: Date.now(), code: error.code, message: error.message }));
        channel.subscribed(() => {
            if (membership.subscribed.length === 0) this.#expectResumed(membership);
            membership.subscribed.push(Date.now());
        });
        if (name.startsWith("presence-")) this.#watchPresence(membership, channel as MercurePresenceChannel<{ id: number }>);
        if (listen && guarded(name)) {
            membership.listeningSince = Date.now();
            tab.whisperUsedAt = Date.now();
            channel.listenForWhisper("typing", (data: { w?: number }) => {
                const id = data?.w;
                if (typeof id !== "number") return this.violate(`${tab.id} got a malformed whisper on ${name}: ${JSON.stringify(data)}`);
                const sent = this.sent.get(id);
                if (!live()) this.violate(`${tab.id} got whisper #${id} on ${name} after leaving it`);
                if (sent === undefined || sent.channel !== name) this.violate(`${tab.id} got whisper #${id} on ${name}, sent on ${sent?.channel}`);
                if (sent?.tab === tab) this.violate(`${tab.id} got its own whisper #${id} on ${name}`);
                const count = (membership.whispers.get(id) ?? 0) + 1;
                membership.whispers.set(id, count);
                if (count > 1) this.violate(`${tab.id} got whisper #${id} on ${name} ${count} times`);
            });
        }
    }

    /** Record the presence callbacks of `membership`: `joining` of a member shown, `leaving` of one not shown are violations. */
    #watchPresence(membership: Membership, channel: MercurePresenceChannel<{ id: number }>): void {
        const where = () => `${membership.tab.id} on ${membership.name}`;
        channel.here((members) => {
            if (membership.view !== null) this.violate(`here() ran twice ${where()}`);
            membership.view = new Map(members.map((member) => [member.id, member]));
            if (membership.view.size !== members.length) this.violate(`here() listed a user twice ${where()}: ${JSON.stringify(members)}`);
        });
        channel.joining((member) => {
            if (membership.view === null) return this.violate(`joining(${member.id}) before here() ${where()}`);
            if (membership.view.has(member.id)) this.violate(`joining(${member.id}) for a member already shown ${where()}`);
            membership.view.set(member.id, member);
        });
        channel.leaving((member) => {
            if (membership.view === null) return this.violate(`leaving(${member.id}) before here() ${where()}`);
            if (!membership.view.has(member.id)) this.violate(`leaving(${member.id}) for a user not shown (a second leaving?) ${where()}`);
            membership.view.delete(member.id);
        });
    }

    /** Every join `tab` made, the left and evicted ones too (each keeps its errors), in order. */
    memberships(tab: SimTab): Membership[] {
        return this.#joins.filter((membership) => membership.tab === tab);
    }

    /** Whether `membership`'s channel is still the connector's (not evicted: denied, or its chunk did not load). */
    #registered(membership: Membership): boolean {
        return membership.tab.connector.channels[membership.name] === membership.channel;
    }

    /** Whether the page still holds `membership` (not left) and the connector too (not evicted). */
    joined(membership: Membership): boolean {
        return membership.left === null && membership.tab.memberships.get(membership.name) === membership && this.#registered(membership);
    }

    /** The page leaves `name`. */
    leave(tab: SimTab, name: string): void {
        const membership = tab.memberships.get(name);
        if (membership === undefined) return;
        membership.left = Date.now();
        tab.memberships.delete(name);
        tab.navigation?.channels.delete(name);
        tab.connector.leaveChannel(name);
    }

    /** The page whispers on `name` (a `client-typing` event). */
    whisper(tab: SimTab, name: string): void {
        const membership = tab.memberships.get(name);
        if (membership === undefined || !this.joined(membership)) return;
        const id = ++this.#whisperIds;
        tab.whisperUsedAt = Date.now();
        this.sent.set(id, { tab, channel: name });
        (membership.channel as MercureChannel & { whisper(event: string, data: unknown): void }).whisper("typing", { w: id });
    }

    /** Close `tab` (`pagehide`, then the page is gone) or discard it (gone without `pagehide`, as a browser discards a background tab). */
    close(tab: SimTab, pagehide: boolean): void {
        if (tab.dead) return;
        this.handovers.push({ tab, at: Date.now() });
        if (pagehide) for (const listener of tab.pagehide) listener();
        tab.fake.close(pagehide);
        tab.dead = true;
        this.network.dropTab(tab);
        // The page's code no longer runs: what it still had scheduled is stopped. Its network access and its locks are
        // dead already (see openTab), so nothing of this reaches the other tabs or the hub.
        tab.connector.disconnect();
    }

    /**
     * Freeze `tab` (the `freeze` event), let `ms` pass, and resume it (`resume`). Only the events: the one fake clock
     * runs every tab's timers, so a frozen page's code is not paused (see docs/architecture.md#the-simulation); its
     * streams keep delivering, as its bus does in Chromium (see test/fakes/fake-tabs.ts).
     */
    async freeze(tab: SimTab, ms: number): Promise<void> {
        if (tab.dead) return;
        this.handovers.push({ tab, at: Date.now() });
        tab.fake.freeze();
        await this.settle(ms);
        if (!tab.dead) tab.fake.resume();
    }

    /** Reload `tab`: close it (`pagehide`) and open a new page of the same profile that joins the same channels. */
    reload(tab: SimTab): SimTab {
        const channels = [...tab.memberships.values()].filter((membership) => this.joined(membership));
        const listen = channels.some((membership) => membership.listeningSince !== null);
        this.close(tab, true);
        return this.openTab(this.profiles.indexOf(tab.profile as World["profiles"][number]), channels.map((membership) => membership.name), listen);
    }

    /**
     * The page of `tab` navigates (issue 52): `pagehide`, the page is gone, and the next page of the same tab (its
     * `sessionStorage` too) creates its connector with `resumeAcrossPages` at once and joins the same channels
     * `joinAfterMs` later. It resumes from what the page left if that page had the option too (a page opened by a
     * navigation). With `rendered`, Laravel rendered the next page with the hub's last event id in its `<head>` link
     * (the docs' middleware), read when its connector is created, which wins over the resumed cursor; the realm has one
     * document, so the link is there only while that connector is created.
     */
    navigate(tab: SimTab, joinAfterMs: number, rendered = false): SimTab {
        const channels = [...tab.memberships.values()].filter((membership) => this.joined(membership));
        const listen = channels.some((membership) => membership.listeningSince !== null);
        const profile = this.profiles.indexOf(tab.profile as World["profiles"][number]);
        const names = channels.map((membership) => membership.name);
        if (!rendered) {
            this.close(tab, true);
            if (this.alive().length === 0) freshRealm(); // Issue 53: the next page downloads its chunks anew (a lone tab leads on its own).
            return this.openTab(profile, names, listen, { from: tab, joinAfterMs });
        }
        // Rendered before the page leaves: what the hub dispatched last, and the last broadcast then.
        const link = document.createElement("link");
        link.setAttribute("rel", "mercure");
        link.setAttribute("href", HUB_URL);
        link.setAttribute("last-event-id", this.network.lastEventId);
        const renderedAfter = this.network.broadcasts.at(-1)?.id ?? 0;
        this.close(tab, true);
        if (this.alive().length === 0) freshRealm();
        document.head.append(link);
        try {
            return this.openTab(profile, names, listen, { from: tab, joinAfterMs, renderedAfter });
        } finally {
            link.remove();
        }
    }

    /**
     * Whether `tab`'s page was rendered with the hub's cursor and has not had a stream open yet: what it joins now is
     * replayed from the render (with history; a hub without any replays nothing, and the page starts from now).
     */
    #replaysFromRender(tab: SimTab): boolean {
        return this.config.history && tab.rendered !== null && !this.memberships(tab).some((membership) => membership.subscribed.length > 0);
    }

    /** Let `ms` of fake time pass: every timer, message between tabs, request and stream event due meanwhile runs. */
    async settle(ms: number): Promise<void> {
        await vi.advanceTimersByTimeAsync(ms);
    }

    /** Record a violation (thrown by the next check). */
    violate(message: string): void {
        this.violations.push(`step ${this.step}, ${new Date(Date.now()).toISOString().slice(11, 23)}: ${message}`);
    }

    /** A broadcast was published: every tab subscribed to one of its channels must get it once (or report why not). */
    #expectBroadcast(published: Published): void {
        for (const tab of this.alive()) {
            for (const name of published.channels) {
                const membership = tab.memberships.get(name);
                const replayed = membership !== undefined && this.#replaysFromRender(tab);
                if (membership === undefined || !this.joined(membership) || (membership.subscribed.length === 0 && !replayed) || !authorizes(tab.profile.user, name)) continue;
                this.expectations.push({ kind: "broadcast", id: published.id, membership, at: published.at });
            }
        }
    }

    /**
     * Issue 52: a page that resumed from the tab's previous page (`resumeAcrossPages`, on a hub with history) gets, on a
     * channel both held, every broadcast published after the previous page left and before this join was first
     * subscribed, once (or reports why not): what was broadcast during the navigation.
     */
    #expectResumed(membership: Membership): void {
        const navigation = membership.tab.navigation;
        // Only the join the navigation made (not one made again later, after a leave: it starts from the page's cursor then).
        if (navigation === null || !navigation.channels.delete(membership.name) || navigation.outcome !== "resumed" || !this.config.history) return;
        if (!authorizes(membership.tab.profile.user, membership.name)) return;
        for (const published of this.network.broadcasts) {
            if (published.at < navigation.at || !published.channels.includes(membership.name)) continue;
            this.expectations.push({ kind: "broadcast", id: published.id, membership, at: published.at });
        }
    }

    /**
     * The hub accepted a whisper: every other tab listening on its channel for a while (its whisper stream had time to
     * open) and subscribed to it must get it once (or report why not).
     */
    #expectWhisper(whispered: Whispered): void {
        const id = this.#whisperId(whispered);
        if (id === null) return this.violate(`the hub got a whisper on ${whispered.channel} the simulation did not send: ${whispered.data}`);
        const sender = this.sent.get(id)!.tab;
        for (const tab of this.alive()) {
            const membership = tab.memberships.get(whispered.channel);
            if (tab === sender || membership === undefined || !this.joined(membership) || membership.subscribed.length === 0) continue;
            if (membership.listeningSince === null || membership.listeningSince > whispered.at - 5_000) continue;
            if (this.#whisperCodeMissing(tab)) continue;
            this.expectations.push({ kind: "whisper", id, membership, at: whispered.at });
        }
    }

    /**
     * Whether `tab`'s page lacks the whisper code as documented (capability-slots.ts, `whisperLink`): its download failed
     * (`load_failed`, told on each channel that waited for it) and the page has made no whisper nor whisper listener
     * since, which would download it again; until then its listeners hear nothing. (The simulation's tabs share one
     * realm, where another tab's download loads the code for all: a browser's tab downloads its own.)
     */
    #whisperCodeMissing(tab: SimTab): boolean {
        let failed = -Infinity;
        for (const membership of this.memberships(tab)) {
            for (const error of membership.errors) if (error.code === "load_failed" && error.message.startsWith("The whisper code ") && error.at > failed) failed = error.at;
        }
        return failed >= tab.whisperUsedAt;
    }

    /** The simulation's id of a published whisper (its payload's `w`; sealed on an encrypted channel), or null. */
    #whisperId(whispered: Whispered): number | null {
        try {
            const envelope = JSON.parse(whispered.data) as { data?: string; payload?: { w?: unknown } };
            const inner = typeof envelope.data === "string" ? (openForChannel(whispered.channel, envelope.data) as { payload?: { w?: unknown } }) : envelope;
            return typeof inner.payload?.w === "number" && this.sent.has(inner.payload.w) ? inner.payload.w : null;
        } catch {
            return null;
        }
    }

    /** End the run: every connector disconnected, nothing left scheduled. */
    dispose(): void {
        for (const tab of this.tabs) {
            tab.dead = true;
            try {
                tab.connector.disconnect();
            } catch {
                // A connector that throws on disconnect is reported by the run that made it so.
            }
        }
        vi.clearAllTimers();
    }
}
