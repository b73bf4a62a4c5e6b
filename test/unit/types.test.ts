import { EventSource as NodeEventSource } from "eventsource";
import type Echo from "laravel-echo";
import { describe, expectTypeOf, it } from "vitest";
import type { EventSourceConstructor, FetchLike } from "../../src/transport/platform";
import { MercureConnector } from "../../src/connector/mercure-connector";
import { encryptedPrivate, type MercureEcho } from "../../src/connector/mercure-echo";
import type { MercurePrivateChannel } from "../../src/channel/mercure-private-channel";
import type { BroadcastNotification, MercureChannel } from "../../src/index";
import type { MercureError } from "../../src/errors";

/*
 * These checks run in `npm run typecheck` (tsc, strict): a regression is a compile error, not a failed
 * assertion. The functions are never called.
 */

describe("public types", () => {
    it("accept the browser's EventSource and the eventsource package's as the eventSource option", () => {
        expectTypeOf(globalThis.EventSource).toExtend<EventSourceConstructor>();
        expectTypeOf(NodeEventSource).toExtend<EventSourceConstructor>();
        expectTypeOf(globalThis.fetch).toExtend<FetchLike>();
        expectTypeOf<ConstructorParameters<typeof MercureConnector>[0]["fetch"]>().toEqualTypeOf<FetchLike | undefined>();
    });

    it("type an encrypted private channel as a private channel, whichever way it is joined", () => {
        expectTypeOf<ReturnType<MercureEcho["encryptedPrivate"]>>().toEqualTypeOf<MercurePrivateChannel>();
        expectTypeOf<ReturnType<MercureConnector["encryptedPrivateChannel"]>>().toEqualTypeOf<MercurePrivateChannel>();
        expectTypeOf<ReturnType<typeof encryptedPrivate>>().toEqualTypeOf<MercurePrivateChannel>();
    });

    it("type channel callbacks, so that unannotated callbacks compile under strict TypeScript", () => {
        // Each callback below is unannotated: with `CallableFunction` parameters they fail with TS7006.
        const usage = (echo: MercureEcho, channel: MercureChannel): void => {
            echo.private("orders.1")
                .listen<{ order: { id: number } }>("OrderShipped", (e) => expectTypeOf(e.order.id).toEqualTypeOf<number>())
                .listen("Untyped", (payload) => expectTypeOf(payload).toEqualTypeOf<unknown>())
                .error((error) => expectTypeOf(error).toEqualTypeOf<MercureError>())
                .notification((notification) => expectTypeOf(notification).toEqualTypeOf<BroadcastNotification>())
                .subscribed(() => undefined);
            echo.listen<string>("news", ".post.published", (title) => expectTypeOf(title).toEqualTypeOf<string>());
            echo.connector.onConnectionChange((status) => expectTypeOf(status).toEqualTypeOf<ReturnType<MercureConnector["connectionStatus"]>>());
            channel.listenForWhisper<{ typing: boolean }>("typing", (data) => expectTypeOf(data.typing).toEqualTypeOf<boolean>());
            channel.notification<{ id: string; type: string; amount: number }>((n) => expectTypeOf(n.amount).toEqualTypeOf<number>());
        };
        expectTypeOf(usage).toBeFunction();
    });

    it("make a MercureEcho usable where an app expects an Echo", () => {
        // Apps declare `window.Echo: Echo<any>`, and hooks take an `Echo<any>`.
        expectTypeOf<MercureEcho>().toExtend<Echo<any>>();
        expectTypeOf<MercureEcho["connector"]>().toEqualTypeOf<MercureConnector>();
        expectTypeOf<ReturnType<MercureEcho["channel"]>>().toEqualTypeOf<MercureChannel>();
    });
});
