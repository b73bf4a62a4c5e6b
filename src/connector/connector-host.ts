import type { ConnectionStatus } from "laravel-echo";
import type { BatchAuth } from "../auth/batch-auth";
import type { CookieRefreshTimer, HubTimeouts } from "../auth/cookie-refresh";
import type { ChannelRegistry } from "../channel/channel-registry";
import type { HubLocator, HubOptions } from "../discovery/hub-location";
import type { RouteTarget } from "../dispatch/deliver-route";
import type { Dispatcher } from "../dispatch/dispatcher";
import type { MercureError } from "../errors";
import type { ReconnectTimer } from "../status/reconnect-timer";
import type { StatusStore } from "../status/status-store";
import type { WakeSignals } from "../status/wake-signals";
import type { HubStream } from "../transport/hub-stream";
import type { Platform } from "../transport/platform";
import type { StreamSwitch } from "../transport/stream-switch";
import type { Capabilities } from "./capabilities";
import type { DebugLogger } from "./debug-log";

/**
 * What `MercureConnector` lends the workers it orchestrates (the refresh cycle, the stream events): its parts, and
 * the state changes it owns. The connector builds one; the parts stay the connector's, the workers act through them.
 */
export interface ConnectorHost {
    /** The connector's options, for locating the hub and resolving its platform. */
    readonly hubOptions: HubOptions;
    /** Joined channels by full name, in join order (the order of the auth batch). */
    readonly registry: ChannelRegistry;
    /** The connection status; its `set()` is the only writer. */
    readonly status: StatusStore;
    /** The socket id, the cursor and the once-per-channel ledger of the main stream's messages. */
    readonly dispatcher: Dispatcher;
    /** The capabilities (presence, encrypted channels, whispers), loaded on first use and told of joins, leaves, auth answers and streams. */
    readonly capabilities: Capabilities;
    /** Where the hub is and the platform resolved for it. */
    readonly hub: HubLocator;
    /** The batch auth request, and what the last successful answer granted. */
    readonly auth: BatchAuth;
    /** The current stream, its make-before-break replacement and the replaced streams still draining. */
    readonly streams: StreamSwitch;
    /** The one pending reconnect, with its backoff. */
    readonly reconnect: ReconnectTimer;
    /** The renewal of the cookie and of the stream. */
    readonly cookieRefresh: CookieRefreshTimer;
    /** `online`, page shown again: started by the first batch. */
    readonly wake: WakeSignals;
    /** Where routed broadcasts go: the joined channels' listeners and `error()` callbacks. */
    readonly deliveries: RouteTarget;
    /** The `debug` option's logger, or null. */
    readonly log: DebugLogger | null;
    /** The connector's generation, bumped by `disconnect()`: async work captured with an older value stops. */
    generation(): number;
    /** The signal that `disconnect()` aborts. */
    signal(): AbortSignal;
    /** The `hubTimeouts` option, resolved: when the hub may end a stream, for the renewals. */
    hubTimeouts(): HubTimeouts;
    /** Whether `disconnect()` paused the connector (until `connect()` or a newly joined channel). */
    paused(): boolean;
    /** Whether a stream opened since construction, the last `disconnect()` or the last channel left. */
    everConnected(): boolean;
    /** Run a state change, then the user callbacks it produced. */
    settle<T>(change: () => T): T;
    /** Queue a user callback for when the state is settled. */
    defer(callback: () => void): void;
    /** Report an error on each named joined channel's `error()` callbacks, once the state is settled. */
    reportEach(names: Iterable<string>, error: (name: string) => MercureError): void;
    /** An auth or a stream failed: report `reconnecting` unless a stream still serves, and retry with backoff. */
    backOff(): void;
    /** Remove a channel from the registry and tell its `error()` callbacks why. */
    evict(name: string, error: MercureError): void;
    /** Nothing to carry: close everything and report `disconnected`. */
    windDown(): void;
    /** Stop like `disconnect()`, reporting `status`. */
    stop(status: ConnectionStatus): void;
    /** A stream no longer serves these channels. */
    lose(channels: Iterable<string>): void;
    /** Renew the cookie and replace the stream make-before-break; `expired`: the current one is no longer relied on. */
    renew(expired: boolean): void;
    /** The open `stream` serves: mark its channels subscribed and seed its presence channels. */
    announce(stream: HubStream): void;
    /** Open a stream for `granted` unless the live one already carries exactly those topics. */
    openStream(granted: string[], topicPrefix: string | null, platform: Platform): void;
    /** Ask for a refresh (`reopen`: with a new stream); nothing while paused by `disconnect()`. */
    scheduleRefresh(reopen?: boolean): void;
    /** Schedule one refresh after a jittered exponential backoff; `reopen` (default true): with a new stream. */
    scheduleRetry(reopen?: boolean): void;
}
