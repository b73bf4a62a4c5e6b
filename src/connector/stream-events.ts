import { deliverRoute, type RouteDecrypter } from "../dispatch/deliver-route";
import * as failures from "../error-messages";
import type { HubStream, HubStreamHandlers } from "../transport/hub-stream";
import type { StreamMessage } from "../transport/platform";
import type { ConnectorHost } from "./connector-host";
import { CRYPTO } from "./capability-slots";
import { planStreamFailure } from "./stream-failure";
import { lazyChunk } from "../lazy-chunk";
import type { MercureError } from "../errors";
import { setClampedTimeout } from "../timers";

/** The probe that names a terminal stream failure: a lazy chunk, loaded at the first failure that needs it. */
const loadDiagnosis = /* @__PURE__ */ lazyChunk(() => import("./stream-diagnosis"));

/**
 * How long the `stream_error`s of a failure streak wait for the probe to name their cause (issue 51): a hub that is
 * down or is no hub is named within milliseconds, and then the precise error is all a channel gets; a probe that has
 * not answered by then (a hub that keeps the request open) releases them, and its cause follows when it comes.
 */
export const STREAM_ERROR_HOLD_MS = 5_000;

/** `stream_error` reports held while the probe runs: each report's channels and error, in order. */
type HeldReports = Array<{ readonly names: readonly string[]; readonly error: (name: string) => MercureError }>;

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

    /**
     * The `stream_error`s held while the streak's probe runs (null when none runs or its deadline passed): dropped when
     * the probe names the cause, which replaces them; reported when it names none, or at the deadline.
     */
    #held: HeldReports | null = null;

    /** The deadline of {@link #held}. */
    #holdTimer: ReturnType<typeof setTimeout> | null = null;

    /**
     * A retry whose backoff ended while the streak's probe ran: it runs when the probe answers (unless the cause it
     * names stops the connector) or at the hold's deadline, so that a slow probe (its chunk downloading on a busy page)
     * never lets a retry reach Laravel and the hub for a failure already known to be final.
     */
    #waiting: (() => void) | null = null;

    /**
     * The joined channels told of the current failure streak: an `EventSource` reconnecting by itself to a hub that stays
     * down fails every few seconds (Chromium: every 3 s), and each channel hears of the interruption once, not once per
     * try; a channel left and joined again meanwhile is another channel. The streak ends when a stream opens.
     */
    #told = new WeakSet<object>();

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

    /** Forget the streams' history (no channel left, or `disconnect()`): never connected, no failure streak, nothing held. */
    reset(): void {
        this.everConnected = false;
        this.#diagnosed = false;
        this.#waiting = null; // The connector cancels its retry too.
        this.#release(false);
        this.#told = new WeakSet();
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
            this.#told = new WeakSet();
            this.#release(true); // The streak ended before its probe named a cause: what it held was real, and transient.
            // [spec] laravel-mercure §10: a reconnect made after the cookie expired (the machine slept) is
            // anonymous at best; renew instead of reporting `connected`.
            if (host.cookieRefresh.isExpired()) return host.renew(true);
            // The EventSource reconnected by itself (after a drop, or after its first connection failed) on the hub cookie of
            // another connector of this browser, whose auth request left after this one's (see `BatchAuth.cookieReplaced`):
            // it would carry nothing of this connector's guarded channels, and say `connected`. Authorize again and reopen
            // from the cursor instead. (A stream that connects at once was sent right after its own answer, on its cookie.)
            if (stream.reconnected() && stream === host.streams.current && host.auth.cookieReplaced(host.hub.platform)) {
                host.streams.retireCurrent();
                return host.scheduleRefresh(true);
            }
            // Issue 53's navigation: a stream opened beside the first auth request serves once the answer granted its channels.
            if (host.auth.granted !== null) this.serve(stream);
        });

    /** The open current `stream` carries what the last answer granted: `connected`, its channels subscribed. */
    serve(stream: HubStream): void {
        const host = this.#host;
        this.everConnected = true;
        host.status.set("connected");
        host.announce(stream);
        host.reconnect.connected(() => stream === host.streams.current && stream.isOpen());
        host.cookieRefresh.check(); // The renewal timer may be late (a throttled tab).
    }

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
            // A hand-over of the tabs' engine (`share/virtual-source.ts`): the user closed a tab, nothing failed, and the
            // next engine reopens the stream in a moment; the stream reports an error of its own if it has not within 5 s.
            if (event.type === "handover") return;
            // One failure streak, one stream_error per channel: a native reconnect that fails again, or a retry refused again,
            // is the same failure (the probe's cause, once per streak, follows it); the status says `reconnecting` meanwhile.
            const news = [...stream.channels].filter((name) => {
                const channel = host.registry.get(name);
                if (channel === undefined || this.#told.has(channel)) return false;
                this.#told.add(channel);
                return true;
            });
            const plan = planStreamFailure(failure, event, stream.hasOpened(), stream.failedToConnect(), host.streams.candidate !== null);
            const probes = plan.diagnose && !this.#diagnosed;
            if (probes) this.#hold();
            const error = (name: string) => failures.streamError(name, failure, event);
            if (this.#held === null) host.reportEach(news, error);
            else this.#held.push({ names: news, error });
            if (plan.retry) {
                // Issue 13: opened on the tabs' shared grant without asking Laravel: re-authorize at once, at Laravel; but
                // after the streak's probe, which may name a cause that stops the connector (a 0.x hub refuses every stream).
                if (host.auth.refusedAfterGrant()) {
                    host.hub.platform?.stale?.();
                    const generation = host.generation();
                    this.probed(() => generation === host.generation() && host.scheduleRefresh(true));
                } else {
                    if (plan.reconnectRefused) host.hub.platform?.stale?.(); // The retry's auth must reach Laravel for a new cookie.
                    host.scheduleRetry();
                }
            }
            if (probes) {
                this.#diagnosed = true;
                const generation = host.generation();
                const current = () => generation === host.generation();
                // Without the chunk nothing names the failure: the held errors are reported, and a fatal one stops the
                // connector all the same.
                // What was held is reported before a fatal failure stops the connector (a stop forgets what is held).
                const unnamed = () => {
                    this.#release(true);
                    if (plan.fatal) host.settle(() => host.stop("failed"));
                };
                void loadDiagnosis().then(
                    ({ diagnoseStream }) =>
                        diagnoseStream(host, stream, plan.fatal, generation, failures.errorStatus(event)).then((outcome) => {
                            if (!current()) return;
                            if (outcome === "unnamed") unnamed();
                            else this.#release(outcome === "stale");
                        }),
                    () => current() && unnamed(),
                );
            }
        });

    /** Run `retry` now, or once the streak's probe answers if it is running (see {@link #waiting}); the last one asked for runs. */
    probed(retry: () => void): void {
        if (this.#held === null) retry();
        else this.#waiting = retry;
    }

    /** Hold the `stream_error`s of the streak from now on, until the probe answers or {@link STREAM_ERROR_HOLD_MS} passes. */
    #hold(): void {
        this.#held = [];
        this.#holdTimer = setClampedTimeout(() => this.#release(true), STREAM_ERROR_HOLD_MS);
    }

    /**
     * Stop holding: `report` the held errors, in order (no cause was named, or the deadline passed), or drop them; then
     * run the retry that waited (after a named cause that stopped the connector, it finds its generation gone).
     */
    #release(report: boolean): void {
        const held = this.#held;
        const waiting = this.#waiting;
        if (this.#holdTimer !== null) clearTimeout(this.#holdTimer);
        this.#holdTimer = this.#held = this.#waiting = null;
        const host = this.#host;
        host.settle(() => {
            if (report && held !== null) for (const { names, error } of held) host.reportEach(names, error);
            waiting?.();
        });
    }
}
