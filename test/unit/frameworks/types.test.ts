import { describe, expectTypeOf, it } from "vitest";
import type { MercurePrivateChannel } from "../../../src/index";
import * as react from "../../../src/react/index";
import * as vue from "../../../src/vue/index";

/*
 * These checks run in `npm run typecheck` (tsc, strict): a regression is a compile error, not a failed assertion.
 * The functions that would configure Echo are never called.
 */

describe("configureEcho of laravel-echo-mercure/react and /vue", () => {
    it("accepts broadcaster \"mercure\", none, MercureConnector and the connector's options, without casts; refuses other broadcasters", () => {
        for (const { configureEcho } of [react, vue]) {
            const neverCalled = () => {
                configureEcho({ broadcaster: "mercure" });
                configureEcho({});
                configureEcho();
                configureEcho({ authEndpoint: "/api/broadcasting/auth", auth: { headers: { "X-Tenant": "1" } }, csrfToken: "t", bearerToken: null, namespace: false, debug: true });
                // @ts-expect-error Another broadcaster belongs to the framework package's own configureEcho.
                configureEcho({ broadcaster: "reverb" });
            };
            expectTypeOf(neverCalled).returns.toBeVoid();
        }
    });

    it("types useEchoEncrypted's payload and channel", () => {
        expectTypeOf(react.useEchoEncrypted<{ note: string }>).parameter(2).toEqualTypeOf<(payload: { note: string }) => void>();
        expectTypeOf<ReturnType<typeof react.useEchoEncrypted>["channel"]>().returns.toEqualTypeOf<MercurePrivateChannel | null>();
        expectTypeOf(vue.useEchoEncrypted<{ note: string }>).parameter(2).toEqualTypeOf<(payload: { note: string }) => void>();
        expectTypeOf<ReturnType<typeof vue.useEchoEncrypted>["channel"]>().returns.toEqualTypeOf<MercurePrivateChannel>();
    });

    it("re-exports the framework packages' hooks", () => {
        for (const entry of [react, vue]) {
            expectTypeOf(entry.useEcho).toBeFunction();
            expectTypeOf(entry.useEchoPublic).toBeFunction();
            expectTypeOf(entry.useEchoPresence).toBeFunction();
            expectTypeOf(entry.useEchoNotification).toBeFunction();
            expectTypeOf(entry.useConnectionStatus).toBeFunction();
            expectTypeOf(entry.echo).toBeFunction();
        }
    });
});
