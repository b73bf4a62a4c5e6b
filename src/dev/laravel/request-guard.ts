import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** Why a request is refused: its HTTP status and a one-sentence reason. */
export interface Refusal {
    readonly status: 403;
    readonly reason: string;
}

/** What the guard knows of the server: the host names it answers besides loopback, the origins it trusts, and the hub's path. */
export interface RequestGuardOptions {
    /** Host names (no port) the server answers to besides loopback ones: its `host` and the `allowedHosts` option. */
    readonly allowedHosts: readonly string[];
    /** Origins of pages served elsewhere that may change state here (the `allowedOrigins` option, see {@link allowedOrigin}). */
    readonly allowedOrigins: readonly string[];
    /** The hub's path: its publish is guarded by the hub itself (publish origins, the token), not here. */
    readonly hubPath: string;
}

/**
 * The dev server's checks before any route (it runs on the developer's machine, where any page the developer visits
 * can make the browser send it requests, other local servers' pages included):
 * - a `Host` that is not a loopback name or an allowed host is refused (DNS rebinding: a site whose name resolves to
 *   127.0.0.1 would otherwise be same-origin with the stack);
 * - a state-changing request (not GET, HEAD, OPTIONS) to the app's routes is refused unless it comes from the server's
 *   own origin (its `Origin` is the origin the request's `Host` names: scheme aside, host and port alike) or from one of
 *   `allowedOrigins`; without an `Origin` (Node.js, curl), unless `Sec-Fetch-Site` says another site or another
 *   origin of the same site sent it. A page of another local server (`localhost:5173`, `127.0.0.1:8888`,
 *   `app.localhost`) is another origin: it cannot log the browser in, log it out, broadcast or call the auth endpoint.
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
    if (origin !== undefined && options.allowedOrigins.includes(origin.toLowerCase())) return null;
    const site = req.headers["sec-fetch-site"];
    const own = origin === undefined || ownOrigin(origin, req.headers.host!);
    if (!own || site === "cross-site" || site === "same-site") {
        return {
            status: 403,
            reason: `Refused a ${method} from another origin (Origin ${origin ?? "null"}): the dev server's routes accept state changes only from its own pages and its allowedOrigins.`,
        };
    }
    return null;
}

/**
 * The `allowedOrigins` option's entry for `value`: its origin (`http://localhost:5173`), lower-cased; throws when it is
 * not an http(s) origin (a path, a `*`).
 */
export function allowedOrigin(value: string): string {
    let url: URL | null = null;
    try {
        url = new URL(value);
    } catch {
        // Reported below.
    }
    if (url === null || !/^https?:$/.test(url.protocol) || url.origin !== value.replace(/\/$/, "").toLowerCase()) {
        throw new Error(`allowedOrigins: "${value}" is not an http(s) origin such as http://localhost:5173.`);
    }
    return url.origin;
}

/** Whether `origin` (an `Origin` header) is the origin the request's `host` header names, http or https: the server's own page. */
function ownOrigin(origin: string, host: string): boolean {
    try {
        const page = new URL(origin);
        return /^https?:$/.test(page.protocol) && page.host === new URL(`${page.protocol}//${host}`).host;
    } catch {
        return false; // "null", or no origin at all.
    }
}

/** The host name of a `Host` header or URL host (lower-case, without port or IPv6 brackets), or null when malformed. */
function hostName(header: string | undefined): string | null {
    if (header === undefined || header === "") return null;
    const match = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::\d{1,5})?$/i.exec(header);
    return match === null ? null : (match[1] ?? match[2]!).toLowerCase().replace(/\.$/, "");
}

/** Whether `host` is a loopback name or address, or one of `allowed`. */
function allowedHost(host: string, allowed: readonly string[]): boolean {
    if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
    if (isIP(host) === 4 && host.startsWith("127.")) return true;
    return allowed.some((name) => name.toLowerCase() === host);
}
