import { describe, expect, it } from "vitest";
import { DEFAULT_AUTH_TIMEOUT, resolveAuthTimeout, resolveHubTimeouts } from "../../../src/connector/options";

describe("option resolution", () => {
    it("takes hubTimeouts that make sense and defaults the rest to the reference hub's", () => {
        expect(resolveHubTimeouts(undefined)).toEqual({ dispatch: 5_000, write: 600_000 });
        expect(resolveHubTimeouts({ dispatch: 0, write: Infinity })).toEqual({ dispatch: 0, write: Infinity });
        expect(resolveHubTimeouts({ dispatch: 250 })).toEqual({ dispatch: 250, write: 600_000 });
        expect(resolveHubTimeouts({ dispatch: -1, write: 0 })).toEqual({ dispatch: 5_000, write: 600_000 });
        expect(resolveHubTimeouts({ dispatch: Number.NaN, write: "60" })).toEqual({ dispatch: 5_000, write: 600_000 });
    });

    it("takes a positive authTimeout, else the default", () => {
        expect([resolveAuthTimeout(2_000), resolveAuthTimeout(0), resolveAuthTimeout(Number.NaN), resolveAuthTimeout("5")]).toEqual([
            2_000,
            DEFAULT_AUTH_TIMEOUT,
            DEFAULT_AUTH_TIMEOUT,
            DEFAULT_AUTH_TIMEOUT,
        ]);
    });
});
