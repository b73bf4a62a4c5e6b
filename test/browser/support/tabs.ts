import type { Browser } from "playwright-core";
import { DEFAULT_TOPIC_PREFIX } from "../../../src/dev/laravel/options";
import { channelTopic, whisperTopic } from "../../../src/dev/laravel/topics";
import type { DevServer } from "../../../src/dev/server";
import type { OpenStream, UngrantedSubscription } from "../../../src/dev/hub";
import { PageHarness, type ChannelSpec, type HarnessSnapshot } from "./harness";
import { HARNESS_PAGE } from "./pages";
import { waitUntil } from "./wait";

/** Generous deadlines: a loaded two-core machine where other suites run at the same time. */
export const DEADLINE = { timeout: 20_000 } as const;

/** The hub topic of a channel (full name, e.g. `private-orders.1`). */
export const topicOf = (channel: string): string => channelTopic(DEFAULT_TOPIC_PREFIX, channel);

/** The hub topic of a channel's whispers (full name). */
export const whisperTopicOf = (channel: string): string => whisperTopic(DEFAULT_TOPIC_PREFIX, channel);

/** Whether a subscription selector is a whisper topic. */
const isWhisperSelector = (selector: string): boolean => selector.startsWith(DEFAULT_TOPIC_PREFIX + "whisper/");

/** Whether a subscription selector is the topic of a public channel (no grant is ever minted for those). */
const isPublicSelector = (selector: string): boolean => {
    const channelPrefix = DEFAULT_TOPIC_PREFIX + "channel/";
    if (!selector.startsWith(channelPrefix)) return false;
    const name = decodeURIComponent(selector.slice(channelPrefix.length));
    return !name.startsWith("private-") && !name.startsWith("presence-");
};

/** The main streams open at the hub now (a whisper stream carries only its whisper topic). */
export function mainStreams(server: DevServer): OpenStream[] {
    return server.hub.stats.openStreams.filter((stream) => !stream.selectors.every(isWhisperSelector));
}

/** The whisper streams open at the hub now. */
export function whisperStreams(server: DevServer): OpenStream[] {
    return server.hub.stats.openStreams.filter((stream) => stream.selectors.every(isWhisperSelector));
}

/**
 * The selectors of guarded channels (private, presence, whisper, presence patterns) that a stream was opened
 * with although its cookie did not grant them: such a stream never receives those channels' updates.
 */
export function ungrantedGuarded(server: DevServer): UngrantedSubscription[] {
    return server.hub.stats.ungrantedSubscriptions.filter((entry) => !isPublicSelector(entry.selector));
}

/** Wait until the main streams open at the hub are `count` and together carry every topic of `channels`. */
export function waitForMainStreams(server: DevServer, count: number, channels: readonly string[]): Promise<OpenStream[]> {
    const topics = channels.map(topicOf);
    return waitUntil(
        `${count} main stream(s) at the hub carrying ${channels.join(", ")}`,
        () => {
            const streams = mainStreams(server);
            const carried = new Set(streams.flatMap((stream) => stream.selectors));
            return streams.length === count && topics.every((topic) => carried.has(topic)) ? streams : null;
        },
        { ...DEADLINE, describe: () => server.hub.stats.openStreams },
    );
}

/**
 * Wait until subscribe requests the hub answered with a stream since record `since` carry every topic of
 * `channels` (the streams reopened after a drop), and one open stream carries each.
 */
export function waitForReopened(server: DevServer, since: number, channels: readonly string[]): Promise<unknown> {
    const topics = channels.map(topicOf);
    return waitUntil(
        `streams reopened for ${channels.join(", ")}`,
        () => {
            const reopened = server.hub.stats.subscribeConnections
                .slice(since)
                .filter((record) => record.status === 200)
                .flatMap((record) => new URLSearchParams(record.query).getAll("match"));
            const open = new Set(server.hub.stats.openStreams.flatMap((stream) => stream.selectors));
            return topics.every((topic) => reopened.includes(topic) && open.has(topic));
        },
        { ...DEADLINE, describe: () => server.hub.stats.subscribeConnections.slice(since) },
    );
}

