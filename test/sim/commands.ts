import fc from "fast-check";
import { outage } from "./chunks";
import { log } from "./determinism";
import { checkInvariants } from "./invariants";
import type { AuthFault } from "./network";
import { CHANNELS, guarded, type SimTab, type World } from "./world";

/*
 * The actions of the simulation, as fast-check commands: each does what a real page, the server or the network does,
 * then lets the world settle for the bounded quiescence, publishes a probe broadcast on every joined channel, lets it
 * arrive, and checks the invariants (invariants.ts). A command names its tab and channel by position among the open
 * tabs and the tab's channels (modulo their count), so that it still applies when shrinking removed earlier ones.
 */

/** The bounded quiescence after each action: longer than every bound the design states (see docs/architecture.md#tests). */
export const QUIESCENCE_MS = 30_000;

/** How long the probe broadcast of each step may take to arrive. */
export const PROBE_MS = 2_000;

/** At most this many tabs open at once. */
const MAX_TABS = 5;

/** What the commands know of the world before they run: only what `check` needs. */
export interface Model {
    /** The open tabs, in opening order (a command's tab index is taken modulo their count). */
    tabs: SimTab[];
    hubUp: boolean;
    /** The issue 49 points left out (see known-bugs.ts). */
    known: ReadonlySet<string>;
    /** Whether the hub keeps history (49.8 is left out only without). */
    history: boolean;
    /** Whether user 2's bearer token is a function (49.6's action needs one). */
    bearerFunction: boolean;
    /** Whether user 1's pages read the `XSRF-TOKEN` cookie (no 419 for user 2 then: see FailAuth). */
    xsrfCookie: boolean;
}

/** The channels every open tab holds: what the probe and a raced broadcast go to. */
function joinedChannels(world: World): string[] {
    const names = new Set<string>();
    for (const tab of world.alive()) for (const membership of tab.memberships.values()) if (world.joined(membership)) names.add(membership.name);
    return CHANNELS.filter((name) => names.has(name));
}

/**
 * Run one step: `action`, a broadcast on every joined channel `race` ms after it began (if not null), the quiescence,
 * the probe, the checks.
 */
async function step(world: World, model: Model, label: string, race: number | null, action: () => void | Promise<void>): Promise<void> {
    world.step++;
    log(`${((Date.now() - Date.UTC(2026, 0, 1)) / 1000).toFixed(3)} --- step ${world.step}: ${label}`);
    if (race !== null) setTimeout(() => world.network.broadcast(joinedChannels(world)), race);
    await action();
    await world.settle(QUIESCENCE_MS);
    world.probe = world.network.broadcast(joinedChannels(world))?.id ?? null;
    await world.settle(PROBE_MS);
    model.tabs = world.alive();
    model.hubUp = world.network.up;
    checkInvariants(world, Date.now() - QUIESCENCE_MS - PROBE_MS);
}

/** A command with its raced broadcast. */
abstract class Command implements fc.AsyncCommand<Model, World> {
    constructor(readonly race: number | null) {}
    abstract check(model: Readonly<Model>): boolean;
    abstract act(model: Model, world: World): void | Promise<void>;
    run(model: Model, world: World): Promise<void> {
        return step(world, model, this.toString(), this.race, () => this.act(model, world));
    }
    abstract describe(): string;
    toString(): string {
        return this.describe() + (this.race === null ? "" : ` +broadcast@${this.race}ms`);
    }
}

/** The open tab at position `index` (modulo). */
const tabAt = (model: Readonly<Model>, index: number): SimTab => model.tabs[index % model.tabs.length]!;

/** A page opens in a new tab of `profile` and joins `channels`. */
export class OpenTab extends Command {
    constructor(
        readonly profile: number,
        readonly channels: readonly string[],
        readonly listen: boolean,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length < MAX_TABS;
    }
    act(_model: Model, world: World) {
        world.openTab(this.profile, this.channels, this.listen);
    }
    describe(): string {
        return `OpenTab(user ${this.profile + 1}, [${this.channels.join(", ")}]${this.listen ? ", whispers" : ""})`;
    }
}

