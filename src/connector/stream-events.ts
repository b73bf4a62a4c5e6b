import { deliverRoute, type RouteDecrypter } from "../dispatch/deliver-route";
import * as failures from "../error-messages";
import type { HubStream, HubStreamHandlers } from "../transport/hub-stream";
import type { StreamMessage } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";
import { CRYPTO } from "./capability-slots";
import { planStreamFailure } from "./stream-failure";
import { lazyChunk } from "../lazy-chunk";

/** The probe that names a terminal stream failure: a lazy chunk, loaded at the first failure that needs it. */
const loadDiagnosis = /* @__PURE__ */ lazyChunk(() => import("./stream-diagnosis"));

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

    /**
     * Whether the current failure streak was diagnosed (or is being diagnosed): one probe of the hub per streak, not one
     * per retry. A streak ends when a stream opens, or when the connector winds down.
     */
    #diagnosed = false;

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
        this.#diagnosed = false;
    }

    /** A stream opened, for the first time or after a native reconnect. */
    readonly open = (stream: HubStream): void =>
        this.#host.settle(() => {
            const host = this.#host;
            // A replacement that opens becomes current; the streams it replaces drain, then retire.
            const replaced = host.streams.current;
            if (!host.streams.opened(stream)) return;
            host.log?.("open", { stream: stream.id, ...(replaced !== null && replaced !== stream ? { draining: replaced.id } : {}) });
            this.#diagnosed = false;
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
            host.reportEach(stream.channels, (name) => failures.streamError(name, failure, event));
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
            if (plan.diagnose && !this.#diagnosed) {
                this.#diagnosed = true;
                const generation = host.generation();
                // Without the chunk nothing names the failure: a fatal one stops the connector all the same.
                void loadDiagnosis().then(
                    ({ diagnoseStream }) => diagnoseStream(host, stream, plan.fatal, generation, failures.errorStatus(event)),
                    () => plan.fatal && generation === host.generation() && host.settle(() => host.stop("failed")),
                );
            }
        });
}
