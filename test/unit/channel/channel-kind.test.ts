import { describe, expect, it } from "vitest";
import { CHANNEL_PREFIXES, channelKind } from "../../../src/channel/channel-kind";

describe("channelKind", () => {
    it("decides a channel's kind by its full prefix", () => {
        expect(channelKind("news")).toBe("public");
        expect(channelKind("private-orders.1")).toBe("private");
        expect(channelKind("private-encrypted-orders.1")).toBe("encrypted");
        expect(channelKind("presence-room.1")).toBe("presence");
        expect(channelKind("private-")).toBe("private");
        expect(channelKind("encrypted-x")).toBe("public");
        expect(channelKind("Private-x")).toBe("public");
        expect(channelKind("presence")).toBe("public");
    });

    it("lists the prefix of every kind, as leave(name) removes them", () => {
        expect(CHANNEL_PREFIXES.map((prefix) => channelKind(prefix + "x"))).toEqual(["public", "private", "encrypted", "presence"]);
    });
});