/** The page of a tab joins a channel. */
export class Join extends Command {
    constructor(
        readonly tab: number,
        readonly channel: string,
        readonly listen: boolean,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        world.join(tabAt(model, this.tab), this.channel, this.listen);
    }
    describe(): string {
        return `Join(tab #${this.tab}, ${this.channel}${this.listen ? ", whispers" : ""})`;
    }
}

/** The page of a tab leaves one of its channels. */
export class Leave extends Command {
    constructor(
        readonly tab: number,
        readonly channel: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        const tab = tabAt(model, this.tab);
        const names = [...tab.memberships.keys()];
        const name = names[this.channel % names.length];
        if (name === undefined) return;
        world.leave(tab, name);
    }
    describe(): string {
        return `Leave(tab #${this.tab}, its channel #${this.channel})`;
    }
}

/** The page of a tab whispers on one of its guarded channels. */
export class Whisper extends Command {
    constructor(
        readonly tab: number,
        readonly channel: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        const tab = tabAt(model, this.tab);
        const names = [...tab.memberships.keys()].filter(guarded);
        if (names.length > 0) world.whisper(tab, names[this.channel % names.length]!);
    }
    describe(): string {
        return `Whisper(tab #${this.tab}, its guarded channel #${this.channel})`;
    }
}

/** The server broadcasts an event on some channels. */
export class Broadcast extends Command {
    constructor(
        readonly channels: readonly string[],
        race: number | null,
    ) {
        super(race);
    }
    check(): boolean {
        return true;
    }
    act(_model: Model, world: World) {
        world.network.broadcast(this.channels);
    }
    describe(): string {
        return `Broadcast([${this.channels.join(", ")}])`;
    }
}

/** A tab goes away: closed (`pagehide`), discarded (no `pagehide`), or reloaded. */
export class EndTab extends Command {
    constructor(
        readonly tab: number,
        readonly how: "close" | "discard" | "reload",
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        const tab = tabAt(model, this.tab);
        if (this.how === "reload") world.reload(tab);
        else world.close(tab, this.how === "close");
    }
    describe(): string {
        return `${this.how === "close" ? "CloseTab" : this.how === "discard" ? "DiscardTab" : "ReloadTab"}(tab #${this.tab})`;
    }
}

/**
 * The page of a tab goes to the next page of the same browser tab (issue 52: a link, a form's redirect), which creates
 * its connector with `resumeAcrossPages` at once and joins the same channels `joinAfterMs` later; with `rendered`,
 * Laravel rendered that page with the hub's last event id in its `<head>` link.
 */
export class Navigate extends Command {
    constructor(
        readonly tab: number,
        readonly joinAfterMs: number,
        race: number | null,
        readonly rendered = false,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        world.navigate(tabAt(model, this.tab), this.joinAfterMs, this.rendered);
    }
    describe(): string {
        return `Navigate(tab #${this.tab}, joins ${(this.joinAfterMs / 1000).toFixed(1)} s after the load${this.rendered ? ", rendered with the hub's cursor" : ""})`;
    }
}

/** A tab is frozen for a while (the `freeze` event: a leading tab steps down), then resumes (`resume`). */
export class FreezeTab extends Command {
    constructor(
        readonly tab: number,
        readonly ms: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.tabs.length > 0;
    }
    act(model: Model, world: World) {
        return world.freeze(tabAt(model, this.tab), this.ms);
    }
    describe(): string {
        return `FreezeTab(tab #${this.tab}, ${this.ms} ms)`;
    }
}

/** The hub stops (every stream drops, every request fails), or starts again (without history: it forgot every update). */
export class Hub extends Command {
    constructor(
        readonly start: boolean,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.hubUp !== this.start;
    }
    act(_model: Model, world: World) {
        if (this.start) world.network.start();
        else world.network.stop();
    }
    describe(): string {
        return (this.start ? "HubStart" : "HubStop");
    }
}

