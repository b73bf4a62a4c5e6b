import { describe, expect, it, vi } from "vitest";
import { MercureChannel } from "../../../src/channel/mercure-channel";

const options = { namespace: "App.Events" } as never;

describe("event names from the hub (laravel-mercure §9 item 22)", () => {
    it("are ordinary names: Object.prototype members neither crash dispatch nor reach a listener of another name", () => {
        const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
        const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);
        const channel = new MercureChannel("news", options);
        const got: string[] = [];
        channel.listen(".__proto__", () => got.push("__proto__")).listen(".constructor", () => got.push("constructor"));
        for (const event of ["toString", "hasOwnProperty", "valueOf", "__proto__", "constructor", "__defineGetter__"]) channel.deliver(event, {});
        expect(got).toEqual(["__proto__", "constructor"]);
        expect(logged).not.toHaveBeenCalled();
        expect(warned).not.toHaveBeenCalled();
        logged.mockRestore();
        warned.mockRestore();
    });
});
