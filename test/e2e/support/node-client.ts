import { EventSource as NodeEventSource } from "eventsource";
import type { EventSourceConstructor, FetchLike } from "../../../src/transport/platform";

/** One stored cookie. */
interface StoredCookie {
    value: string;
    path: string;
    expiresAt: number | null;
}

/**
 * A minimal cookie jar for one origin, as a browser profile keeps them: it stores `Set-Cookie` answers
 * and sends matching cookies (by path and expiry) on every request, which is what the Laravel
 * session cookie and the httpOnly hub cookie need.
 */
export class CookieJar {
    private readonly cookies = new Map<string, StoredCookie>();

    /** A fetch that keeps cookies. */
    readonly fetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
        const url = new URL(String(input));
        const headers = new Headers(init.headers);
        const cookie = this.header(url.pathname);
        if (cookie !== "") headers.set("Cookie", cookie);
        const response = await fetch(url, { ...init, headers });
        for (const line of response.headers.getSetCookie()) this.store(line);
        return response;
    };

    /** An EventSource class whose requests carry this jar's cookies. */
    eventSource(): EventSourceConstructor {
        const jarFetch = this.fetch;
        return class JarEventSource extends NodeEventSource {
            constructor(url: string | URL, init?: { withCredentials?: boolean }) {
                super(url, { ...init, fetch: (input, requestInit) => jarFetch(input, requestInit as RequestInit) });
            }
        };
    }

    /** The value of a cookie, if set and not expired. */
    get(name: string): string | undefined {
        const cookie = this.cookies.get(name);
        return cookie !== undefined && (cookie.expiresAt === null || cookie.expiresAt > Date.now()) ? cookie.value : undefined;
    }

    /** The `Cookie` header for a request path. */
    private header(path: string): string {
        const now = Date.now();
        const pairs: string[] = [];
        for (const [name, cookie] of this.cookies) {
            if (cookie.expiresAt !== null && cookie.expiresAt <= now) continue;
            if (path === cookie.path || path.startsWith(cookie.path.endsWith("/") ? cookie.path : cookie.path + "/")) pairs.push(`${name}=${cookie.value}`);
        }
        return pairs.join("; ");
    }

    /** Store one `Set-Cookie` line (Max-Age wins over Expires, as in browsers). */
    private store(line: string): void {
        const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
        const index = pair.indexOf("=");
        const name = pair.slice(0, index);
        const value = pair.slice(index + 1);
        let path = "/";
        let expiresAt: number | null = null;
        let maxAge: number | null = null;
        for (const attribute of attributes) {
            const [key = "", raw = ""] = attribute.split("=");
            const lower = key.toLowerCase();
            if (lower === "path") path = raw || "/";
            if (lower === "expires") expiresAt = Date.parse(raw);
            if (lower === "max-age") maxAge = Number(raw);
        }
        if (maxAge !== null) expiresAt = Date.now() + maxAge * 1000;
        if (expiresAt !== null && expiresAt <= Date.now()) this.cookies.delete(name);
        else this.cookies.set(name, { value, path, expiresAt });
    }
}

/** The jar's fetch, typed as the connector's `fetch` option. */
export function connectorFetch(jar: CookieJar): FetchLike {
    return (url, init) => jar.fetch(url, init);
}
