import type { StampStorage } from "../auth/auth-stamp";
import { requestAuthorization, type AuthResult } from "../auth/auth-client";
import type { AuthResponse } from "../auth/auth-response";
import { renewalDelay, type HubTimeouts } from "../auth/cookie-refresh";
import { MercureError } from "../errors";
import type { EventSourceConstructor, FetchLike } from "../transport/platform";
import { AuthGateway } from "./auth-gateway";
import type { ToClient, ToEngine } from "./protocol";
import { StreamMux } from "./stream-mux";

/** What the engine is made of: the leading tab's platform and auth options, its epoch, and how it reaches the clients. */
export interface HubEngineOptions {
    /** The hub URL. */
    readonly hub: URL;
    /** The auth endpoint, ready for `fetch`. */
    readonly authEndpoint: string;
    /** The real `EventSource`. */
    readonly EventSource: EventSourceConstructor;
    /** The `fetch` of the auth request. */
    readonly fetch: FetchLike;
    /**
     * The auth request's headers, read at each request (the CSRF token changes: see `engineHeaders` in share-platform.ts);
     * `refused`: the server refused the CSRF token before (419). Rejects when a credential function throws.
     */
    readonly headers: (refused: boolean) => Promise<Record<string, string>>;
    /** The auth request's deadline in milliseconds. */
    readonly timeout: () => number;
    /** The leading connector's hub timings. */
    readonly hubTimeouts: () => HubTimeouts;
    /** Where the auth requests write their stamp (see `auth-stamp.ts`); the page's `localStorage` when undefined. */
    readonly stamps?: StampStorage | undefined;
    /** Send a message to the clients `to`, or to the one client it names (`c`, or the client of stream `s`). */
    readonly send: (message: ToClient, to?: readonly string[]) => void;
    /** Tell every client how many more whisper streams the connection budget leaves. */
    readonly room: (free: number) => void;
    /** The grant the engine starts from (a connector of this tab authorized on its own before the engine existed), if any. */
    readonly seed?: (EngineSeed & { readonly client: string }) | null;
}

/** A grant the engine starts from: the channels granted, the parsed answer, and when the request was sent (wall clock, ms). */
export interface EngineSeed {
    /** The channels of the connector that authorized them (its set). */
    readonly names: readonly string[];
    /**
     * The channels the cookie holds, when more than `names`: the connector authorized another tab's channels beside its
     * own while its share client downloaded (issue 53: see `HubLocator`'s `#direct`). Default `names`.
     */
    readonly granted?: readonly string[];
    readonly response: AuthResponse;
    readonly sentAt: number;
}

/**
 * The hub engine of the leading tab (loaded lazily: only the leader needs it): serves every tab's connector,
 * its own included, through the {@link AuthGateway} (one batch auth for the union of every tab's channels)
 * and the {@link StreamMux} (one real main stream for every tab, shared whisper streams). The channel logic
 * stays in each tab's connector; the engine only feeds it. It runs no timer of its own (see `tab-link.ts`).
 */
export class HubEngine {
    /** The shared batch auth. */
    readonly #gateway: AuthGateway;

    /** The shared streams. */
    readonly #mux: StreamMux;

    /** Cancels the real auth request in flight when the engine stops. */
    readonly #aborter = new AbortController();

    /** The server refused the leading page's CSRF token once (419): from then on the `XSRF-TOKEN` cookie is read first. */
    #refused = false;

