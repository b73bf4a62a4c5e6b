import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** Why a request is refused: its HTTP status and a one-sentence reason. */
export interface Refusal {
    readonly status: 403;
    readonly reason: string;
}

/** What the guard knows of the server: the host names it answers besides loopback, and the hub's path. */
export interface RequestGuardOptions {
    /** Host names (no port) the server answers to besides loopback ones: its `host` and the `allowedHosts` option. */
    readonly allowedHosts: readonly string[];
    /** The hub's path: its publish is guarded by the hub itself (publish origins, the token), not here. */
    readonly hubPath: string;
}

/**
 * The dev server's checks before any route (it runs on the developer's machine, where any page the developer visits
 * can make the browser send it requests):
 * - a `Host` that is not a loopback name or an allowed host is refused (DNS rebinding: a site whose name resolves to
 *   127.0.0.1 would otherwise be same-origin with the stack);
 * - a state-changing request (not GET, HEAD, OPTIONS) to the app's routes with an `Origin` (or `Sec-Fetch-Site`)
 *   from another site is refused (CSRF: a login, a logout, a broadcast, an auth request sent from another page).
 * `/dev/broadcast` also takes JSON only (see `dev-routes.ts`), and `/dev/login` only POST. Null when the request may go on.
 */
export function refuseRequest(req: IncomingMessage, options: RequestGuardOptions): Refusal | null {
    const host = hostName(req.headers.host);
    if (host === null || !allowedHost(host, options.allowedHosts)) {
        return { status: 403, reason: `The dev server answers only to localhost, 127.0.0.1, [::1] and its allowedHosts; refused Host "${req.headers.host ?? ""}".` };
    }
    const method = req.method ?? "GET";
    if (method === "GET" || method === "HEAD" || method === "OPTIONS") return null;
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path === options.hubPath) return null;
    const origin = req.headers.origin;
    const originHost = origin === undefined ? host : origin === "null" ? null : hostName(urlHost(origin));
    if (originHost === null || !allowedHost(originHost, options.allowedHosts) || req.headers["sec-fetch-site"] === "cross-site") {
        return { status: 403, reason: `Refused a ${method} from another site (Origin ${origin ?? "null"}): the dev server's routes accept state changes only from its own pages.` };
    }
    return null;
}

/** The host name of a `Host` header or URL host (lower-case, without port or IPv6 brackets), or null when malformed. */
function hostName(header: string | undefined): string | null {
    if (header === undefined || header === "") return null;
    const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/i.exec(header);
    return match === null ? null : (match[1] ?? match[2]!).toLowerCase().replace(/\.$/, "");
}

/** The host of an origin or URL, or undefined when it is none. */
function urlHost(url: string): string | undefined {
    try {
        return new URL(url).host;
    } catch {
        return undefined;
    }
}

/** Whether `host` is a loopback name or address, or one of `allowed`. */
function allowedHost(host: string, allowed: readonly string[]): boolean {
    if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
    if (isIP(host) === 4 && host.startsWith("127.")) return true;
    return allowed.some((name) => name.toLowerCase() === host);
}
