import { vi } from "vitest";
import type { MercurePresenceChannel } from "../../src/presence/mercure-presence-channel";
import { LEAVE_GRACE } from "../../src/presence/presence-sync";
import { rawUrlEncode } from "../../src/topic/encode";
import { DRAIN_MS, OPEN_DEADLINE_MS } from "../../src/transport/stream-switch";
import { channelTopic } from "../../src/testing/laravel-side";
import { chunkFailures, lastChunkFailure } from "./chunks";
import { log } from "./determinism";
import { authorizes } from "./network";
import { CHANNELS, guarded, type Membership, type World } from "./world";

/*
 * The invariants the simulation checks after every step, once the world has had a bounded quiescence (see
 * `QUIESCENCE_MS` in simulation.ts): each a function that adds what it finds to a list of violations.
 */

/** How old an expected delivery may be before its absence counts (the probe's own settling time covers it). */
const DELIVERY_BOUND_MS = 2_000;

/**
 * At most this many auth requests of one profile in any minute, or {@link AUTH_PER_TAB_MINUTE} for each of its open tabs
 * when that is more.
 */
export const AUTH_PER_MINUTE = 40;

/**
 * A tab's share of the bound: when one of its channels starts failing, its first minute holds its batch and the retry,
 * the halving (2 log₂ n), the confirming lone probe, lone retries at 5, 10 and 20 s, and the engine's split of a union
 * that failed (one request per distinct set, then per channel of the failing set): about a dozen.
 */
const AUTH_PER_TAB_MINUTE = 14;

/** At most this many `error()` reports on one join in any minute: more is a loop. */
export const ERRORS_PER_MINUTE = Number(process.env["SIM_ERRORS_PER_MINUTE"] ?? 15);

/** How long a stream that replaced another may overlap with it: the drain and the open deadline (transport/stream-switch.ts). */
const REPLACEMENT_MS = DRAIN_MS + OPEN_DEADLINE_MS;

/** At most this many fake timers per open tab (the connectors', the tab links', the presence rooms'), besides the network's. */
export const TIMERS_PER_TAB = 25;

/**
 * When `membership` last showed it worked at or before `at`: its last `subscribed()` or delivered broadcast; -Infinity.
 * A delivery within {@link REPLACEMENT_MS} after one of `errors` shows nothing: the stream the error's refresh replaced
 * drains that long, and still delivers on a channel its replacement no longer carries (a channel that now fails alone
 * is retried alone: seed 2165, whose `auth_failed` came 0.3 s before the old stream's last event on it).
 */
function lastWorked(membership: Membership, at: number, errors: readonly Membership["errors"][number][] = []): number {
    let last = -Infinity;
    for (const time of membership.subscribed) if (time <= at && time > last) last = time;
    for (const time of membership.delivered) {
        if (time <= at && time > last && !errors.some((error) => time >= error.at && time <= error.at + REPLACEMENT_MS)) last = time;
    }
    return last;
}

/**
 * Whether `membership` reported an error since it last showed it worked before `at` (a loss it explained); an error
 * without a cause explains nothing (one a known bug's exclusion tolerates: a leader's hand-over is no failure).
 */
function explained(world: World, membership: Membership, at: number): boolean {
    const failures = membership.errors.filter((error) => causeOf(world, membership, error) === "failure");
    const since = lastWorked(membership, at, failures);
    return failures.some((error) => error.at >= since);
}

/** How long after a tab of the profile went away or froze a publish may fall in the hand-over (see {@link handedOver}). */
const HANDOVER_MS = 5_000;

/**
 * Whether a publish at `at` fell in a hand-over of `membership`'s stream on a hub without history, the loss issue 49
 * point 8 documents (docs/tabs-and-connections.md): a tab of its profile (another, or this one if it froze beside others) closed, was discarded, reloaded or froze
 * at most {@link HANDOVER_MS} before, the tab was not subscribed again between that and the publish, and was after it
 * (its stream moved to the next leading tab). A hub with history replays it; a lone tab keeps its stream (no hand-over).
 */
function handedOver(world: World, membership: Membership, at: number): boolean {
    if (world.config.history) return false;
    // The tab that froze is handed over too when another tab of its profile took the lead (a lone one keeps its stream).
    const others = world.alive().some((tab) => tab !== membership.tab && tab.profile === membership.tab.profile);
    return world.handovers.some(
        (handover) =>
            (handover.tab !== membership.tab || others) &&
            handover.tab.profile === membership.tab.profile &&
            handover.at <= at &&
            at - handover.at <= HANDOVER_MS &&
            !membership.subscribed.some((time) => time > handover.at && time < at) &&
            membership.subscribed.some((time) => time >= at),
    );
}

