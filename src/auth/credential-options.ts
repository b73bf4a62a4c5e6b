/**
 * A credential option (`csrfToken`, `bearerToken`): a string, or a function giving one (synchronously or as a
 * promise) that is called before every auth request, so that a login, a rotated JWT or a regenerated session is sent
 * as it is now; null (or a function giving null or an empty string) for none.
 */
export type CredentialOption = string | null | (() => string | null | undefined | Promise<string | null | undefined>);

/** A value of `auth.headers`: a string, or a function giving one (synchronously or as a promise), called before every auth request. */
export type HeaderOption = string | (() => string | Promise<string>);

/** The connector options the auth request's credentials are read from, at each request. */
export interface CredentialOptions {
    /** The `auth` option: extra headers; the connector keeps the page's CSRF token and the `bearerToken` here. */
    readonly auth: { readonly headers: Record<string, HeaderOption> };
    /** The `csrfToken` option. */
    readonly csrfToken?: unknown;
    /** The `bearerToken` option. */
    readonly bearerToken?: unknown;
}

/**
 * Whether auth header `name` tells users apart. Every header does but Laravel's CSRF token (`X-CSRF-TOKEN`,
 * `X-XSRF-TOKEN`): the one token of the browser's session, which a page has from its `<meta name="csrf-token">` (as it
 * was when the page was rendered) or from the `XSRF-TOKEN` cookie (a new encryption of it on every response Laravel
 * sends). The tabs of one browser share the session cookie, so one user's tabs differ only by it (issue 49). Any other
 * header (`Authorization`, an app's `X-Tenant`) is taken to identify: tab sharing keeps apart the tabs that differ in one.
 */
export function identifies(name: string): boolean {
    return !/^x-[cx]srf-token$/i.test(name);
}

/**
 * Whether any credential of `options` (`csrfToken`, `bearerToken`, a value of `auth.headers`) is a function: its value
 * is known only at a request. `identifying`: only one that tells users apart (see {@link identifies}): its value would
 * name the connector's tab group, so the connector then runs alone (a CSRF token's function is read by the leading tab's
 * engine at each request instead).
 */
export function hasFunction(options: { csrfToken?: unknown; bearerToken?: unknown; auth?: { headers?: object } }, identifying = false): boolean {
    const headers = Object.entries(options.auth?.headers ?? {}).filter(([name]) => !identifying || identifies(name));
    return [identifying ? null : options.csrfToken, options.bearerToken, ...headers.map(([, value]) => value as unknown)].some((value) => typeof value === "function");
}

/**
 * Whether the auth request needs the credentials chunk (see `./credentials`) to read its headers: a credential is a
 * function, the server `refused` the page's CSRF token (419), or the page gave Echo no CSRF token while Laravel's
 * `XSRF-TOKEN` cookie is there. Otherwise `auth.headers` are sent as Echo wrote them (no chunk on the first render).
 */
export function dynamicCredentials(options: CredentialOptions, refused: boolean): boolean {
    // The cookie is read last: a page's first `document.cookie` costs a round trip to the browser's cookie store (1-2 ms in
    // Chromium, before the first auth request), which a page with a CSRF token never needs.
    const cookie = () => (globalThis as { document?: { cookie?: string } }).document?.cookie ?? "";
    return refused || hasFunction(options) || (!("X-CSRF-TOKEN" in options.auth.headers) && /(?:^|;\s*)XSRF-TOKEN=/.test(cookie()));
}
