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

/** The page's globals the CSRF token is read from (absent outside a browser). */
const page = globalThis as {
    Laravel?: { csrfToken?: unknown };
    document?: { querySelector?(selector: string): { getAttribute(name: string): string | null } | null; cookie?: string };
};

/**
 * Split `options` for Echo's `setOptions()`, which writes `csrfToken` and `bearerToken` into `auth.headers` once, as
 * strings (a function would be sent as its source text): the options Echo gets (function credentials as null), and
 * what to put back afterwards (the functions, and `shareAcrossTabs: false` when any credential is a function: tabs
 * share by the value of their credentials, which a function gives only at a request).
 */
export function splitCredentials<T extends Record<string, unknown>>(options: T): [forEcho: T, functions: Record<string, unknown>] {
    const { csrfToken, bearerToken } = options;
    const functions: Record<string, unknown> = {};
    if (typeof csrfToken === "function") functions["csrfToken"] = csrfToken;
    if (typeof bearerToken === "function") functions["bearerToken"] = bearerToken;
    const headers = (options["auth"] as { headers?: Record<string, unknown> } | undefined)?.headers ?? {};
    if (functions["csrfToken"] ?? functions["bearerToken"] ?? Object.values(headers).find((value) => typeof value === "function")) functions["shareAcrossTabs"] = false;
    return [{ ...options, ...("csrfToken" in functions ? { csrfToken: null } : {}), ...("bearerToken" in functions ? { bearerToken: null } : {}) }, functions];
}

/**
 * The headers of one auth request, every credential read now: the page's CSRF token (`window.Laravel.csrfToken`, the
 * `csrfToken` option, `<meta name="csrf-token">`, in Echo's order) as `X-CSRF-TOKEN`, else Laravel's `XSRF-TOKEN`
 * cookie as `X-XSRF-TOKEN` (URL-decoded, as axios sends it); the `bearerToken` as `Authorization: Bearer`; then every
 * `auth.headers` value, a function called. After the server `refused` the page's token (419), the cookie comes before
 * the global and the meta tag: they are what the page was loaded with, while Laravel sets the cookie on every response,
 * so it holds a regenerated session's token. The CSRF and bearer headers are written into `auth.headers` as Echo
 * writes them at construction, so that what reads that record (tab sharing) sees the current ones. Rejects when a
 * function throws.
 */
export async function credentialHeaders(options: CredentialOptions, refused = false): Promise<Record<string, string>> {
    const headers = options.auth.headers;
    const { csrfToken } = options;
    const meta = () => page.document?.querySelector?.('meta[name="csrf-token"]')?.getAttribute("content");
    const cookie = /(?:^|;\s*)XSRF-TOKEN=([^;]*)/.exec(page.document?.cookie ?? "")?.[1];
    // Echo's order (the page's global first), except that a function given as the option is asked first.
    const token = await first(typeof csrfToken === "function" ? [csrfToken, page.Laravel?.csrfToken, meta] : [page.Laravel?.csrfToken, csrfToken, meta]);
    // The cookie: when the page gives no token (and auth.headers none), or after a 419 unless a function gives it.
    const fromCookie = cookie !== undefined && (token === null ? !("X-CSRF-TOKEN" in headers) : refused && typeof csrfToken !== "function");
    if (fromCookie) {
        delete headers["X-CSRF-TOKEN"]; // Laravel reads X-CSRF-TOKEN before X-XSRF-TOKEN.
        headers["X-XSRF-TOKEN"] = safeDecode(cookie);
    } else if (token !== null) headers["X-CSRF-TOKEN"] = token;
    const bearer = typeof options.bearerToken === "function" ? await first([options.bearerToken]) : null;
    if (bearer !== null) headers["Authorization"] = "Bearer " + bearer;
    const resolved: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) resolved[name] = typeof value === "function" ? String(await value()) : value;
    return resolved;
}

/** The first non-empty string among `sources` (a function called, awaited), or null. */
async function first(sources: unknown[]): Promise<string | null> {
    for (const source of sources) {
        const value: unknown = typeof source === "function" ? await (source as () => unknown)() : source;
        if (typeof value === "string" && value !== "") return value;
    }
    return null;
}

/** `decodeURIComponent`, or the text as it is when it is not valid percent-encoding. */
function safeDecode(text: string): string {
    try {
        return decodeURIComponent(text);
    } catch {
        return text;
    }
}