/** A membership's state in one line, for violation messages. */
export function describe(membership: Membership): string {
    const codes = membership.errors.map((error) => `${error.code}@${seconds(error.at)}`);
    const errors = codes.length > 8 ? [...codes.slice(0, 3), `…${codes.length - 6} more…`, ...codes.slice(-3)] : codes;
    const subscribed = membership.subscribed.map(seconds).join(",");
    return `[joined ${seconds(membership.joinedAt)} s, subscribed at ${subscribed || "never"}, errors ${errors.join(",") || "none"}, status ${membership.tab.connector.connectionStatus()}]`;
}

/** A time of the fake clock as seconds since the run began. */
export function seconds(at: number): string {
    return ((at - Date.UTC(2026, 0, 1)) / 1000).toFixed(1);
}

/**
 * Every broadcast and whisper reaches every tab that expected it exactly once, or the join reported why not: an
 * `error()` since it was last subscribed before the publish (the second delivery is caught as it happens).
 */
export function checkDeliveries(world: World): void {
    const now = Date.now();
    const pending = [];
    for (const expectation of world.expectations) {
        const { membership, kind, id, at } = expectation;
        if (membership.tab.dead) continue;
        const count = (kind === "broadcast" ? membership.events : membership.whispers).get(id) ?? 0;
        if (count > 0 || explained(world, membership, at) || handedOver(world, membership, at)) continue;
        if (now - at < DELIVERY_BOUND_MS) {
            pending.push(expectation);
            continue;
        }
        world.violate(`${membership.tab.id} never got ${kind} #${id} on ${membership.name} (published at ${seconds(at)} s), and no error() said why ${describe(membership)}`);
    }
    world.expectations = pending;
}

/** How long after its last fault the world must be live again: the longest backoff (30 s, +20 % jitter), an auth request and an open. */
const LIVENESS_MS = 45_000;

/** The longest wait of a channel retried alone after its auth failed alone (5 minutes, +20 % jitter) and its request. */
const ISOLATED_RETRY_MS = 370_000;

/**
 * Liveness: a join whose channel had no cause to fail for {@link LIVENESS_MS} got the step's probe, whatever it reported.
 * A cause: the hub stopped or started, the tab's profile got a faulty auth answer, the channel failed alone, a chunk
 * download failed, the user may not join it. An `error()` excuses a loss while something failed (see
 * {@link checkDeliveries}); once nothing has, the channel must work again.
 */
export function checkLiveness(world: World): void {
    if (world.probe === null) return;
    const probe = world.network.broadcasts.find((published) => published.id === world.probe)!;
    const since = probe.at - LIVENESS_MS;
    if (!world.network.up || world.network.hubChangedAt > since || lastChunkFailure > since) return;
    for (const tab of world.alive()) {
        if ((world.network.faultAt.get(tab.profile) ?? -Infinity) > since) continue;
        // A tab holding a channel whose auth fails alone is told so when another tab's request finds it (the engine ends
        // its stream, as the hub does a refused one: auth-gateway.ts): its other channels are interrupted, with an
        // error, while its own batch isolation runs; the deliveries check still holds them to an error for each loss.
        const held = [...tab.memberships.keys()];
        if (held.some((name) => world.network.failing.has(name) || (world.network.failingAt.get(name) ?? -Infinity) > probe.at - ISOLATED_RETRY_MS)) continue;
        for (const membership of tab.memberships.values()) {
            const { name } = membership;
            if (!probe.channels.includes(name) || !world.joined(membership) || membership.joinedAt > since || !authorizes(tab.profile.user, name)) continue;
            // A channel that failed alone is retried alone with backoff up to 5 minutes (+20 %: connector/batch-isolation.ts).
            if (world.network.failing.has(name) || (world.network.failingAt.get(name) ?? -Infinity) > probe.at - ISOLATED_RETRY_MS) continue;
            if (!membership.events.has(probe.id)) world.violate(`${tab.id} never got the probe #${probe.id} on ${name}, though nothing failed for ${LIVENESS_MS / 1000} s ${describe(membership)}`);
        }
    }
}

/** How long a cause of failure excuses the errors that follow it (a backoff's retries keep reporting until it heals). */
const CAUSE_MS = 60_000;

