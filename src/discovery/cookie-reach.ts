/**
 * Why the hub cookie may not reach the hub, judged from names and URLs alone (the cookie itself is
 * httpOnly: a page never sees it).
 *
 * - `name_mismatch`: the app sets a cookie the hub does not read (`MERCURE_COOKIE_NAME` vs the hub's
 *   `cookie_name`, advertised as `mercure_cookie`).
 * - `secure_prefix_on_http`: a `__Secure-`/`__Host-` name, which browsers refuse over plain HTTP.
 * - `cross_site`: the hub is on another site than the page, which a `SameSite=Strict` cookie set for the
 *   app's host never reaches (and Laravel cannot give it a shared `Domain`).
 */
export type CookieProblem =
    | { readonly kind: "name_mismatch"; readonly appCookie: string; readonly hubCookie: string }
    | { readonly kind: "secure_prefix_on_http"; readonly name: string }
    | { readonly kind: "cross_site"; readonly pageHost: string; readonly hubHost: string };

/** What {@link cookieProblems} judges from. */
export interface CookieFacts {
    /** The hub URL. */
    readonly hub: URL;
    /** The page origin, or null outside a browser. */
    readonly pageOrigin: string | null;
    /** The cookie name the hub reads (its metadata's `mercure_cookie`), when known. */
    readonly hubCookie: string | null;
    /** The cookie name the app sets, when known. */
    readonly appCookie: string | null;
}

/** Every reason the cookie cannot reach the hub that the facts show, most specific first. */
export function cookieProblems(facts: CookieFacts): CookieProblem[] {
    const problems: CookieProblem[] = [];
    if (facts.appCookie !== null && facts.hubCookie !== null && facts.appCookie !== facts.hubCookie) {
        problems.push({ kind: "name_mismatch", appCookie: facts.appCookie, hubCookie: facts.hubCookie });
    }
    const page = parseOrigin(facts.pageOrigin);
    // [spec] mercure-hub §2.1: the `__Secure-` prefix means the cookie is refused over plain HTTP.
    for (const name of new Set([facts.appCookie, facts.hubCookie])) {
        if (name === null || !/^__(?:secure|host)-/i.test(name)) continue;
        if (facts.hub.protocol === "http:" || page?.protocol === "http:") problems.push({ kind: "secure_prefix_on_http", name });
    }
    // [spec] laravel-mercure §2.6: the cookie reaches only the app's host, its subdomains, or siblings
    // sharing a parent domain below the TLD.
    if (page !== null && !cookieCanReach(page.hostname, facts.hub.hostname)) {
        problems.push({ kind: "cross_site", pageHost: page.hostname, hubHost: facts.hub.hostname });
    }
    return problems;
}

/**
 * Whether a cookie Laravel sets for a page on `pageHost` can be sent to a hub on `hubHost`: the same
 * host, a subdomain of it, or a host sharing a parent domain of at least two labels (IP addresses and
 * single-label hosts only match themselves). Without the Public Suffix List this treats `co.uk`-style
 * suffixes as shareable parents; Laravel's own algorithm does the same.
 */
export function cookieCanReach(pageHost: string, hubHost: string): boolean {
    const page = pageHost.toLowerCase();
    const hub = hubHost.toLowerCase();
    if (page === hub) return true;
    if (isIpAddress(page) || isIpAddress(hub)) return false;
    if (hub.endsWith(`.${page}`)) return true;
    const labels = page.split(".");
    for (let start = 1; start <= labels.length - 2; start++) {
        const parent = labels.slice(start).join(".");
        if (hub === parent || hub.endsWith(`.${parent}`)) return true;
    }
    return false;
}

function isIpAddress(host: string): boolean {
    return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(host) || host.startsWith("[") || host.includes(":");
}

function parseOrigin(origin: string | null): URL | null {
    if (origin === null) return null;
    try {
        return new URL(origin);
    } catch {
        return null;
    }
}