    /** Start an engine; opens nothing until a client asks. */
    constructor(private readonly options: HubEngineOptions) {
        this.#mux = new StreamMux({ hub: options.hub, EventSource: options.EventSource, send: options.send, refused: () => this.#gateway.invalidate(), room: options.room });
        this.#gateway = new AuthGateway({
            request: (names) => this.#authorize(names),
            hubTimeouts: options.hubTimeouts,
            granted: (renewAt, added) => this.#mux.renew(renewAt, added),
            failed: (client) => this.#mux.end(client),
            reopen: () => this.#mux.reopen(),
        });
        if (options.seed) {
            this.#gateway.seed(options.seed.client, options.seed);
            // The seed's cookie is the browser's: real whisper streams opened on it are renewed by its renewal point.
            this.#mux.renew(options.seed.sentAt + renewalDelay(options.seed.response.expiresIn, options.hubTimeouts()));
        }
    }

    /**
     * [spec] laravel-mercure §2.2: one batch request with the leading tab's endpoint, headers (read now) and timeout. A
     * 419 (Laravel's CSRF token mismatch: the leading page's token is older than the session's) makes the engine read the
     * `XSRF-TOKEN` cookie first from then on; the clients' own retry of a 419 (`BatchAuth.request`) is the one retry,
     * as for a connector alone: the engine does not add its own.
     */
    async #authorize(names: readonly string[]): Promise<AuthResult> {
        const { options } = this;
        let headers: Record<string, string>;
        try {
            headers = await options.headers(this.#refused);
        } catch (cause) {
            // The function's own error stays the cause, never in the message: it may quote the credential.
            return { kind: "error", status: null, cause: new MercureError("auth_failed", "a credential function failed, or its code did not load", { cause }) };
        }
        const signal = this.#aborter.signal;
        if (signal.aborted) return { kind: "aborted" };
        const result = await requestAuthorization({ endpoint: options.authEndpoint, headers, channelNames: names, fetch: options.fetch, signal, timeout: options.timeout(), stamps: options.stamps });
        if (result.kind === "rejected" && result.status === 419) this.#refused = true;
        return result;
    }

    /** A client's message (from the bus: checked first, see {@link isEngineMessage}). */
    receive(message: ToEngine): void {
        if (!isEngineMessage(message)) return;
        // [spec] Not from the last grant: the hub refused the cookie, or a tab's own auth request replaced it.
        if ((message.t === "hello" || message.t === "auth") && message.fresh === true) this.#gateway.invalidate();
        switch (message.t) {
            case "hello":
                return this.#gateway.record(message.c, message.names, message.resync === true);
            case "auth": {
                const { c, r } = message;
                return this.#gateway.request(c, message.names, (result) => this.options.send({ t: "granted", c, r, result: cloneable(result) }), message.p === true);
            }
            case "open":
                return this.#mux.open(message.c, message.s, message.url, message.w);
            case "close":
                return this.#mux.close(message.s);
            case "bye":
                this.#gateway.forget(message.c);
                return this.#mux.forget(message.c);
            case "ping":
            case "here":
                return;
        }
    }

    /** The last event id forwarded (the real main stream's cursor), or null. */
    cursor(): string | null {
        return this.#mux.cursor;
    }

    /** Stop: close the real streams and answer nothing more (a stolen lead; the clients follow the next engine). */
    close(): void {
        this.#aborter.abort();
        this.#gateway.close();
        this.#mux.closeAll();
    }
}

/**
 * Whether `data` is a client's message with the shape its type needs (a stray or forged post on the bus is dropped): a
 * stream id must be its client's (`c` + "/"), so that no message closes another client's streams by mistake.
 */
export function isEngineMessage(data: unknown): data is ToEngine {
    const m = data as Record<string, unknown> | null;
    if (typeof m !== "object" || m === null) return false;
    const { t, c, s, names } = m;
    const str = (value: unknown): value is string => typeof value === "string";
    const own = str(c) && (s === undefined || (str(s) && s.startsWith(c + "/")));
    const list = Array.isArray(names) && names.every(str);
    switch (t) {
        case "hello":
            return own && list;
        case "auth":
            return own && list && typeof m["r"] === "number";
        case "open":
            return own && str(s) && typeof m["w"] === "boolean" && isUrl(m["url"]);
        case "close":
            return own && str(s);
        case "bye":
        case "ping":
            return str(c);
    }
    return false;
}

/** Whether `value` is an absolute URL (the multiplexer parses a subscribe URL). */
function isUrl(value: unknown): boolean {
    try {
        return new URL(value as string).href !== "";
    } catch {
        return false;
    }
}

/** `result` as `BroadcastChannel` can clone it: a failure's `cause` that is not an `Error` travels as its text. */
function cloneable(result: AuthResult): AuthResult {
    if (result.kind !== "error" || result.cause === null || result.cause instanceof Error) return result;
    return { ...result, cause: String(result.cause) };
}