/**
 * No `error()` without a cause: each error reported since the last check follows, within {@link CAUSE_MS}, something
 * that failed (the hub stopped or started, a fault in the profile's auth answers, a channel failing alone, a chunk that
 * did not download, a channel the user may not join, a whisper the hub refused), or names a decision of the page's
 * own (the 100-channel limit). A tab closing, a leader handing over, a cookie renewal are not failures.
 */
export function checkErrorCauses(world: World, since: number): void {
    for (const tab of world.alive()) {
        for (const membership of world.memberships(tab)) {
            for (const error of membership.errors) {
                if (error.at > since && causeOf(world, membership, error) === null) {
                    world.violate(`${tab.id}'s ${membership.name} reported ${error.code} at ${seconds(error.at)} s without a cause: ${error.message}`);
                }
            }
        }
    }
}

/**
 * What caused `error` on `membership` (see {@link checkErrorCauses}): `failure`, something that failed; `tolerated`, only
 * a known bug's exclusion lets it pass (an error that explains no loss: see {@link explained}); null, nothing.
 */
function causeOf(world: World, membership: Membership, error: Membership["errors"][number]): "failure" | "tolerated" | null {
    const { tab } = membership;
    const after = (at: number) => at >= error.at - CAUSE_MS && at <= error.at;
    // The hub down when the error came (an outage longer than CAUSE_MS began before the window), or now.
    const failed =
        !world.network.up ||
        world.network.outages.some((outage) => outage.from <= error.at && error.at <= outage.to) ||
        world.network.failures.some((failure) => (failure.profile === null || failure.profile === tab.profile) && after(failure.at)) ||
        chunkFailures.some(after) ||
        !authorizes(tab.profile.user, membership.name) ||
        error.code === "whisper_failed";
    if (failed) return "failure";
    return null;
}

/** The connector never sends an auth request without channels (Laravel refuses it: laravel-mercure §2.3). */
export function checkRequests(world: World): void {
    for (const request of world.network.authRequests.splice(0)) {
        if (request.names.length === 0) world.violate(`profile ${request.profile.id} sent an auth request without channels`);
        world.authHistory.push(request);
    }
    while ((world.authHistory[0]?.at ?? Infinity) < Date.now() - 120_000) world.authHistory.shift();
}

/**
 * No join is silent: after the quiescence every channel a page holds was subscribed or reported an error, and every
 * channel the connector dropped (evicted) reported why.
 */
export function checkNoSilentJoin(world: World, quietSince: number): void {
    for (const tab of world.alive()) {
        for (const membership of tab.memberships.values()) {
            if (membership.joinedAt > quietSince) continue;
            if (!world.joined(membership)) {
                if (membership.errors.length === 0) world.violate(`${tab.id}'s ${membership.name} was dropped by the connector without an error() ${describe(membership)}`);
                continue;
            }
            if (membership.subscribed.length === 0 && membership.errors.length === 0) world.violate(`${tab.id}'s ${membership.name} is neither subscribed nor reported an error ${describe(membership)}`);
            if (!authorizes(tab.profile.user, membership.name) && membership.subscribed.length > 0) world.violate(`${tab.id}'s ${membership.name} is subscribed, but user ${tab.profile.user} may not join it`);
        }
    }
}

/**
 * Whether `membership` is healthy: joined, it got this step's probe broadcast, and reported no error since shortly
 * before it was sent (an error just before may take the channel out of the stream that still brought the probe).
 */
function healthy(world: World, membership: Membership): boolean {
    if (world.probe === null || !world.joined(membership) || !membership.events.has(world.probe)) return false;
    const sent = world.network.broadcasts.find((published) => published.id === world.probe)!.at;
    return !membership.errors.some((error) => error.at >= sent - 5_000);
}

/**
 * Presence, after the quiescence: the hub counts no user without an open tab that holds the channel (no ghost); every
 * user with a healthy join (it got the step's probe) is counted; and, once the hub's members have been still for longer
 * than `leaveDelay`, every healthy join shows them, by its callbacks and by `members()`.
 */
