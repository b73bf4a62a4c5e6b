import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { readCookie } from "./hub/authorization";
import { grantsSelector, parseAuthorizationDetails, type Grant } from "./hub/grants";
import { splitTarget } from "./hub/http";
import { MATCHER_PARAMETERS } from "./hub/matchers";
import { metadataPath } from "./hub/metadata";
import { createHubStats, resetHubStats, type HubStats, type OpenStream, type SubscribeConnectionRecord } from "./hub/runtime";

/**
 * What a dev server needs of the hub it carries, whether the embedded {@link MercureHub} or a
 * {@link RemoteHub} in front of a hub that runs elsewhere.
 */
export interface ServedHub {
    /** The hub path on the dev server's origin, e.g. `/.well-known/mercure`. */
    readonly path: string;
    /** Test counters (see {@link HubStats}). */
    readonly stats: HubStats;
    /** Handle a request if it belongs to the hub; false, writing nothing, otherwise. */
    handle(req: IncomingMessage, res: ServerResponse): boolean;
    /** Close every open event stream abruptly (a network drop). */
    dropConnections(): void;
    /** Reset the counters in place. */
    resetStats(): void;
    /** End every stream for good. */
    close(): void;
}

/** Options of {@link RemoteHub}. */
export interface RemoteHubOptions {
    /** The running hub's URL (`http:` or `https:`), e.g. `http://127.0.0.1:3000/.well-known/mercure`. */
    url: string;
    /** The authorization cookie's name, read for the `ungrantedSubscriptions` counter. */
    cookieName: string;
    /** Base of relative topics and patterns: the hub's resource identifier (the public hub URL). */
    patternBase: string;
}

/** Request headers a proxy does not forward (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "proxy-authorization"]);

/**
 * A reverse proxy on the dev server's origin in front of a Mercure hub that runs elsewhere (the Go reference hub
 * in tests, a user's FrankenPHP or Mercure hub from the CLI): browsers reach the hub same-origin, as behind a
 * production reverse proxy, and the proxy keeps the same test counters as the embedded hub. It forwards the
 * hub path, everything below it (the subscriptions API) and the protected-resource metadata, with the browser's
 * `Host`, cookies and headers untouched and the event stream unbuffered.
 *
 * What it cannot see of the hub: `closesAt` is always `null`, and `publishes` counts publications that went
 * through it (whispers), not those the app sends to the hub's own URL.
 */
export class RemoteHub implements ServedHub {
    readonly path: string;

    private readonly upstream: URL;
    private readonly counters: HubStats;
    /** Event streams open through the proxy, with their selectors. */
    private readonly streams = new Map<ServerResponse, OpenStream & { readonly upstream: ClientRequest }>();
    private nextId = 1;

    /** Proxy to the hub at `options.url`; throws on a URL that is not `http:` or `https:`. */
    constructor(private readonly options: RemoteHubOptions) {
        this.upstream = new URL(options.url);
        if (this.upstream.protocol !== "http:" && this.upstream.protocol !== "https:") {
            throw new Error(`The hub URL ${options.url} must be an http: or https: URL.`);
        }
        this.path = this.upstream.pathname;
        this.counters = createHubStats(() => [...this.streams.values()].map(({ id, selectors }) => ({ id, selectors })));
    }

    get stats(): HubStats {
        return this.counters;
    }

