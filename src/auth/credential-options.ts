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
 * Whether any credential of `options` (`csrfToken`, `bearerToken`, a value of `auth.headers`) is a function: its value
 * is known only at a request, so the connector then runs alone (tabs share by the value of their credentials).
 */
export function hasFunction(options: { csrfToken?: unknown; bearerToken?: unknown; auth?: { headers?: object } }): boolean {
    return [options.csrfToken, options.bearerToken, ...Object.values(options.auth?.headers ?? {})].some((value) => typeof value === "function");
}

/**
 * Whether the auth request needs the credentials chunk (see `./credentials`) to read its headers: a credential is a
 * function, the server `refused` the page's CSRF token (419), or the page gave Echo no CSRF token while Laravel's
 * `XSRF-TOKEN` cookie is there. Otherwise `auth.headers` are sent as Echo wrote them (no chunk on the first render).
 */
export function dynamicCredentials(options: CredentialOptions, refused: boolean): boolean {
    const cookie = (globalThis as { document?: { cookie?: string } }).document?.cookie ?? "";
    return refused || hasFunction(options) || (!("X-CSRF-TOKEN" in options.auth.headers) && /(?:^|;\s*)XSRF-TOKEN=/.test(cookie));
}
