import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import { metadataPath } from "./metadata";
import type { ResolvedHubOptions } from "./options";

/** What a handler needs to know about the request beyond the raw message. */
export interface RequestContext {
    /** Path as sent (still percent-encoded), without the query. */
    readonly rawPath: string;
    /** Query string as sent, without `?` (empty when none). */
    readonly query: string;
    /** The hub's own origin as the client reached it, e.g. `http://127.0.0.1:8080`. */
    readonly origin: string;
    /** Absolute hub URL as the client reached it (for links; patterns resolve against the options' base). */
    readonly hubUrl: string;
    /** Resource identifier tokens must carry in `aud`. */
    readonly resource: string;
    /** Absolute URL of the RFC 9728 protected resource metadata; null when none is served (a 0.x-style hub). */
    readonly metadataUrl: string | null;
}

/** Split a request target into its raw path and query. */
export function splitTarget(target: string): { path: string; query: string } {
    let rest = target;
    if (!rest.startsWith("/")) {
        // Absolute-form target (proxies): keep only path and query.
        try {
            const url = new URL(rest);
            rest = url.pathname + url.search;
        } catch {
            return { path: "", query: "" };
        }
    }
    const hash = rest.indexOf("#");
    if (hash !== -1) rest = rest.slice(0, hash);
    const mark = rest.indexOf("?");
    return mark === -1 ? { path: rest, query: "" } : { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

/** Derive the request context; the origin comes from the `Host` header (falling back to the socket address). */
export function requestContext(req: IncomingMessage, options: ResolvedHubOptions): RequestContext {
    const { path, query } = splitTarget(req.url ?? "");
    const origin = `http://${requestHost(req)}`;
    const hubUrl = origin + options.path;
    return {
        rawPath: path,
        query,
        origin,
        hubUrl,
        // [spec] §2.2: the Go 1.0 hub derives the resource identifier from the request.
        resource: options.resource ?? hubUrl,
        metadataUrl: options.legacyProtocol ? null : (pinnedMetadataUrl(options.resource, options.path) ?? origin + metadataPath(options.path)),
    };
}

/**
 * The metadata URL challenges name when the resource identifier is pinned: on the identifier's origin, as the Go
 * hub v1.0.0-alpha.3 builds it (the document itself is still served on every origin the hub answers on); null
 * when the identifier is not pinned or not an absolute URL (then the request's origin is used).
 */
function pinnedMetadataUrl(resource: string | null, hubPath: string): string | null {
    if (resource === null) return null;
    try {
        const url = new URL(resource);
        // [spec] mercure-hub §2.3, §5: Go puts `<identifier origin>/.well-known/oauth-protected-resource/.well-known/mercure` there.
        return url.host === "" ? null : url.origin + metadataPath(hubPath);
    } catch {
        return null;
    }
}

function requestHost(req: IncomingMessage): string {
    const host = req.headers.host;
    if (host !== undefined && host !== "") {
        try {
            const url = new URL(`http://${host}`);
            if (url.host !== "" && url.pathname === "/" && url.username === "" && url.password === "" && !/[/?#@\\]/.test(host)) {
                return host;
            }
        } catch {
            // Fall through to the socket address.
        }
    }
    const address = req.socket.localAddress ?? "127.0.0.1";
    const hostname = address.includes(":") ? `[${address}]` : address;
    return `${hostname}:${req.socket.localPort ?? 80}`;
}

/** Write a complete response unless one was already started; guards closed sockets. */
export function send(res: ServerResponse, status: number, body: string, headers: OutgoingHttpHeaders = {}): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", ...headers });
    res.end(body);
}

/** Answer a request the hub refuses for a reason unrelated to the token (no challenge). */
export function sendError(res: ServerResponse, status: number, message: string, headers: OutgoingHttpHeaders = {}): void {
    send(res, status, message + "\n", headers);
}
