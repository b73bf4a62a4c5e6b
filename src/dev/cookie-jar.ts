/** One stored cookie. */
interface StoredCookie {
    /** The value as the server set it. */
    readonly value: string;
    /** The `Path` attribute (`/` when absent). */
    readonly path: string;
    /** When it expires (ms since the epoch), or `null` for a session cookie. */
    readonly expiresAt: number | null;
}

/**
 * A `fetch` that keeps cookies, as a browser profile does, for scripts and tests that talk to the dev
 * stack from Node.js.
 */
export type CookieJarFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Create a `fetch` that stores every `Set-Cookie` answer (per origin, honouring `Path`, `Max-Age` and
 * `Expires`) and sends the matching cookies on later requests. Pass it as the connector's `fetch` option:
 * the connector hands it to an `EventSource` that accepts `{ fetch }` (the `eventsource` package), so the
 * login cookie reaches the auth request and the hub cookie the auth request sets reaches the stream.
 *
 * `Domain`, `Secure` and `SameSite` are ignored: this is for the dev stack on 127.0.0.1, not a browser.
 */
export function cookieJarFetch(base: CookieJarFetch = (input, init) => fetch(input, init)): CookieJarFetch {
    /** Cookies by origin, then by name. */
    const jar = new Map<string, Map<string, StoredCookie>>();
    return async (input, init = {}) => {
        const url = new URL(String(input));
        const cookies = jar.get(url.origin) ?? new Map<string, StoredCookie>();
        jar.set(url.origin, cookies);
        const headers = new Headers(init.headers);
        const header = cookieHeader(cookies, url.pathname, Date.now());
        if (header !== "") headers.set("Cookie", header);
        const response = await base(url, { ...init, headers });
        for (const line of response.headers.getSetCookie()) store(cookies, line, Date.now());
        return response;
    };
}

/** The `Cookie` header for a request to `path`: the unexpired cookies whose `Path` covers it. */
function cookieHeader(cookies: ReadonlyMap<string, StoredCookie>, path: string, now: number): string {
    const pairs: string[] = [];
    for (const [name, cookie] of cookies) {
        if (cookie.expiresAt !== null && cookie.expiresAt <= now) continue;
        const prefix = cookie.path.endsWith("/") ? cookie.path : cookie.path + "/";
        if (path === cookie.path || path.startsWith(prefix)) pairs.push(`${name}=${cookie.value}`);
    }
    return pairs.join("; ");
}

/** Store one `Set-Cookie` line (`Max-Age` wins over `Expires`, as in browsers); an expired one deletes. */
function store(cookies: Map<string, StoredCookie>, line: string, now: number): void {
    const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
    const eq = pair.indexOf("=");
    if (eq <= 0) return;
    const name = pair.slice(0, eq);
    let path = "/";
    let expiresAt: number | null = null;
    let maxAge: number | null = null;
    for (const attribute of attributes) {
        const split = attribute.indexOf("=");
        const key = (split === -1 ? attribute : attribute.slice(0, split)).toLowerCase();
        const value = split === -1 ? "" : attribute.slice(split + 1);
        if (key === "path" && value.startsWith("/")) path = value;
        if (key === "expires" && !Number.isNaN(Date.parse(value))) expiresAt = Date.parse(value);
        if (key === "max-age" && /^-?\d+$/.test(value)) maxAge = Number(value);
    }
    if (maxAge !== null) expiresAt = now + maxAge * 1000;
    if (expiresAt !== null && expiresAt <= now) cookies.delete(name);
    else cookies.set(name, { value: pair.slice(eq + 1), path, expiresAt });
}
