import { MercureConnector, MercureEcho, type MercureConnectorOptions } from "../index";
import { TestAuthEndpoint, type TestUser } from "./laravel-side";
import { MemoryHub } from "./memory-hub";
import { TestHub } from "./test-hub";

/** Where the test Echo's hub is: a name no network resolves, since nothing goes over the network. */
export const TEST_HUB_URL = "https://hub.test/.well-known/mercure";

/** What `createTestEcho()` can hand the Echo it builds to: `laravel-echo-mercure/react` or `/vue` (their `configureEcho` and `echo`). */
export interface TestFramework<TEcho> {
    /** The framework entry's `configureEcho()`. */
    configureEcho(options: MercureConnectorOptions): void;
    /** The framework entry's `echo()`: the instance its hooks use. */
    echo(): TEcho;
}

/** Options of {@link createTestEcho}: the connector's options (except the platform pieces the kit provides), plus the kit's. */
export interface TestEchoOptions extends Omit<MercureConnectorOptions, "host" | "eventSource" | "fetch" | "shareAcrossTabs" | "discover" | "hubToken"> {
    /** The logged-in user: their presence payload on the app's own connections. Default `{ id: 1 }`. */
    user?: TestUser;
}

/** What {@link createTestEcho} returns. */
export interface TestEcho<TEcho> {
    /** The Echo instance: stock Echo on the real `MercureConnector`, its network in memory. */
    echo: TEcho;
    /** The controls of the in-memory hub and Laravel app. */
    hub: TestHub;
}

/**
 * Create Echo for a unit test: stock Echo on the real `MercureConnector`, whose `EventSource` and `fetch` are an
 * in-memory Mercure hub and Laravel app, so that dispatch, envelopes, presence and whispers run the connector's own
 * code and nothing goes over the network. With `framework` (`import * as EchoReact from "laravel-echo-mercure/react"`),
 * the framework's `configureEcho()` gets the options and `echo` is the instance its hooks use. Call `await
 * hub.flush()` after joining or changing channels, and `echo.disconnect()` when the test ends.
 */
export function createTestEcho<TEcho>(options: TestEchoOptions & { framework: TestFramework<TEcho> }): TestEcho<TEcho>;
export function createTestEcho(options?: TestEchoOptions): TestEcho<MercureEcho>;
export function createTestEcho<TEcho>(options: TestEchoOptions & { framework?: TestFramework<TEcho> } = {}): TestEcho<TEcho | MercureEcho> {
    const { framework, user = { id: 1 }, ...rest } = options;
    const hubUrl = new URL(TEST_HUB_URL);
    const authEndpoint = typeof rest.authEndpoint === "string" ? rest.authEndpoint : "/broadcasting/auth";
    const auth = new TestAuthEndpoint();
    const network = new MemoryHub(hubUrl, new URL(authEndpoint, hubUrl).pathname, auth, () => user);
    const connectorOptions: MercureConnectorOptions = {
        // `leaving` as soon as `hub.presence(…).leave(user)` ran (no tab hand-over to hide in memory); a test may set its own.
        leaveDelay: 0,
        ...rest,
        authEndpoint,
        host: hubUrl.href,
        eventSource: network.EventSource,
        fetch: network.fetch,
        // One connection per test Echo: no election among tabs, no BroadcastChannel.
        shareAcrossTabs: false,
    };
    let echo: TEcho | MercureEcho;
    if (framework === undefined) {
        echo = new MercureEcho({ ...connectorOptions, broadcaster: MercureConnector });
    } else {
        framework.configureEcho(connectorOptions);
        echo = framework.echo();
    }
    const connector = () => (echo as { connector: MercureConnector }).connector;
    const namespace = typeof rest.namespace === "string" || rest.namespace === false ? rest.namespace : "App.Events";
    return { echo, hub: new TestHub(network, auth, connector, namespace) };
}
