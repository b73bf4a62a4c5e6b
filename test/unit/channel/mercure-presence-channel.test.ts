import type { PresenceChannel } from "laravel-echo";
import { describe, expect, expectTypeOf, it, vi } from "vitest";
import { MercurePresenceChannel } from "../../../src/presence/mercure-presence-channel";
import { MercurePrivateChannel } from "../../../src/channel/mercure-private-channel";
import { MercureError } from "../../../src/errors";
import { createPresenceRooms } from "../../../src/presence/presence-rooms";
import type { Subscription } from "../../../src/presence/subscription-event";
import { DEFAULT_LEAVE_DELAY } from "../../../src/presence/roster";
import { withRoster } from "../../fakes/presence-channel";

/** `leaveDelay: 0`: these tests assert each `leaving` as it happens. */
const options = { namespace: "App.Events", leaveDelay: 0 } as never;
const TOPIC = "https://laravel.alt/echo/channel/presence-room";

interface Person {
    id: number;
    name: string;
}

const ann: Person = { id: 1, name: "Ann" };
const bob: Person = { id: 2, name: "Bob" };
const member = (subscriber: string, person: Person, active = true): Subscription => ({
    topic: TOPIC,
    subscriber,
    active,
    payload: { user_id: String(person.id), user_info: person },
});

describe("MercurePresenceChannel", () => {
    it("is a private channel with Echo's presence API, each method returning the channel", () => {
        const channel = withRoster(new MercurePresenceChannel("presence-room", options));
        expect(channel).toBeInstanceOf(MercurePrivateChannel);
        expect(channel.here(() => undefined)).toBe(channel);
        expect(channel.joining(() => undefined)).toBe(channel);
        expect(channel.leaving(() => undefined)).toBe(channel);
        expect(channel.listen(".x", () => undefined)).toBe(channel);
    });

    it("calls here() on the seed, and a here() registered after seeding at once with the current members", () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", options));
        const calls: string[] = [];
        channel.here((members) => calls.push("early " + members.map((m) => m.name).join(",")));
        expect(calls).toEqual([]);
        channel.roster.seed([member("s1", ann), member("s2", ann)]);
        channel.roster.apply(member("s3", bob));
        channel.here((members) => calls.push("late " + members.map((m) => m.name).join(",")));
        channel.roster.apply(member("s1", ann, false));
        channel.roster.apply(member("s2", ann, false));
        channel.here((members) => calls.push("later " + members.map((m) => m.name).join(",")));
        expect(calls).toEqual(["early Ann", "late Ann,Bob", "later Bob"]);
    });

    it("calls joining() and leaving() with the member's info", () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", options));
        const calls: Array<[string, Person]> = [];
        channel.joining((person) => calls.push(["joining", person])).leaving((person) => calls.push(["leaving", person]));
        channel.roster.seed([]);
        channel.roster.apply(member("s1", bob));
        channel.roster.apply(member("s1", bob, false));
        expect(calls).toEqual([
            ["joining", bob],
            ["leaving", bob],
        ]);
    });

    it("reports a throwing callback on error() and still runs the other callbacks", () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", options));
        const errors: MercureError[] = [];
        const calls: string[] = [];
        channel.error((error: MercureError) => errors.push(error));
        channel.here(() => {
            throw new Error("here broke");
        });
        channel.here(() => calls.push("here"));
        channel.joining(() => {
            throw new Error("joining broke");
        });
        channel.joining(() => calls.push("joining"));
        channel.leaving(() => {
            throw "leaving broke";
        });
        channel.leaving(() => calls.push("leaving"));
        channel.roster.seed([]);
        channel.roster.apply(member("s1", bob));
        channel.roster.apply(member("s1", bob, false));
        channel.here(() => {
            throw new Error("late here broke");
        });
        expect(calls).toEqual(["here", "joining", "leaving"]);
        expect(errors.map((error) => [error.code, error.channel, error.message])).toEqual([
            ["callback_failed", "presence-room", 'A here() callback on channel "presence-room" threw (here broke); fix the callback, the other callbacks still ran.'],
            ["callback_failed", "presence-room", 'A joining() callback on channel "presence-room" threw (joining broke); fix the callback, the other callbacks still ran.'],
            ["callback_failed", "presence-room", 'A leaving() callback on channel "presence-room" threw (leaving broke); fix the callback, the other callbacks still ran.'],
            ["callback_failed", "presence-room", 'A here() callback on channel "presence-room" threw (late here broke); fix the callback, the other callbacks still ran.'],
        ]);
        expect(errors[0]).toBeInstanceOf(MercureError);
        expect((errors[0]?.cause as Error).message).toBe("here broke");
    });

    it("survives an error() callback that throws too", () => {
        const channel = withRoster(new MercurePresenceChannel("presence-room", options));
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const calls: string[] = [];
        channel.error(() => {
            throw new Error("error() broke");
        });
        channel.joining(() => {
            throw new Error("joining broke");
        });
        channel.joining(() => calls.push("second"));
        channel.roster.seed([]);
        expect(() => channel.roster.apply(member("s1", bob))).not.toThrow();
        expect(calls).toEqual(["second"]);
        logged.mockRestore();
    });

    it("lets a callback register another one without calling it for the current change", () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", options));
        const calls: string[] = [];
        channel.joining(() => {
            calls.push("first");
            channel.joining(() => calls.push("added"));
        });
        channel.roster.seed([]);
        channel.roster.apply(member("s1", ann));
        expect(calls).toEqual(["first"]);
        channel.roster.apply(member("s2", bob));
        expect(calls).toEqual(["first", "first", "added"]);
    });

    it("whispers like a private channel: whisper() returns the channel, listenForWhisper() hears client events", () => {
        const channel = withRoster(new MercurePresenceChannel("presence-room", options));
        expect(channel.whisper("typing", {})).toBe(channel);
        const got: unknown[] = [];
        channel.listenForWhisper("typing", (payload: unknown) => got.push(payload));
        channel.deliver("client-typing", { who: 1 });
        expect(got).toEqual([{ who: 1 }]);
    });

    it("is seeded through the connector's presence rooms", async () => {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", options));
        const seen: Person[][] = [];
        channel.here((members) => seen.push(members));
        const rooms = createPresenceRooms();
        rooms.add(channel);
        rooms.patterns(new URL("https://app.test/.well-known/mercure"), ["presence-room"], [TOPIC]);
        rooms.streamOpened(["presence-room"], async () => ({ kind: "ok", members: [member("s1", ann)] }));
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(seen).toEqual([[ann]]);
    });

    it("is typed as Echo's PresenceChannel, with unknown members by default and typed members when given", () => {
        expectTypeOf<MercurePresenceChannel>().toExtend<PresenceChannel>();
        expectTypeOf<MercurePresenceChannel<Person>>().toExtend<PresenceChannel>();
        expectTypeOf<Parameters<Parameters<MercurePresenceChannel["here"]>[0]>[0]>().toEqualTypeOf<unknown[]>();
        expectTypeOf<Parameters<Parameters<MercurePresenceChannel<Person>["joining"]>[0]>[0]>().toEqualTypeOf<Person>();
        expectTypeOf<ReturnType<MercurePresenceChannel<Person>["leaving"]>>().toEqualTypeOf<MercurePresenceChannel<Person>>();
        const echoTyped: PresenceChannel = new MercurePresenceChannel("presence-room", options);
        expect(echoTyped.here((members: unknown) => members)).toBe(echoTyped);
    });
});