export function checkPresence(world: World): void {
    if (world.probe === null || !world.network.up) return;
    const text = (users: Iterable<number>) => JSON.stringify([...users].sort());
    const now = Date.now();
    for (const name of CHANNELS.filter((channel) => channel.startsWith("presence-"))) {
        const hub = world.network.presentUsers(name);
        const quiet = now - (world.network.presenceChanged.get(channelTopic(name)) ?? -Infinity) > world.config.leaveDelay + 1_000;
        const holders = new Set<number>();
        const healthyUsers = new Set<number>();
        for (const tab of world.alive()) {
            const membership = tab.memberships.get(name);
            if (membership === undefined || !world.joined(membership)) continue;
            holders.add(tab.profile.user);
            if (healthy(world, membership)) healthyUsers.add(tab.profile.user);
        }
        // A leave narrows the stream after an auth request: while the profile's auth fails (a fault, not a channel that fails
        // alone: the others' batch passes), the channel left stays subscribed.
        const failing = (user: number) =>
            world.network.failures.some((failure) => failure.kind !== "channel" && (failure.profile === null || failure.profile.user === user) && failure.at > now - CAUSE_MS);
        const ghosts = [...hub].filter((user) => !holders.has(user) && !failing(user));
        if (quiet && ghosts.length > 0) world.violate(`the hub counts users ${text(ghosts)} on ${name}, and no open tab of theirs holds it`);
        const missing = [...healthyUsers].filter((user) => !hub.has(user));
        if (missing.length > 0) world.violate(`users ${text(missing)} have a healthy join of ${name}, and the hub does not count them (it counts ${text(hub)})`);
        for (const tab of world.alive()) {
            const membership = tab.memberships.get(name);
            if (membership === undefined || !healthy(world, membership)) continue;
            const roster = (membership.channel as MercurePresenceChannel<{ id: number }>).roster?.members();
            const view = membership.view;
            if (view === null) {
                world.violate(`${tab.id} is subscribed to ${name} but here() never ran ${describe(membership)}`);
                continue;
            }
            // A re-seed (the tab's stream reopened) keeps the users its snapshot lacks for LEAVE_GRACE before they leave
            // (presence-sync.ts: after a hub restart they may be reconnecting too): until then it may show more, never fewer.
            const last = membership.subscribed[membership.subscribed.length - 1];
            const lingering = membership.subscribed.length > 1 && last !== undefined && now - last <= LEAVE_GRACE + 1_000;
            const wrong = lingering ? [...hub].some((user) => !view.has(user)) : text(view.keys()) !== text(hub);
            if (quiet && wrong) world.violate(`${tab.id}'s callbacks show users ${text(view.keys())} on ${name}, the hub counts ${text(hub)} ${describe(membership)}`);
            if (roster == null || text(roster.map((member) => member.id)) !== text(view.keys())) {
                world.violate(`${tab.id}'s members() on ${name} is ${JSON.stringify(roster?.map((member) => member.id))}, its callbacks showed ${text(view.keys())}`);
            }
        }
    }
}

/**
 * No tab hears, on the buses between tabs, a message naming a guarded channel it never joined (its events, keys,
 * members). The leading tab's engine hears every tab's channel set on its own inbox: that is its job. (A public
 * broadcast's envelope names every public channel it went to: Laravel publishes them in one update.)
 */
export function checkIsolation(world: World): void {
    const forms = CHANNELS.filter(guarded).map((name) => ({ name, texts: [JSON.stringify(name), channelTopic(name), rawUrlEncode(channelTopic(name))] }));
    for (const profile of world.profiles) {
        for (const heard of profile.browser.heard.splice(0)) {
            const tab = world.tabs.find((candidate) => candidate.fake === heard.tab);
            if (tab === undefined || heard.name.includes(" inbox engine ")) continue;
            const message = heard.message;
            const text = JSON.stringify(message);
            for (const { name, texts } of forms) {
                if (tab.ever.has(name)) continue;
                if (texts.some((form) => text.includes(form) || text.includes(JSON.stringify(form).slice(1, -1)))) {
                    world.violate(`${tab.id} heard a message about ${name}, which it never joined, on ${heard.name}: ${text.slice(0, 300)}`);
                }
            }
        }
        if (process.env["SIM_TRACE"]) {
            for (const entry of profile.browser.log) {
                const message = entry.message as { t?: string; names?: unknown; c?: string; e?: string };
                if (["up", "down", "hello", "auth", "bye"].includes(message.t ?? "")) {
                    const tab = world.tabs.find((candidate) => candidate.fake === entry.tab)?.id;
                    log(`   bus (step ${world.step}) ${tab}: ${message.t} ${message.c?.slice(0, 4) ?? ""} ${message.e?.slice(0, 4) ?? ""} ${JSON.stringify(message.names ?? "")}`);
                }
            }
        }
        profile.browser.log.length = 0;
        profile.browser.posted.length = 0;
    }
}

/**
 * Requests and resources stay bounded: auth requests per minute, errors per minute per join, open streams (one main
 * stream per tab group, one whisper stream per channel listened to), tab links, page listeners and timers.
 */
