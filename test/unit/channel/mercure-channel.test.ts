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

    it("names events for listenToAll() like Echo's Pusher channel, without its namespace:false bug", () => {
        const got: string[] = [];
        const namespaced = new MercureChannel("a", options()).listenToAll((event) => got.push(event));
        namespaced.deliver("App\\Events\\Paid", {});
        namespaced.deliver("App\\EventsX\\Paid", {});
        const bare = new MercureChannel("b", options(false)).listenToAll((event) => got.push(event));
        bare.deliver("Paid", {});
        expect(got).toEqual(["Paid", ".App\\EventsX\\Paid", ".Paid"]);
    });

    it("refuses whisper() on a private channel with a clear error, for now", () => {
        const channel = new MercurePrivateChannel("private-a", options());
        expect(() => channel.whisper("typing", {})).toThrow(MercureError);
        expect(() => channel.whisper("typing", {})).toThrow(/whisper\("typing"\) on channel "private-a"/);
    });
});