describe("MercurePresenceChannel leaveDelay option", () => {
    /** A channel with `extra` options whose callbacks log, seeded with Ann, Ann's subscription then ended. */
    function annLeft(extra: Record<string, unknown>): string[] {
        const channel = withRoster(new MercurePresenceChannel<Person>("presence-room", { namespace: "App.Events", ...extra } as never));
        const log: string[] = [];
        channel.here((members) => log.push("here " + members.map((m) => m.name).join(",")));
        channel.leaving((person) => log.push("leaving " + person.name));
        channel.roster.seed([member("s1", ann)]);
        channel.roster.apply(member("s1", ann, false));
        return log;
    }

    it("holds leaving back for the connector's leaveDelay milliseconds", () => {
        vi.useFakeTimers();
        try {
            const log = annLeft({ leaveDelay: 2500 });
            vi.advanceTimersByTime(2499);
            expect(log).toEqual(["here Ann"]);
            vi.advanceTimersByTime(1);
            expect(log).toEqual(["here Ann", "leaving Ann"]);
        } finally {
            vi.useRealTimers();
        }
    });

    it("reports leaving at once with leaveDelay: 0", () => {
        expect(annLeft({ leaveDelay: 0 })).toEqual(["here Ann", "leaving Ann"]);
    });

    it("holds leaving back for DEFAULT_LEAVE_DELAY without the option, and for a value that is not a number ≥ 0", () => {
        expect(DEFAULT_LEAVE_DELAY).toBe(5_000);
        vi.useFakeTimers();
        try {
            for (const extra of [{}, { leaveDelay: "3000" }, { leaveDelay: -1 }]) {
                const log = annLeft(extra);
                vi.advanceTimersByTime(DEFAULT_LEAVE_DELAY - 1);
                expect(log).toEqual(["here Ann"]);
                vi.advanceTimersByTime(1);
                expect(log).toEqual(["here Ann", "leaving Ann"]);
            }
        } finally {
            vi.useRealTimers();
        }
    });
});