/**
 * A maintenance window of the hub (a deploy behind its proxy): every connection cut, every request answered 503 for
 * `ms`, a probe's answer `slow` ms late (a retry's backoff may end before it). Each stream refused for good is probed
 * (the probe names `hub_refused`, worth retrying) and retried with backoff once the probe answered: the liveness check
 * holds every join to working again after the window, the error-rate check to one error per failure streak.
 */
export class HubRefuses extends Command {
    constructor(
        readonly ms: number,
        readonly slow: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.hubUp;
    }
    act(_model: Model, world: World) {
        world.network.refuse(this.ms, this.slow);
    }
    describe(): string {
        return `HubRefuses(${this.ms} ms, answers ${this.slow} ms late)`;
    }
}

/** The next auth requests of a profile fail: HTTP 500, 503, or 419 (Laravel's CSRF mismatch: the connector retries once). */
export class FailAuth extends Command {
    constructor(
        readonly profile: number,
        readonly status: AuthFault,
        readonly count: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return !(this.status === 419 && this.profile === 1 && model.xsrfCookie);
    }
    act(_model: Model, world: World) {
        const profile = world.profiles[this.profile]!;
        const queued = world.network.faults.get(profile) ?? [];
        world.network.faults.set(profile, [...queued, ...Array<AuthFault>(this.count).fill(this.status)]);
    }
    describe(): string {
        return `FailAuth(user ${this.profile + 1}, ${this.count} x HTTP ${this.status})`;
    }
}

/**
 * A channel's auth starts failing alone (HTTP 500 for any batch that carries it, whoever sends it), or stops.
 */
export class FailChannel extends Command {
    constructor(
        readonly channel: string,
        readonly failing: boolean,
        race: number | null,
    ) {
        super(race);
    }
    check(): boolean {
        return true;
    }
    act(_model: Model, world: World) {
        if (this.failing) world.network.failing.set(this.channel, null);
        else world.network.failing.delete(this.channel);
    }
    describe(): string {
        return `${this.failing ? "FailChannel" : "HealChannel"}(${this.channel})`;
    }
}

/** The next downloads of a lazy chunk fail (a deploy removed it, the network dropped), then one succeeds. */
export class ChunkOutage extends Command {
    constructor(
        readonly chunk: string,
        readonly failures: number,
        race: number | null,
    ) {
        super(race);
    }
    check(): boolean {
        return true;
    }
    act() {
        outage(this.chunk, this.failures);
    }
    describe(): string {
        return `ChunkOutage(${this.chunk}, ${this.failures} failed download(s))`;
    }
}

/** Time passes (seconds to minutes: cookie renewals at about 211 s, stream ends from the hub). */
export class Advance extends Command {
    constructor(
        readonly ms: number,
        race: number | null,
    ) {
        super(race);
    }
    check(): boolean {
        return true;
    }
    act(_model: Model, world: World) {
        return world.settle(this.ms);
    }
    describe(): string {
        return `Advance(${(this.ms / 1000).toFixed(1)} s)`;
    }
}

/** Laravel sends a new `XSRF-TOKEN` value (another request of the page: every web response carries one). */
export class RotateXsrf extends Command {
    check(): boolean {
        return true;
    }
    act(_model: Model, world: World) {
        world.network.rotateXsrf();
    }
    describe(): string {
        return "RotateXsrf";
    }
}

/** User 2's bearer token function returns a promise that never settles, for its next `count` calls. */
export class HangCredentials extends Command {
    constructor(
        readonly count: number,
        race: number | null,
    ) {
        super(race);
    }
    check(model: Readonly<Model>): boolean {
        return model.bearerFunction;
    }
    act(_model: Model, world: World) {
        world.profiles[1]!.hang += this.count;
    }
    describe(): string {
        return `HangCredentials(user 2, ${this.count} call(s))`;
    }
}