    handle(req: IncomingMessage, res: ServerResponse): boolean {
        const { path, query } = splitTarget(req.url ?? "");
        const isHub = path === this.path;
        if (!isHub && !path.startsWith(this.path + "/") && path !== metadataPath(this.path)) return false;
        req.on("error", () => undefined);
        res.on("error", () => undefined);
        const subscribing = isHub && (req.method === "GET" || req.method === "HEAD");
        const record: SubscribeConnectionRecord | null = subscribing
            ? { query, lastEventId: firstHeader(req.headers["last-event-id"]), at: Date.now(), status: 0, closesAt: null }
            : null;
        if (record !== null) this.counters.subscribeConnections.push(record);

        const upstream = this.forward(req, (response) => {
            const status = response.statusCode ?? 502;
            if (record !== null) record.status = status;
            if (isHub && req.method === "POST" && status === 200) this.counters.publishes++;
            res.writeHead(status, forwardable(response.headers));
            const streaming = record !== null && status === 200 && req.method === "GET";
            if (streaming) {
                res.flushHeaders();
                req.socket.setNoDelay(true);
                req.socket.setTimeout(0);
                this.track(res, upstream, query, record, req);
            }
            response.on("end", () => {
                // The hub ended a stream the client still held: its lifetime ran out (token expiry or write timeout).
                if (streaming && this.streams.delete(res)) this.counters.expiredStreams++;
            });
            response.on("error", () => res.destroy());
            response.pipe(res);
        });
        upstream.on("error", () => {
            if (record !== null && record.status === 0) record.status = 502;
            if (res.headersSent) {
                res.destroy();
                return;
            }
            res.writeHead(502, { "Content-Type": "text/plain; charset=utf-8" });
            res.end(`The Mercure hub at ${this.options.url} could not be reached.\n`);
        });
        res.on("close", () => {
            this.streams.delete(res);
            if (!res.writableFinished) upstream.destroy();
        });
        req.pipe(upstream);
        return true;
    }

    dropConnections(): void {
        for (const [res, stream] of [...this.streams]) {
            this.streams.delete(res);
            stream.upstream.destroy();
            res.destroy();
        }
    }

    resetStats(): void {
        resetHubStats(this.counters);
    }

    close(): void {
        this.dropConnections();
    }

    /** Send `req` on to the hub, with its own `Host` (the hub derives the audience from it when not pinned). */
    private forward(req: IncomingMessage, onResponse: (response: IncomingMessage) => void): ClientRequest {
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(req.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
        }
        headers["x-forwarded-proto"] = "http";
        headers["x-forwarded-for"] = req.socket.remoteAddress ?? "127.0.0.1";
        const send = this.upstream.protocol === "https:" ? httpsRequest : httpRequest;
        return send(
            {
                protocol: this.upstream.protocol,
                hostname: this.upstream.hostname.replace(/^\[|\]$/g, ""),
                port: this.upstream.port,
                method: req.method ?? "GET",
                path: req.url ?? "/",
                headers,
            },
            onResponse,
        );
    }

    /** Count an open stream, and the selectors its token does not grant (read, not verified: the hub did that). */
    private track(res: ServerResponse, upstream: ClientRequest, query: string, record: SubscribeConnectionRecord, req: IncomingMessage): void {
        const selectors: string[] = [];
        const grants = this.grantsOf(req);
        for (const [name, value] of new URLSearchParams(query)) {
            const type = MATCHER_PARAMETERS[name];
            if (type === undefined) continue;
            selectors.push(value);
            if (grants !== null && grantsSelector(grants, type, value)) continue;
            this.counters.ungrantedSubscriptions.push({ query, selector: value, anonymous: grants === null, at: record.at });
        }
        this.streams.set(res, { id: `remote-${this.nextId++}`, selectors, upstream });
    }

    /** The subscribe grants of the request's token (header, else cookie); null without a readable token. */
    private grantsOf(req: IncomingMessage): Grant[] | null {
        const bearer = /^Bearer\s+(\S+)$/i.exec(firstHeader(req.headers.authorization) ?? "")?.[1];
        const token = bearer ?? readCookie(firstHeader(req.headers.cookie) ?? undefined, this.options.cookieName);
        const payload = token?.split(".")[1];
        if (payload === undefined) return null;
        try {
            const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
            if (typeof claims !== "object" || claims === null) return null;
            return parseAuthorizationDetails((claims as Record<string, unknown>)["authorization_details"], this.options.patternBase);
        } catch {
            return null;
        }
    }
}

/** The first value of a request header, or null. */
function firstHeader(value: string | string[] | undefined): string | null {
    return (Array.isArray(value) ? value[0] : value) ?? null;
}

/** Response headers to pass back to the browser. */
function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
    }
    return out;
}
