import { within } from "../bounded-wait";
import { MercureError } from "../errors";
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

/** Where one reading of the credentials stands: the credential being read, and whether its caller gave up on it. */
interface Reading {
    /** The credential whose function was called last, as a message names it ("the `bearerToken` function"). */
    label: string;
    /** Set when the caller stopped waiting (the deadline, `disconnect()`): a function that settles late changes nothing. */
    stale: boolean;
}

/**
 * The headers of one auth request (see {@link credentialHeaders}), read within `timeout` ms (the `authTimeout`
 * option) or until `signal` aborts: a credential function that never settles must not hang the connector. Resolves
 * with the headers; with a `MercureError` naming the credential whose function threw, rejected or gave nothing in
 * time (its own error kept as `cause`, never quoted: it may hold the credential); or with null when aborted.
 */
export async function readCredentials(options: CredentialOptions, refused: boolean, timeout: number, signal: AbortSignal): Promise<Record<string, string> | MercureError | null> {
    const reading: Reading = { label: "", stale: false };
    const waited = await within(() => credentialHeaders(options, refused, reading), timeout, signal);
    if (waited.kind === "done") return waited.value;
    reading.stale = true;
    if (waited.kind === "aborted") return null;
    return waited.kind === "timeout"
        ? new MercureError("auth_failed", `${reading.label} gave no value within ${timeout} ms, the \`authTimeout\` option`)
        : new MercureError("auth_failed", `${reading.label} failed`, { cause: waited.cause });
}

/**
 * The headers of one auth request, every credential read now: the page's CSRF token (`window.Laravel.csrfToken`, the
 * `csrfToken` option, `<meta name="csrf-token">`, in Echo's order) as `X-CSRF-TOKEN`, else Laravel's `XSRF-TOKEN`
 * cookie as `X-XSRF-TOKEN` (URL-decoded, as axios sends it); the `bearerToken` as `Authorization: Bearer`; then every
 * `auth.headers` value, a function called. After the server `refused` the page's token (419), the cookie comes before
 * the global and the meta tag: they are what the page was loaded with, while Laravel sets the cookie on every response,
 * so it holds a regenerated session's token. The CSRF and bearer headers are written into `auth.headers` as Echo
 * writes them at construction, so that what reads that record (tab sharing) sees the current ones; a `reading` its
 * caller gave up on writes nothing and calls no further function. Rejects when a function throws.
 */
export async function credentialHeaders(options: CredentialOptions, refused = false, reading: Reading = { label: "", stale: false }): Promise<Record<string, string>> {
    const headers = options.auth.headers;
    const { csrfToken } = options;
    /** Call `source` when it is a function (named `label` meanwhile), else give it as it is. */
    const call = async (label: string, source: unknown): Promise<unknown> => {
        if (typeof source !== "function") return source;
        reading.label = label;
        const value: unknown = await (source as () => unknown)();
        if (reading.stale) throw new Error("abandoned"); // Its caller went on without it: write nothing.
        return value;
    };
    /** The first non-empty string among `sources` (label, source), or null. */
    const first = async (sources: Array<[string, unknown]>): Promise<string | null> => {
        for (const [label, source] of sources) {
            const value = await call(label, source);
            if (typeof value === "string" && value !== "") return value;
        }
        return null;
    };
    const meta = () => page.document?.querySelector?.('meta[name="csrf-token"]')?.getAttribute("content");
    const cookie = /(?:^|;\s*)XSRF-TOKEN=([^;]*)/.exec(page.document?.cookie ?? "")?.[1];
    const option: [string, unknown] = ["the `csrfToken` function", csrfToken];
    const global: [string, unknown] = ["`window.Laravel.csrfToken`", page.Laravel?.csrfToken];
    // Echo's order (the page's global first), except that a function given as the option is asked first.
    const token = await first(typeof csrfToken === "function" ? [option, global, ["the csrf-token meta tag", meta]] : [global, option, ["the csrf-token meta tag", meta]]);
    const bearer = typeof options.bearerToken === "function" ? await first([["the `bearerToken` function", options.bearerToken]]) : undefined;
    // Echo wrote the function, or an element: a page element with the id "Laravel" shadows a missing `window.Laravel`
    // (DOM clobbering), and Echo sends what `Laravel.csrfToken` then is, not a token (the server answered 419).
    if (typeof headers["X-CSRF-TOKEN"] !== "string" && token === null) delete headers["X-CSRF-TOKEN"];
    // The cookie: when the page gives no token (and auth.headers none), or after a 419 unless a function gives it.
    const fromCookie = cookie !== undefined && (token === null ? !("X-CSRF-TOKEN" in headers) : refused && typeof csrfToken !== "function");
    if (fromCookie) {
        delete headers["X-CSRF-TOKEN"]; // Laravel reads X-CSRF-TOKEN before X-XSRF-TOKEN.
        headers["X-XSRF-TOKEN"] = safeDecode(cookie);
    } else if (token !== null) headers["X-CSRF-TOKEN"] = token;
    // Echo wrote a function credential at construction as text (or the function itself): replaced by its value, or removed.
    if (bearer === null) delete headers["Authorization"];
    else if (bearer !== undefined) headers["Authorization"] = "Bearer " + bearer;
    const resolved: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) resolved[name] = String(await call(`the \`auth.headers\` "${name}" function`, value));
    return resolved;
}

/** `decodeURIComponent`, or the text as it is when it is not valid percent-encoding. */
function safeDecode(text: string): string {
    try {
        return decodeURIComponent(text);
    } catch {
        return text;
    }
}
