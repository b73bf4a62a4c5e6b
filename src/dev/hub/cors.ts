import type { IncomingMessage, ServerResponse } from "node:http";

/** Methods a browser may use on hub URLs. */
export const CORS_METHODS = "GET, HEAD, POST";

/** Request headers a browser may send to the hub. */
export const CORS_REQUEST_HEADERS = "authorization, cache-control, last-event-id";

/**
 * Response headers cross-origin callers may read: only `Link`, as on the reference hub, so a cross-origin fetch
 * client cannot read `Mercure-Last-Event-ID` there either.
 */
export const CORS_EXPOSED_HEADERS = "Link";

/**
 * Add credentialed CORS headers when the request's `Origin` is allowlisted; unknown origins get none.
 * Returns whether the origin was allowed.
 */
export function applyCors(req: IncomingMessage, res: ServerResponse, allowed: readonly string[]): boolean {
    res.setHeader("Vary", "Origin");
    const origin = req.headers.origin;
    // [spec] §7: an explicit allowlisted origin with credentials, never `*` nor a reflected arbitrary origin.
    if (origin === undefined || !allowed.includes(origin)) return false;
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Credentials", "true");
    res.setHeader("Access-Control-Expose-Headers", CORS_EXPOSED_HEADERS);
    return true;
}

/** True when the request is a CORS preflight. */
export function isPreflight(req: IncomingMessage): boolean {
    return req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
}

/** Answer a CORS preflight (204, with the allowances only for allowlisted origins). */
export function handlePreflight(req: IncomingMessage, res: ServerResponse, allowed: readonly string[]): void {
    if (applyCors(req, res, allowed)) {
        res.setHeader("Access-Control-Allow-Methods", CORS_METHODS);
        res.setHeader("Access-Control-Allow-Headers", CORS_REQUEST_HEADERS);
        res.setHeader("Access-Control-Max-Age", "600");
    }
    res.writeHead(204);
    res.end();
}
