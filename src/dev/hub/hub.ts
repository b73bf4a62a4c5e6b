import type { IncomingMessage, ServerResponse } from "node:http";
import { MercureError } from "../../index";
import { applyCors, handlePreflight } from "./cors";
import { requestContext, sendError, splitTarget } from "./http";
import { History } from "./history";
import { handleMetadata, metadataPath } from "./metadata";
import { resolveHubOptions } from "./options";
import type { MercureHubOptions, ResolvedHubOptions } from "./options";
import { handlePublish } from "./publish";
import { createHubStats, resetHubStats, type HubRuntime, type HubStats } from "./runtime";
import { handleSubscribe } from "./subscribe";
import type { Subscriber } from "./subscriber";
import { handleSubscriptionsApi, subscriptionUpdates } from "./subscriptions";
import { validateUpdate } from "./update";
import type { HubUpdate, Update } from "./update";

/** Which hub endpoint a path belongs to. */
type Route =
    | { readonly kind: "hub" }
    | { readonly kind: "subscriptions"; readonly rest: string }
    | { readonly kind: "metadata" };

/**
 * A Mercure 1.0 hub for development and tests: subscribe, publish, authorization, history, active
 * subscriptions, metadata and CORS, all in memory. Mount it in any Node HTTP server with {@link handle}.
 */
export class MercureHub {
    /** Resolved options. */
    private readonly options: ResolvedHubOptions;

    /** Retained updates for replay; survives {@link close}. */
    private readonly history: History;

    /** Open event streams. */
    private readonly subscribers = new Set<Subscriber>();

    /** Live test counters (reset in place). */
    private readonly counters: HubStats;

    /** What the request handlers see of this hub. */
    private readonly runtime: HubRuntime;

    /** Create a hub; throws `invalid_option` on unusable options. */
    constructor(options: MercureHubOptions) {
        this.options = resolveHubOptions(options);
        this.history = new History(this.options.history, this.options.historySize);
        this.counters = createHubStats(() =>
            [...this.subscribers].map((subscriber) => ({
                id: subscriber.id,
                selectors: subscriber.subscriptions.map((subscription) => subscription.matcher.value),
            })),
        );
        this.runtime = {
            options: this.options,
            history: this.history,
            subscribers: this.subscribers,
            stats: this.counters,
            dispatch: (update) => this.dispatch(update),
            addSubscriber: (subscriber) => this.addSubscriber(subscriber),
            removeSubscriber: (subscriber) => this.removeSubscriber(subscriber),
        };
    }

    /**
     * Test counters: every subscribe request, accepted publications, streams ended by their lifetime, open
     * streams and their selectors, and the selectors streams carried without a grant.
     */
    get stats(): HubStats {
        return this.counters;
    }

    /** The hub path, e.g. `/.well-known/mercure`. */
    get path(): string {
        return this.options.path;
    }

