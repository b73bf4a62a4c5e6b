import type { CredentialOptions } from "./credential-options";

/*
 * The credentials of an auth request read at the request (a lazily loaded chunk, see `./load-credentials`): reached
 * only when `dynamicCredentials()` says so (a credential function, a 419, an `XSRF-TOKEN` cookie without a page token).
 */

/** The page's globals the CSRF token is read from (absent outside a browser). */
const page = globalThis as {
    Laravel?: { csrfToken?: unknown };
    document?: { querySelector?(selector: string): { getAttribute(name: string): string | null } | null; cookie?: string };
};

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
    if (typeof headers["X-CSRF-TOKEN"] === "function" && token === null) delete headers["X-CSRF-TOKEN"]; // Echo wrote the function.
    // The cookie: when the page gives no token (and auth.headers none), or after a 419 unless a function gives it.
    const fromCookie = cookie !== undefined && (token === null ? !("X-CSRF-TOKEN" in headers) : refused && typeof csrfToken !== "function");
    if (fromCookie) {
        delete headers["X-CSRF-TOKEN"]; // Laravel reads X-CSRF-TOKEN before X-XSRF-TOKEN.
        headers["X-XSRF-TOKEN"] = safeDecode(cookie);
    } else if (token !== null) headers["X-CSRF-TOKEN"] = token;
    // Echo wrote a function credential at construction as text (or the function itself): replaced by its value, or removed.
    if (typeof options.bearerToken === "function") {
        const bearer = await first([options.bearerToken]);
        if (bearer === null) delete headers["Authorization"];
        else headers["Authorization"] = "Bearer " + bearer;
    }
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