/** The chunks an outage may hit (module paths' ends). */
const CHUNKS = ["presence-capability", "crypto-capability", "jwe", "share-platform", "platform-setup", "credentials", "batch-isolation", "stream-diagnosis", "leadership", "whisper-capability", "whisper/index"] as const;

/** The command generators; `weights` favour what real pages do most (the known bugs leave out what they must in each command). */
export function commandArbitraries(): Array<fc.Arbitrary<fc.AsyncCommand<Model, World>>> {
    const race = fc.option(fc.integer({ min: 0, max: 5_000 }), { freq: 3 });
    const tab = fc.nat(MAX_TABS * 2);
    const channel = fc.constantFrom(...CHANNELS);
    const weighted = <T>(arbitrary: fc.Arbitrary<T>, weight: number) => Array.from({ length: weight }, () => arbitrary);
    const arbitraries: Array<fc.Arbitrary<fc.AsyncCommand<Model, World>>> = [
        ...weighted(
            fc.tuple(fc.constantFrom(0, 0, 1), fc.subarray([...CHANNELS], { maxLength: 3 }), fc.boolean(), race).map(([p, c, l, r]) => new OpenTab(p, c, l, r)),
            3,
        ),
        ...weighted(fc.tuple(tab, channel, fc.boolean(), race).map(([t, c, l, r]) => new Join(t, c, l, r)), 4),
        ...weighted(fc.tuple(tab, fc.nat(5), race).map(([t, c, r]) => new Leave(t, c, r)), 2),
        ...weighted(fc.tuple(tab, fc.nat(5), race).map(([t, c, r]) => new Whisper(t, c, r)), 2),
        ...weighted(fc.tuple(fc.subarray([...CHANNELS], { minLength: 1, maxLength: 3 }), race).map(([c, r]) => new Broadcast(c, r)), 2),
        fc.tuple(tab, fc.constantFrom("close", "discard", "reload" as const), race).map(([t, how, r]) => new EndTab(t, how, r)),
        fc.tuple(tab, fc.integer({ min: 1_000, max: 30_000 }), race).map(([t, ms, r]) => new FreezeTab(t, ms, r)),
        fc.tuple(fc.boolean(), race).map(([start, r]) => new Hub(start, r)),
        fc.tuple(fc.integer({ min: 1_000, max: 20_000 }), fc.constantFrom(0, 500, 3_000), race).map(([ms, slow, r]) => new HubRefuses(ms, slow, r)),
        // With an `XSRF-TOKEN` cookie (user 1's: the realm has one `document.cookie`, see world.ts), a 419 for user 1
        // only: after one the connector reads the cookie, and user 2's pages would read user 1's.
        fc
            .tuple(fc.constantFrom(0, 1), fc.constantFrom<AuthFault>(500, 503, 419), fc.integer({ min: 1, max: 3 }), race)
            .map(([p, s, n, r]) => new FailAuth(p, s, n, r)),
        fc
            .tuple(fc.constantFrom(...CHUNKS), fc.integer({ min: 1, max: 3 }), race)
            .map(([c, n, r]) => new ChunkOutage(c, n, r)),
        fc.tuple(fc.integer({ min: 1_000, max: 300_000 }), race).map(([ms, r]) => new Advance(ms, r)),
    ];
    arbitraries.push(fc.tuple(fc.constantFrom(...CHANNELS.filter(guarded)), fc.boolean(), race).map(([c, f, r]) => new FailChannel(c, f, r)));
    arbitraries.push(race.map((r) => new RotateXsrf(r)));
    arbitraries.push(fc.tuple(fc.integer({ min: 1, max: 2 }), race).map(([n, r]) => new HangCredentials(n, r)));
    // Issue 52's navigations, to a page rendered with the hub's cursor or not, with `resumeAcrossPages`.
    arbitraries.push(...weighted(fc.tuple(tab, fc.integer({ min: 0, max: 3_000 }), race, fc.boolean()).map(([t, ms, r, rendered]) => new Navigate(t, ms, r, rendered)), 2));
    return arbitraries;
}
