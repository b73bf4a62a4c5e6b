import { EventSource as NodeEventSource } from "eventsource";
import { describe, expectTypeOf, it } from "vitest";
import type { EventSourceConstructor, FetchLike } from "../../src/transport/platform";
import { MercureConnector } from "../../src/connector/mercure-connector";
import { encryptedPrivate, MercureEcho } from "../../src/connector/mercure-echo";
import type { MercurePrivateChannel } from "../../src/channel/mercure-private-channel";

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
});
