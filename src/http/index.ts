/**
 * `laravel-echo-mercure/http`: the `X-Socket-ID` header that Laravel's `broadcast(...)->toOthers()` reads, on the
 * app's own requests. Stock Echo adds it to the global `axios`, jQuery and vue-resource only; these helpers add it
 * to `fetch`, to an axios instance and to Inertia's router, which uses its own HTTP client.
 *
 * The header goes to the page's own origin only (plus the `origins` an app lists): a cross-origin request would
 * otherwise need a CORS preflight that a third-party API may refuse, and no other server has use for the id.
 * It is this connection's socket id, read at each request: nothing is sent before Echo has one.
 *
 * This entry imports nothing of the core, so it costs the core entry nothing.
 */

/** The header Laravel's `toOthers()` reads, as Echo's own interceptors spell it. */
export const SOCKET_ID_HEADER = "X-Socket-ID";

/** Anything with Echo's `socketId()`: a `MercureEcho`, stock `Echo`, or the `echo()` of a framework entry. */
export interface SocketIdSource {
    /** This connection's socket id; empty or undefined when there is none (yet). */
    socketId(): string | undefined;
}

/** Where the header goes. */
export interface SocketIdOptions {
    /** Origins besides the page's own that get the header (`https://api.example.com`). Default none. */
    origins?: readonly string[];
}

/** The page's location, when there is one (not in Node.js, nor in server-side rendering). */
function pageHref(): string | undefined {
    return (globalThis as { location?: { href?: string } }).location?.href;
}

/**
 * What a relative request URL resolves against, as `fetch` and `XMLHttpRequest` (axios) resolve it: the document's base
 * URL, which a `<base href>` anywhere in the page sets (read through `Document.prototype`: an element named `baseURI`
 * shadows the document's own), else the page's location.
 */
function requestBase(): string | undefined {
    const scope = globalThis as { document?: object; Document?: { prototype: object } };
    const base = scope.document === undefined ? undefined : Reflect.get(scope.Document?.prototype ?? scope.document, "baseURI", scope.document);
    return typeof base === "string" ? base : pageHref();
}

/**
 * Whether a request to `url` (absolute, or relative to the document's base URL, as `fetch` resolves it) may carry the
 * header: same origin as the page, or one of `origins`. Without a page, only absolute URLs on one of `origins` qualify.
 */
export function sendsSocketId(url: string | URL, options: SocketIdOptions = {}): boolean {
    const page = pageHref();
    let target: URL;
    try {
        target = new URL(url, requestBase());
    } catch {
        return false;
    }
    if (page !== undefined && target.origin === new URL(page).origin) return true;
    return (options.origins ?? []).some((origin) => {
        try {
            return new URL(origin).origin === target.origin;
        } catch {
            return false;
        }
    });
}

/**
 * The header to add by hand, `{ "X-Socket-ID": id }`, or `{}` while `echo` has no socket id:
 * `fetch(url, { headers: { ...socketIdHeaders(window.Echo), ... } })`.
 */
export function socketIdHeaders(echo: SocketIdSource): Record<string, string> {
    const id = echo.socketId();
    return typeof id === "string" && id !== "" ? { [SOCKET_ID_HEADER]: id } : {};
}

/** A `fetch` function, as far as {@link withSocketId} needs it. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Wrap `fetch` (default `globalThis.fetch`, looked up at each call) so that each request to the page's origin (or
 * `options.origins`) carries this connection's `X-Socket-ID`, unless the caller set that header already; every
 * other request passes through untouched. `const http = withSocketId(window.Echo); await http("/posts", …)`.
 */
export function withSocketId(echo: SocketIdSource, fetchFunction?: FetchFunction, options: SocketIdOptions = {}): FetchFunction {
    return (input, init) => {
        const send = fetchFunction ?? (globalThis.fetch as FetchFunction);
        const url = input instanceof Request ? input.url : input;
        const header = socketIdHeaders(echo);
        if (!(SOCKET_ID_HEADER in header) || !sendsSocketId(url, options)) return send(input, init);
        const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
        if (!headers.has(SOCKET_ID_HEADER)) headers.set(SOCKET_ID_HEADER, header[SOCKET_ID_HEADER]!);
        return send(input, { ...init, headers });
    };
}