    /**
     * Handle a request if it belongs to the hub (the hub path, `<path>/subscriptions…`, the metadata
     * document, and CORS preflights on those); returns false, writing nothing, otherwise.
     */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
        const route = this.route(splitTarget(req.url ?? "").path);
        if (route === null) return false;
        req.on("error", () => undefined);
        res.on("error", () => undefined);
        try {
            this.serve(req, res, route);
        } catch {
            this.fail(res);
        }
        return true;
    }

    /**
     * Publish in-process without authorization, as FrankenPHP's `mercure_publish()` does; validates like
     * the HTTP path, throws `invalid_option` on invalid input, and returns the event id.
     */
    publish(update: HubUpdate): string {
        const retry = update.retry;
        if (retry !== undefined && (!Number.isSafeInteger(retry) || retry < 0)) {
            throw new MercureError("invalid_option", "The update's retry must be a non-negative integer of milliseconds.");
        }
        const result = validateUpdate(
            {
                topics: Array.isArray(update.topics) ? update.topics : [],
                private: update.private === true,
                ...(update.data !== undefined ? { data: update.data } : {}),
                ...(update.id !== undefined ? { id: update.id } : {}),
                ...(update.type !== undefined ? { type: update.type } : {}),
                ...(retry !== undefined ? { retry: String(retry) } : {}),
            },
            this.options.path,
        );
        if (!result.ok) throw new MercureError("invalid_option", `The hub refused the update: ${result.message}`);
        this.dispatch(result.update);
        this.counters.publishes++;
        return result.update.id;
    }

    /**
     * Publish several updates in-process, as {@link MercureHub.publish} does one by one, and send each stream its
     * share in one socket write, as a hub flushes a backlog: a bench's burst then reaches the browser faster than
     * any client handles it, so the client's own per-event cost is what it measures. Returns the event ids; an
     * invalid update throws before anything is sent after it.
     */
    publishBurst(updates: readonly HubUpdate[]): string[] {
        const corked = [...this.subscribers];
        for (const subscriber of corked) subscriber.cork();
        try {
            return updates.map((update) => this.publish(update));
        } finally {
            for (const subscriber of corked) subscriber.uncork();
        }
    }

    /** Close every open subscriber connection abruptly (test hook: a network drop). */
    dropConnections(): void {
        for (const subscriber of [...this.subscribers]) subscriber.destroy();
    }

    /** Reset the counters in place. */
    resetStats(): void {
        resetHubStats(this.counters);
    }

    /** End all streams and their timers; history is kept, so the same instance can still replay later. */
    close(): void {
        for (const subscriber of [...this.subscribers]) subscriber.end();
    }

    private route(path: string): Route | null {
        const hubPath = this.options.path;
        if (path === hubPath) return { kind: "hub" };
        if (path === metadataPath(hubPath) && !this.options.legacyProtocol) return { kind: "metadata" };
        const prefix = `${hubPath}/subscriptions`;
        if (path === prefix || path.startsWith(prefix + "/")) {
            return { kind: "subscriptions", rest: path.slice(prefix.length) };
        }
        return null;
    }

    private serve(req: IncomingMessage, res: ServerResponse, route: Route): void {
        const { options } = this;
        if (req.method === "OPTIONS") return handlePreflight(req, res, options.corsOrigins);
        applyCors(req, res, options.corsOrigins);
        const context = requestContext(req, options);
        const method = req.method ?? "GET";
        if (route.kind === "hub") {
            if (method === "GET" || method === "HEAD") return handleSubscribe(req, res, context, this.runtime);
            if (method === "POST") {
                handlePublish(req, res, context, this.runtime).catch(() => this.fail(res));
                return;
            }
            return sendError(res, 405, "Method not allowed.", { Allow: "GET, HEAD, POST, OPTIONS" });
        }
        if (method !== "GET" && method !== "HEAD") {
            return sendError(res, 405, "Method not allowed.", { Allow: "GET, HEAD, OPTIONS" });
        }
        if (route.kind === "metadata") return handleMetadata(res, context, options);
        // [spec] §4.2: with the feature off, the subscription API does not exist.
        if (!options.subscriptions) return sendError(res, 404, "Active subscriptions are disabled on this hub.");
        handleSubscriptionsApi(req, res, context, this.runtime, route.rest);
    }

    private dispatch(update: Update): void {
        this.history.add(update);
        for (const subscriber of this.subscribers) {
            if (subscriber.accepts(update)) subscriber.send(update);
        }
    }

    private addSubscriber(subscriber: Subscriber): void {
        if (!subscriber.isOpen) return;
        this.subscribers.add(subscriber);
        // [spec] §4.1: announce each new subscription.
        if (this.options.subscriptions) {
            for (const update of subscriptionUpdates(this.options.path, subscriber, true)) this.dispatch(update);
        }
    }

    private removeSubscriber(subscriber: Subscriber): void {
        if (!this.subscribers.delete(subscriber)) return;
        // [spec] §4.1: announce each ended subscription.
        if (this.options.subscriptions) {
            for (const update of subscriptionUpdates(this.options.path, subscriber, false)) this.dispatch(update);
        }
    }

    private fail(res: ServerResponse): void {
        if (!res.headersSent) sendError(res, 500, "The hub failed to handle this request.");
        else res.destroy();
    }
}
