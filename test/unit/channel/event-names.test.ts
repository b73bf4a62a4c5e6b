import { describe, expect, it, vi } from "vitest";
import { MercureChannel } from "../../../src/channel/mercure-channel";

const options = { namespace: "App.Events" } as never;

describe("event names from the hub (laravel-mercure §9 item 22)", () => {
    it("are ordinary names: Object.prototype members neither crash dispatch nor reach a listener of another name", async () => {
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
        const channel = new MercureChannel("news", options);
        const got: string[] = [];
        channel.listen(".__proto__", () => got.push("__proto__")).listen(".constructor", () => got.push("constructor"));
        for (const event of ["toString", "hasOwnProperty", "valueOf", "__proto__", "constructor", "__defineGetter__"]) channel.deliver(event, {});
        expect(got).toEqual(["__proto__", "constructor"]);
        expect(logged).not.toHaveBeenCalled();
        await vi.dynamicImportSettled(); // The warning's text is a lazy chunk.
        // The unmatched names are warned about once each ("my listener never fires"), as any other name.
        expect(warned.mock.calls.map(([message]) => / for "(\w+)"/.exec(String(message))?.[1])).toEqual(["toString", "hasOwnProperty", "valueOf", "__defineGetter__"]);
        logged.mockRestore();
        warned.mockRestore();
    });
});