/** An axios request config, as far as {@link socketIdInterceptor} needs it (axios 1.x `InternalAxiosRequestConfig`). */
export interface AxiosRequestConfigLike {
    /** The request URL, relative to `baseURL` when one is set. */
    url?: string;
    /** The instance's or request's base URL. */
    baseURL?: string;
    /** axios 1.8's option: false joins even an absolute `url` to `baseURL`. */
    allowAbsoluteUrls?: boolean;
    /** The request headers: axios 1.x's `AxiosHeaders` (with `set`), or a plain object. */
    headers?: unknown;
}

/** An axios `AxiosHeaders` object, as far as this module needs it. */
interface AxiosHeadersLike {
    has(name: string): boolean;
    set(name: string, value: string): unknown;
}

/**
 * A request interceptor for an axios instance: `api.interceptors.request.use(socketIdInterceptor(window.Echo))`.
 * It adds `X-Socket-ID` to requests to the page's origin (or `options.origins`), as stock Echo does for the
 * global `axios` only, unless the request sets that header itself.
 */
export function socketIdInterceptor<TConfig extends AxiosRequestConfigLike>(echo: SocketIdSource, options: SocketIdOptions = {}): (config: TConfig) => TConfig {
    return (config) => {
        const header = socketIdHeaders(echo);
        const id = header[SOCKET_ID_HEADER];
        if (id === undefined || !sendsSocketId(requestUrl(config), options)) return config;
        const headers = config.headers;
        if (isAxiosHeaders(headers)) {
            if (!headers.has(SOCKET_ID_HEADER)) headers.set(SOCKET_ID_HEADER, id);
        } else if (typeof headers === "object" && headers !== null) {
            const plain = headers as Record<string, unknown>;
            if (!Object.keys(plain).some((name) => name.toLowerCase() === "x-socket-id")) plain[SOCKET_ID_HEADER] = id;
        } else {
            config.headers = { [SOCKET_ID_HEADER]: id };
        }
        return config;
    };
}

/** Whether `headers` is axios 1.x's `AxiosHeaders`. */
function isAxiosHeaders(headers: unknown): headers is AxiosHeadersLike {
    return typeof headers === "object" && headers !== null && typeof (headers as AxiosHeadersLike).set === "function" && typeof (headers as AxiosHeadersLike).has === "function";
}

/**
 * The URL an axios config requests, as axios's `buildFullPath` builds it (the page then resolves it): `url` joined to
 * `baseURL`, unless `url` is absolute, which for axios includes a protocol-relative `//host/path` (it goes to that
 * host, whatever `baseURL` says), and `allowAbsoluteUrls` is not false.
 */
function requestUrl(config: AxiosRequestConfigLike): string {
    const url = config.url ?? "";
    const base = config.baseURL;
    if (!base || (/^([a-z][a-z\d+\-.]*:)?\/\//i.test(url) && config.allowAbsoluteUrls !== false)) return url;
    return url === "" ? base : base.replace(/\/+$/, "") + "/" + url.replace(/^\/+/, "");
}

/** Inertia's `before` event (`router.on("before", …)`, the DOM event `inertia:before`), as far as this module needs it. */
export interface InertiaBeforeEventLike {
    /** The visit about to be sent; its `headers` object is the one the request is built from. */
    readonly detail: { readonly visit: { readonly url: URL | string; headers: Record<string, string> } };
}

/**
 * A listener for Inertia's `before` event that adds `X-Socket-ID` to the visit's headers (same origin, or
 * `options.origins`), unless the visit sets it: `router.on("before", inertiaSocketId(window.Echo))`. Inertia
 * builds its request from `visit.headers` after `before` fired, so the header rides on that visit's request.
 */
export function inertiaSocketId(echo: SocketIdSource, options: SocketIdOptions = {}): (event: InertiaBeforeEventLike) => void {
    return (event) => {
        const visit = event.detail.visit;
        const id = socketIdHeaders(echo)[SOCKET_ID_HEADER];
        if (id === undefined || !sendsSocketId(visit.url, options)) return;
        if (Object.keys(visit.headers).some((name) => name.toLowerCase() === "x-socket-id")) return;
        visit.headers[SOCKET_ID_HEADER] = id;
    };
}