/** Wait until no stream is open at the hub (the previous test's tabs are gone), within `timeout` ms ({@link DEADLINE} by default). */
export function waitForNoStreams(server: DevServer, timeout: number = DEADLINE.timeout): Promise<unknown> {
    return waitUntil("every stream at the hub to close", () => server.hub.stats.openConnections === 0, {
        timeout,
        describe: () => server.hub.stats.openStreams,
    });
}

/** The event name of numbered updates (`broadcastAs()`), and the listener that receives it. */
export const NUMBERED = "numbered";

/** Broadcast `{n}` for each `n` of `numbers` to `channel` (full name), in order, as event {@link NUMBERED}. */
export async function broadcastNumbered(server: DevServer, channel: string, numbers: readonly number[]): Promise<void> {
    for (const n of numbers) await server.broadcast({ channels: [channel], event: NUMBERED, payload: { n } });
}

/** The `n` of every numbered payload a tab received on `channel`, in arrival order. */
export function numbersOf(snapshot: HarnessSnapshot, channel: string): number[] {
    return snapshot.events
        .filter((event) => event.channel === channel && event.listener === "." + NUMBERED)
        .map((event) => (event.payload as { n: number }).n);
}

/** `[from, from + 1, …, to]`. */
export function range(from: number, to: number): number[] {
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** Wait until the tab received the numbered update `last` on `channel`; resolves with the snapshot. */
export function waitForNumber(tab: PageHarness, channel: string, last: number): Promise<HarnessSnapshot> {
    return tab.waitFor(`numbered update ${last} on ${channel}`, (snapshot) => numbersOf(snapshot, channel).includes(last), DEADLINE);
}

/** A channel spec recording numbered updates (`name` as Echo takes it, without `private-`). */
export function numbered(kind: ChannelSpec["kind"], name: string): ChannelSpec {
    return { kind, name, events: ["." + NUMBERED] };
}

/**
 * The tabs of one browser profile: one context (one cookie jar, one origin's locks and broadcast channels),
 * each tab a page with the harness loaded.
 */
export class Profile {
    /** The tabs opened so far, in order (closed ones included). */
    readonly tabs: PageHarness[] = [];

    private constructor(private readonly first: PageHarness) {
        this.tabs.push(first);
    }

    /** Open a profile with one tab at `path`, logged in as `userId`. */
    static async open(browser: Browser, origin: string, userId: number, path: string = HARNESS_PAGE): Promise<Profile> {
        return new Profile(await PageHarness.open(browser, origin, userId, path));
    }

    /** The first tab. */
    get firstTab(): PageHarness {
        return this.first;
    }

    /** Open another tab of the profile at `path` (fails if the page does not load within the deadline). */
    async openTab(path: string = HARNESS_PAGE): Promise<PageHarness> {
        const tab = await this.first.openTab(path, DEADLINE.timeout);
        this.tabs.push(tab);
        return tab;
    }

    /** Uncaught exceptions of every tab. */
    get pageErrors(): string[] {
        return this.tabs.flatMap((tab) => tab.pageErrors);
    }

    /** Close the profile and every tab. */
    close(): Promise<void> {
        return this.first.close();
    }
}

/** Create Echo in the tab and join `channels`; resolves once `subscribed()` fired for all of them. */
export async function startTab(tab: PageHarness, channels: ChannelSpec[], options: Record<string, unknown> = {}): Promise<string> {
    const socketId = await tab.create(options);
    await tab.join(...channels);
    await tab.waitForSubscribed(channels.map(fullName), DEADLINE);
    return socketId;
}

/** The full channel name of a spec. */
export function fullName(spec: ChannelSpec): string {
    switch (spec.kind) {
        case "private":
            return "private-" + spec.name;
        case "encrypted":
            return "private-encrypted-" + spec.name;
        case "presence":
            return "presence-" + spec.name;
        default:
            return spec.name;
    }
}
