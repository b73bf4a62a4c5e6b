import { describe, expect, it } from "vitest";
import { channelKind, normaliseChannelName } from "../../../src/dev/laravel";
import { ChannelRegistry } from "../../../src/dev/laravel/channels";

const ann = { id: 42, name: "Ann" };

describe("channel names", () => {
    it("classifies names by prefix, private-encrypted- before private-", () => {
        expect(channelKind("news")).toBe("public");
        expect(channelKind("private-room.1")).toBe("private");
        expect(channelKind("private-encrypted-room.1")).toBe("encrypted");
        expect(channelKind("presence-room.1")).toBe("presence");
        expect(channelKind("privateroom")).toBe("public");
    });

    it("normalises by stripping the first matching prefix only", () => {
        expect(normaliseChannelName("private-encrypted-orders.1")).toBe("orders.1");
        expect(normaliseChannelName("private-private-x")).toBe("private-x");
        expect(normaliseChannelName("presence-lobby")).toBe("lobby");
        expect(normaliseChannelName("news")).toBe("news");
    });
});

describe("channel registry", () => {
    it("matches Laravel patterns on the normalised name and captures one dot-free segment per parameter", async () => {
        const registry = new ChannelRegistry();
        const seen: Array<Record<string, string>> = [];
        registry.add("orders.{id}.items.{item}", (_user, params) => {
            seen.push({ ...params });
            return true;
        });
        expect(await registry.authorize("private-encrypted-orders.1.items.7", ann)).toEqual({ granted: true, result: true });
        expect(seen).toEqual([{ id: "1", item: "7" }]);
        expect(await registry.authorize("private-orders.1.2.items.7", ann)).toEqual({ granted: false });
        expect(await registry.authorize("private-ordersX1.items.7", ann)).toEqual({ granted: false });
        expect(await registry.authorize("private-unknown", ann)).toEqual({ granted: false });
    });

    it("denies on false, tries later patterns on null or undefined, and allows other values", async () => {
        const registry = new ChannelRegistry();
        registry.add("room.{id}", (_user, { id }) => (id === "0" ? false : id === "1" ? null : { id }));
        registry.add("room.{id}", () => "fallback");
        expect(await registry.authorize("private-room.0", ann)).toEqual({ granted: false });
        expect(await registry.authorize("private-room.1", ann)).toEqual({ granted: true, result: "fallback" });
        expect(await registry.authorize("presence-room.2", ann)).toEqual({ granted: true, result: { id: "2" } });
    });

    it.each([
        ["an empty array", []],
        ["0", 0],
        ["an empty string", ""],
        ['"0"', "0"],
        ["an empty object (an empty PHP array)", {}],
        ["undefined", undefined],
    ])("treats %s as no decision, as PHP's falsy results: the next match decides, else denied", async (_label, falsy) => {
        const alone = new ChannelRegistry();
        alone.add("room.{id}", () => falsy);
        expect(await alone.authorize("private-room.1", ann)).toEqual({ granted: false });
        const followed = new ChannelRegistry();
        followed.add("room.{id}", () => falsy);
        followed.add("room.{id}", () => ["member"]);
        expect(await followed.authorize("presence-room.1", ann)).toEqual({ granted: true, result: ["member"] });
    });

    it("grants on PHP-truthy results", async () => {
        for (const truthy of [1, -1, "a", "false", " ", [0], { id: 0 }, Number.NaN]) {
            const registry = new ChannelRegistry();
            registry.add("room.{id}", () => truthy);
            expect(await registry.authorize("private-room.1", ann)).toEqual({ granted: true, result: truthy });
        }
    });

    it("awaits callbacks that return promises and passes the user", async () => {
        const registry = new ChannelRegistry();
        registry.add("user.{id}", async (user, { id }) => String(user.id) === id);
        expect(await registry.authorize("private-user.42", ann)).toEqual({ granted: true, result: true });
        expect(await registry.authorize("private-user.7", ann)).toEqual({ granted: false });
    });

    it("treats regular-expression characters in patterns literally", async () => {
        const registry = new ChannelRegistry();
        registry.add("a+b.{id}", () => true);
        expect((await registry.authorize("private-a+b.1", ann)).granted).toBe(true);
        expect((await registry.authorize("private-aab.1", ann)).granted).toBe(false);
    });
});
