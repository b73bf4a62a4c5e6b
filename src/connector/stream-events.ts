import { deliverRoute, type RouteDecrypter } from "../dispatch/deliver-route";
import * as failures from "../error-messages";
import type { HubStream, HubStreamHandlers } from "../transport/hub-stream";
import type { StreamMessage } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";
import { CRYPTO } from "./capability-slots";
import { StreamDiagnosis } from "./stream-diagnosis";
import { planStreamFailure } from "./stream-failure";

/**
 * What the connector does when one of its streams reports: an open serves the channels (or renews an expired
 * cookie), a message is dispatched once per channel, a subscription event moves the cursor and the presence rooms,
 * an error is reported and answered by the plan `planStreamFailure` makes, with a probe of the hub to name the cause.
 * Every main stream reports here; a retired stream drops its callbacks. The handlers are bound (a stream may call
 * them detached).
 */
export class StreamEvents implements HubStreamHandlers {
    /** The connector these events change. */
    readonly #host: ConnectorHost;

    /** Probes the hub once per failure streak to name the cause of a terminal stream failure. */
    readonly #diagnosis = new StreamDiagnosis();

    /** The encrypted channels' decryption queue, in the crypto capability (loaded from the first encrypted channel's join). */
    readonly #decrypter: RouteDecrypter = {
        enqueue: (channel, jwe, deliver, fail) => this.#host.capabilities.get(CRYPTO)?.channels.enqueue(channel, jwe, deliver, fail),
    };

    /** Whether any stream opened since construction, the last `disconnect()` or the last channel left. */
    everConnected = false;

    /** Handle the streams of `host`. */
    constructor(host: ConnectorHost) {
        this.#host = host;
    }

    /** Forget the streams' history (no channel left, or `disconnect()`): never connected, no failure streak. */
    reset(): void {
        this.everConnected = false;
        this.#diagnosis.reset();
    }

    /** A stream opened, for the first time or after a native reconnect. */
    readonly open = (stream: HubStream): void =>
        this.#host.settle(() => {
            const host = this.#host;
            // A replacement that opens becomes current; the streams it replaces drain, then retire.
            const replaced = host.streams.current;
            if (!host.streams.opened(stream)) return;
            host.log?.("open", { stream: stream.id, ...(replaced !== null && replaced !== stream ? { draining: replaced.id } : {}) });
            this.#diagnosis.reset();
            // [spec] laravel-mercure §10: a reconnect made after the cookie expired (the machine slept) is
            // anonymous at best; renew instead of reporting `connected`.
            if (host.cookieRefresh.isExpired()) return host.renew(true);
            this.everConnected = true;
            host.status.set("connected");
            host.announce(stream);
            host.reconnect.connected(() => stream === host.streams.current && stream.isOpen());
            host.cookieRefresh.check(); // The renewal timer may be late (a throttled tab).
        });

    /** Deliver one main-stream message to its channels (laravel-mercure §4.4), once per channel. */
    readonly message = (stream: HubStream, event: StreamMessage): void => {
        const host = this.#host;
        const { id, route } = host.dispatcher.receive(event, (name) => stream.channels.has(name) && host.registry.has(name));
        if (id !== null) host.streams.delivered(stream, id);
        if (route === null) return;
        host.log?.("event", { id, channels: route.channels });
        deliverRoute(route, this.#decrypter, host.deliveries, host.signal());
    };

    /** [spec] laravel-mercure §5.4 step 6 and §8: a subscription event (presence) moves the main cursor too. */
    readonly subscription = (stream: HubStream, { lastEventId: id, data }: StreamMessage): void => {
        const host = this.#host;
        if (id !== "") host.streams.delivered(stream, (host.dispatcher.cursor = id));
        host.capabilities.tell("subscription", data, id);
    };

    /** A stream error: report it; a stream that gave up is replaced with backoff. */
    readonly error = (stream: HubStream, event: Event, closed: boolean): void =>
        this.#host.settle(() => {
            const host = this.#host;
            const failure = host.streams.failed(stream, closed);
            host.log?.("stream error", { stream: stream.id, failure });
            if (failure === "ignored") return;
            if (failure !== "replacement_refused") host.lose(stream.channels);
            host.reportEach(stream.channels, (name) => failures.streamError(name, failure, stream.channels, event));
            const plan = planStreamFailure(failure, event, stream.hasOpened(), stream.failedToConnect(), host.streams.candidate !== null);
            if (plan.retry) {
                // Issue 13: opened on the tabs' shared grant without asking Laravel: re-authorize at once, at Laravel.
                if (host.auth.refusedAfterGrant()) {
                    host.hub.platform?.stale?.();
                    host.scheduleRefresh(true);
                } else {
                    if (plan.reconnectRefused) host.hub.platform?.stale?.(); // The retry's auth must reach Laravel for a new cookie.
                    host.scheduleRetry();
                }
            }
            if (plan.diagnose) void this.#diagnose(stream, plan.fatal);
        });

    /**
     * Name the cause of a terminal stream failure once per failure streak (a `fetch` probe reads what
     * `EventSource` hides), after the `stream_error`; a configuration that must change first (or a `fatal` refusal,
     * whatever the probe finds) stops with `failed`.
     */
    async #diagnose(stream: HubStream, fatal: boolean): Promise<void> {
        const host = this.#host;
        const platform = host.hub.platform;
        const generation = host.generation();
        if (platform === null) return;
        const named = await this.#diagnosis.once(platform, stream, host.cookieRefresh.expiresAt(), host.signal());
        // A disconnect() during the probe, or a stream that opened meanwhile: the failure is history.
        if (generation !== host.generation() || host.streams.current?.isOpen() === true) return;
        if (named === null) return void (fatal && host.settle(() => host.stop("failed")));
        host.log?.("diagnosis", { code: named.diagnosis.code, retry: named.diagnosis.retry });
        host.settle(() => {
            host.reportEach(stream.channels, named.error);
            if (fatal || !named.diagnosis.retry) host.stop("failed");
        });
    }
}
