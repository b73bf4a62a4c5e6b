import { LaravelDevError } from "./errors";
import { parsePhpUrl } from "./url";

/** What the authorization cookie is built from. */
export interface AuthCookieInput {
    /** Cookie name (`cookie_name`). */
    name: string;
    /** The subscriber JWT, written raw. */
    value: string;
    /** Lifetime in seconds. */
    expiresIn: number;
    /** Current time in milliseconds. */
    now: number;
    /** The public hub URL as configured (`public_url`, absolute or relative). */
    publicUrl: string;
    /** The auth request's host name, without port. */
    requestHost: string;
}

/**
 * Build the Mercure authorization `Set-Cookie` value exactly as symfony/mercure does from Laravel's
 * `public_url`: `<name>=<JWT>; expires=<date>; Max-Age=<n>; path=<path>; [domain=…;] [secure;] httponly;
 * samesite=strict`. Throws a `broadcast_exception` when the hub cannot share a cookie with the app.
 */
export function buildAuthCookie(input: AuthCookieInput): string {
    // [spec] laravel-mercure §2.6: attribute order and spelling follow Symfony's Cookie::__toString(); every
    // attribute comes from parse_url(public_url), taken as written.
    const url = parsePhpUrl(input.publicUrl);
    const expires = new Date(Math.floor(input.now / 1000) * 1000 + input.expiresIn * 1000).toUTCString();
    let cookie = `${input.name}=${input.value}; expires=${expires}; Max-Age=${input.expiresIn}`;
    // [spec] laravel-mercure §2.6: Path is the public URL's path, `/` when it has none.
    cookie += `; path=${url.path ?? "/"}`;
    // [spec] laravel-mercure §2.6: no host (a relative public URL) ⇒ no Domain.
    const domain = url.host === undefined ? null : cookieDomain(input.requestHost, url.host);
    if (domain !== null) cookie += `; domain=${domain}`;
    // [spec] laravel-mercure §2.6: Secure unless the scheme is http; a relative URL has none, so it is Secure.
    if ((url.scheme ?? "https").toLowerCase() !== "http") cookie += "; secure";
    return `${cookie}; httponly; samesite=strict`;
}

/**
 * Compute the cookie `Domain` that lets a cookie set by `requestHost` reach `hubHost`, as symfony/mercure's
 * `getCookieDomain`: `null` for the same host, the request host when the hub is its subdomain, else
 * `.<parent>` for the longest common parent below the TLD. Throws when there is none.
 */
export function cookieDomain(requestHost: string, hubHost: string): string | null {
    // [spec] laravel-mercure §2.6: the Domain algorithm.
    const app = requestHost.toLowerCase();
    const hub = hubHost.toLowerCase();
    if (hub === "" || hub === app) return null;
    if (hub.endsWith(`.${app}`)) return app;
    let parent = app;
    for (let dot = parent.indexOf("."); dot !== -1; dot = parent.indexOf(".")) {
        parent = parent.slice(dot + 1);
        // Never the bare TLD.
        if (!parent.includes(".")) break;
        if (hub === parent || hub.endsWith(`.${parent}`)) return `.${parent}`;
    }
    throw new LaravelDevError(
        "broadcast_exception",
        `Mercure error: Unable to create authorization cookie for a hub on the different second-level domain "${hub}" than the application "${app}"; adjust public_url so the hub shares the application's domain.`,
    );
}

/** Parse a `Cookie` request header into a name → value map (first occurrence wins, values URL-decoded). */
export function parseCookieHeader(header: string | undefined): Map<string, string> {
    const cookies = new Map<string, string>();
    for (const part of (header ?? "").split(";")) {
        const eq = part.indexOf("=");
        if (eq === -1) continue;
        const name = part.slice(0, eq).trim();
        if (name === "" || cookies.has(name)) continue;
        const raw = part.slice(eq + 1).trim();
        let value = raw;
        try {
            value = decodeURIComponent(raw);
        } catch {
            // Keep the raw value when it is not valid percent-encoding.
        }
        cookies.set(name, value);
    }
    return cookies;
}

/** The name of the cookie the dev login route sets. */
export const DEV_USER_COOKIE = "dev_user";

/** The `Set-Cookie` value logging a dev user in: path `/`, HttpOnly, SameSite=Lax, session lifetime. */
export function devUserCookie(id: string): string {
    return `${DEV_USER_COOKIE}=${encodeURIComponent(id)}; Path=/; HttpOnly; SameSite=Lax`;
}

/** The `Set-Cookie` value logging the dev user out. */
export function clearDevUserCookie(): string {
    return `${DEV_USER_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`;
}
