import { describe, expect, it } from "vitest";
import { bearer, cookie, detail, startHub, subscribe, subscribeUrl, token } from "./helpers";

// The hub's test hooks for tab sharing: which selectors an opened stream carried without a subscribe grant
// of its token (a stream opened with another tab's cookie), and which streams are open now.

const A = "https://laravel.alt/echo/channel/private-orders.1";
const B = "https://laravel.alt/echo/channel/private-chat.1";
const WHISPER_A = "https://laravel.alt/echo/whisper/private-orders.1";
const PRESENCE = "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.1{/:subscriber}?";
const OTHER_PATTERN = "/.well-known/mercure/subscriptions/:match_type/https%3A%2F%2Flaravel.alt%2Fecho%2Fchannel%2Fpresence-room.2{/:subscriber}?";

describe("ungrantedSubscriptions", () => {
    it("records each selector of an opened stream that no subscribe grant covers, with the request's query", async () => {
        const hub = await startHub();
        const jwt = token(hub, [detail(["subscribe"], [A, { match: PRESENCE, match_type: "urlpattern" }]), detail(["publish"], [B])]);
        const params: [string, string][] = [
            ["match", A],
            ["match", B],
            ["match_urlpattern", PRESENCE],
            ["match_urlpattern", OTHER_PATTERN],
        ];
        await subscribe(hub, params, cookie(jwt));
        const query = new URL(subscribeUrl(hub, params)).search.slice(1);
        // B has only a publish grant; the other pattern has none. A and the identical pattern are granted.
        expect(hub.hub.stats.ungrantedSubscriptions).toEqual([
            { query, selector: B, anonymous: false, at: expect.any(Number) },
            { query, selector: OTHER_PATTERN, anonymous: false, at: expect.any(Number) },
        ]);
    });

    it("counts a wildcard or URL-pattern grant that selects an exact topic as granted", async () => {
        const hub = await startHub();
        await subscribe(hub, [["match", A], ["match", B]], bearer(token(hub, [detail(["subscribe"], ["*"])])));
        await subscribe(hub, [["match", A]], bearer(token(hub, [detail(["subscribe"], [{ match: "https://laravel.alt/echo/channel/{:name}", match_type: "urlpattern" }])])));
        expect(hub.hub.stats.ungrantedSubscriptions).toEqual([]);
    });

    it("records every selector of an anonymous stream, and nothing for a refused request", async () => {
        const closed = await startHub();
        const refused = await fetch(subscribeUrl(closed, [["match", A]]));
        await refused.body?.cancel();
        expect(refused.status).toBe(401);
        expect(closed.hub.stats.ungrantedSubscriptions).toEqual([]);

        const open = await startHub({ anonymous: true });
        await subscribe(open, [["match", A]]);
        expect(open.hub.stats.ungrantedSubscriptions).toEqual([{ query: `match=${encodeURIComponent(A)}`, selector: A, anonymous: true, at: expect.any(Number) }]);
        open.hub.resetStats();
        expect(open.hub.stats.ungrantedSubscriptions).toEqual([]);
    });
});

describe("openStreams", () => {
    it("lists the selectors of every stream open now, and forgets a stream once it closed", async () => {
        const hub = await startHub();
        const jwt = token(hub, [detail(["subscribe", "publish"], [A, WHISPER_A])]);
        const main = await subscribe(hub, [["match", A], ["match", B]], cookie(jwt));
        await subscribe(hub, [["match", WHISPER_A], ["last_event_id", "earliest"]], cookie(jwt));
        expect(hub.hub.stats.openStreams.map((stream) => stream.selectors)).toEqual([[A, B], [WHISPER_A]]);
        expect(new Set(hub.hub.stats.openStreams.map((stream) => stream.id)).size).toBe(2);
        main.close();
        await main.waitFor(() => hub.hub.stats.openConnections === 1, 5_000);
        expect(hub.hub.stats.openStreams.map((stream) => stream.selectors)).toEqual([[WHISPER_A]]);
    });
});
