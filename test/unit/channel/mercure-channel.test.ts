import { describe, expect, it, vi } from "vitest";
import { MercureChannel } from "../../../src/channel/mercure-channel";
import { MercurePrivateChannel } from "../../../src/channel/mercure-private-channel";
import { MercureError } from "../../../src/errors";

const options = (namespace: string | false = "App.Events") => ({ namespace }) as never;

describe("MercureChannel", () => {
    it("keys listeners by Echo's formatted event name", () => {
        const channel = new MercureChannel("news", options());
        const got: string[] = [];
        channel.listen("Sub.Event", () => got.push("namespaced")).listen(".raw", () => got.push("raw"));
        channel.deliver("App\\Events\\Sub\\Event", {});
        channel.deliver("raw", {});
        channel.deliver("Sub.Event", {});
        expect(got).toEqual(["namespaced", "raw"]);
    });

    it("calls a subscribed() callback registered after the subscription at once, and each one once per connection", () => {
        const channel = new MercureChannel("news", options());
        const calls: string[] = [];
        channel.subscribed(() => calls.push("early"));
        channel.markSubscribed();
        channel.markSubscribed();
        channel.subscribed(() => calls.push("late"));
        channel.markUnsubscribed();
        channel.markSubscribed();
        expect(calls).toEqual(["early", "late", "early", "late"]);
    });

    it("hands errors to error() callbacks, and warns when nobody listens", () => {
        const channel = new MercureChannel("news", options());
        const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
        const error = new MercureError("auth_denied", "denied", { channel: "news" });
        channel.reportError(error);
        expect(warn).toHaveBeenCalledWith("laravel-echo-mercure: denied");
        const seen: MercureError[] = [];
        channel.error((e: MercureError) => seen.push(e));
        channel.reportError(error);
        expect(seen).toEqual([error]);
        expect(warn).toHaveBeenCalledTimes(1);
        warn.mockRestore();
    });

    it("reports a throwing callback of any kind on error() as callback_failed, and still runs the others", () => {
        const channel = new MercureChannel("news", options());
        const calls: string[] = [];
        const errors: MercureError[] = [];
        channel.error((error: MercureError) => errors.push(error));
        channel
            .listen(".tick", () => {
                throw new Error("listener broke");
            })
            .listen(".tick", () => calls.push("listener"))
            .listenToAll(() => {
                throw "any broke";
            })
            .listenToAll(() => calls.push("any"))
            .subscribed(() => {
                throw new Error("subscribed broke");
            })
            .subscribed(() => calls.push("subscribed"));
        channel.deliver("tick", {});
        channel.markSubscribed();
        expect(calls).toEqual(["listener", "any", "subscribed"]);
        expect(errors.map((error) => [error.code, error.channel, error.message])).toEqual([
            ["callback_failed", "news", 'A listen("tick") callback on channel "news" threw (listener broke); fix the callback, the other callbacks still ran.'],
            ["callback_failed", "news", 'A listenToAll() callback on channel "news" threw (any broke); fix the callback, the other callbacks still ran.'],
            ["callback_failed", "news", 'A subscribed() callback on channel "news" threw (subscribed broke); fix the callback, the other callbacks still ran.'],
        ]);
        expect(errors[0]).toBeInstanceOf(MercureError);
        expect((errors[0]?.cause as Error).message).toBe("listener broke");
    });

    it("logs a throwing callback with its error when nobody listens on error(), and never reports a throwing error() callback again", () => {
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const channel = new MercureChannel("news", options());
        const thrown = new Error("listener broke");
        channel.listen(".tick", () => {
            throw thrown;
        });
        channel.deliver("tick", {});
        expect(logged.mock.calls).toEqual([
            ['laravel-echo-mercure: A listen("tick") callback on channel "news" threw (listener broke); fix the callback, the other callbacks still ran.', thrown],
        ]);
        const seen: string[] = [];
        const broken = new Error("error() broke");
        channel.error(() => {
            seen.push("first");
            throw broken;
        });
        channel.error(() => seen.push("second"));
        expect(() => channel.deliver("tick", {})).not.toThrow();
        expect(seen).toEqual(["first", "second"]);
        expect(logged.mock.calls.slice(1)).toEqual([['laravel-echo-mercure: an error() callback on channel "news" threw.', broken]]);
        logged.mockRestore();
    });

    it("names events for listenToAll() like Echo's Pusher channel, without its namespace:false bug", () => {
        const got: string[] = [];
        const namespaced = new MercureChannel("a", options()).listenToAll((event) => got.push(event));
        namespaced.deliver("App\\Events\\Paid", {});
        namespaced.deliver("App\\EventsX\\Paid", {});
        const bare = new MercureChannel("b", options(false)).listenToAll((event) => got.push(event));
        bare.deliver("Paid", {});
        expect(got).toEqual(["Paid", ".App\\EventsX\\Paid", ".Paid"]);
    });

    it("refuses whisper() on a public channel with an unsupported error naming it and the channel kinds that can", () => {
        const channel = new MercureChannel("news", options());
        expect(() => channel.whisper("typing", {})).toThrow(MercureError);
        expect(() => channel.whisper("typing", {})).toThrow(
            'Public channel "news" cannot whisper: use a private, presence or encrypted private channel.',
        );
    });

    it("logs a warning for a whisper listener on a public channel, and registers it all the same", () => {
        const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
        const got: unknown[] = [];
        const channel = new MercureChannel("news", options()).listenForWhisper("typing", (data: unknown) => got.push(data));
        expect(warn.mock.calls).toEqual([['laravel-echo-mercure: public channel "news" receives no whispers; listen for them on a private or presence channel.']]);
        channel.stopListeningForWhisper("typing");
        expect(warn).toHaveBeenCalledTimes(1);
        warn.mockRestore();
    });

    it("tells its connector about whisper listeners: after each listenForWhisper() and stopListeningForWhisper(), and listen(\".client-…\")", () => {
        const channel = new MercurePrivateChannel("private-a", options());
        const seen: boolean[] = [];
        channel.whisperLink = { whisper: () => undefined, listening: (changed) => seen.push(changed.hasWhisperListeners()) };
        const typing = () => undefined;
        channel.listen("OrderShipped", () => undefined);
        channel.listenForWhisper("typing", typing).listenForWhisper("typing", () => undefined).listen(".client-moved", () => undefined);
        channel.stopListeningForWhisper("typing", typing);
        channel.stopListeningForWhisper("typing");
        channel.stopListening(".client-moved");
        channel.stopListening("OrderShipped");
        expect(seen).toEqual([true, true, true, true, true, false]);
    });

    it("hands whisper() to its connector, and does nothing without one (a channel nobody joined)", () => {
        const channel = new MercurePrivateChannel("private-a", options());
        expect(channel.whisper("typing", { a: 1 })).toBe(channel);
        const sent: unknown[] = [];
        channel.whisperLink = { whisper: (from, event, data) => sent.push([from, event, data]), listening: () => undefined };
        expect(channel.whisper("typing", { a: 1 })).toBe(channel);
        expect(sent).toEqual([[channel, "typing", { a: 1 }]]);
    });
});