export function checkResources(world: World): void {
    const now = Date.now();
    for (const profile of world.profiles) {
        const lastMinute = world.authHistory.filter((request) => request.profile === profile && request.at > now - 60_000).length;
        const bound = Math.max(AUTH_PER_MINUTE, AUTH_PER_TAB_MINUTE * world.alive().filter((tab) => tab.profile === profile).length);
        if (lastMinute > bound) world.violate(`profile ${profile.id} sent ${lastMinute} auth requests in the last minute (bound ${bound})`);
        const tabs = world.alive().filter((tab) => tab.profile === profile);
        const alone = profile.user === 2 && world.config.bearerFunction;
        const groups = alone ? tabs.length : Math.min(tabs.length, 1);
        const connections = world.network.connections().filter((connection) => connection.tab.profile === profile && !connection.tab.dead);
        // A replacement opened in the last few seconds may still have its predecessor draining (make-before-break).
        const replacing = (kind: "main" | "whisper") => connections.filter((connection) => connection[kind] && connection.since > now - REPLACEMENT_MS).length;
        const main = connections.filter((connection) => connection.main).length;
        if (world.network.up && main - replacing("main") > groups) {
            const held = connections.filter((connection) => connection.main).map((connection) => `${connection.tab.id}: ${connection.topics.map((topic) => topic.replace(/^.*\/channel\//, "")).join(" ")}`);
            world.violate(`profile ${profile.id} holds ${main} main streams for ${tabs.length} open tabs in ${groups} group(s): ${held.join("; ")}`);
        }
        const listened = new Set<string>();
        for (const tab of tabs) {
            for (const membership of tab.memberships.values()) if (membership.listeningSince !== null && guarded(membership.name)) listened.add((alone ? tab.id : "") + " " + membership.name);
        }
        const whisper = connections.filter((connection) => connection.whisper).length;
        if (whisper - replacing("whisper") > listened.size) world.violate(`profile ${profile.id} holds ${whisper} whisper streams for ${listened.size} channel(s) listened to`);
        // A tab link is a bus and an inbox, a leading link's engine adds its inbox and one per other tab; one link per tab
        // (a link a tab moved away from, its credentials changed, is released: 49.1).
        const links = 1;
        for (const tab of tabs) {
            const channels = profile.browser.channels.filter((entry) => entry.tab === tab.fake).length;
            const bound = 3 * links + tabs.length - 1;
            if (channels > bound) world.violate(`${tab.id} holds ${channels} BroadcastChannels (bound ${bound}): ${profile.browser.channels.filter((entry) => entry.tab === tab.fake).map((entry) => entry.name.slice(-50)).join(" | ")}`);
            const listeners = (tab.fake as unknown as { pageListeners: { pagehide: unknown[] } }).pageListeners.pagehide.length;
            if (listeners > links) world.violate(`${tab.id} has ${listeners} pagehide listeners (one per tab link, bound ${links}): a link is never released`);
        }
    }
    for (const tab of world.alive()) {
        for (const membership of tab.memberships.values()) {
            // decrypt_failed is reported per event that could not be decrypted (laravel-mercure §6.4): each names a loss.
            const recent = membership.errors.filter((error) => error.at > now - 60_000 && error.code !== "decrypt_failed").length;
            if (recent > ERRORS_PER_MINUTE) world.violate(`${tab.id}'s ${membership.name} reported ${recent} errors in the last minute: ${membership.errors.slice(-20).map((error) => `${error.code}@${seconds(error.at)} ${error.message.slice(0, 60)}`).join("; ")}`);
        }
    }
    const timers = vi.getTimerCount() - world.network.timers();
    const bound = TIMERS_PER_TAB * world.alive().length + 4 * world.network.connections().length + 10;
    if (timers > bound) world.violate(`${timers} timers are pending for ${world.alive().length} open tabs (bound ${bound})`);
}

/** Run every check; throw with every violation found (and those recorded as they happened). */
export function checkInvariants(world: World, quietSince: number): void {
    checkRequests(world);
    checkDeliveries(world);
    checkLiveness(world);
    checkErrorCauses(world, world.checkedAt);
    world.checkedAt = Date.now();
    checkNoSilentJoin(world, quietSince);
    checkPresence(world);
    checkIsolation(world);
    checkResources(world);
    if (world.violations.length > 0) {
        const found = world.violations.splice(0);
        throw new Error(`${found.length} invariant violation(s):\n  ${found.slice(0, 12).join("\n  ")}`);
    }
}
