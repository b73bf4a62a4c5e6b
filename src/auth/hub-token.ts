import { MercureError } from "../errors";
import { within } from "../bounded-wait";
import type { FetchLike } from "../fetch";

/*
 * Header auth (the `hubToken` option): part of the lazily loaded platform set-up chunk (see
 * `transport/platform-setup.ts`), reached only by a connector whose options need it, before its first auth request.
 */

/**
 * The `hubToken` option: a subscriber JWT for the hub, or a function returning one (synchronously or as a
 * promise). The function is called again when the token it gave is past a third of its life and after the hub
 * answered 401, so it should mint or fetch a new token each call.
 */
export type HubTokenOption = string | (() => string | Promise<string>);

/**
 * The share of a token's life after which a new one is asked for: below the earliest stream renewal (about
 * 40 % of a token's life or later with the default hub timings, see `renewalDelay`), so that a replacement
 * stream carries a new token.
 */
const REUSE_SHARE = 1 / 3;

/**
 * Read `exp` (seconds since the epoch) from a compact JWS's payload without verifying anything (the hub
 * does that); null when the token is not a JWT or has no numeric `exp`.
 */
export function tokenExpiry(token: string): number | null {
    return tokenTimes(token)?.exp ?? null;
}

/** A JWT's `exp` and `iat` (seconds, the issuer's clock; `iat` null when absent), or null without a numeric `exp`. */
function tokenTimes(token: string): { exp: number; iat: number | null } | null {
    const payload = token.split(".")[1];
    if (payload === undefined) return null;
    try {
        const json = atob(payload.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(payload.length / 4) * 4, "="));
        const { exp, iat } = JSON.parse(json) as { exp?: unknown; iat?: unknown };
        const time = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);
        return time(exp) ? { exp, iat: time(iat) ? iat : null } : null;
    } catch {
        return null;
    }
}

/**
 * How long a token received at `receivedAt` (the page's clock, ms) lives, in ms, on the page's own clock; null when
 * unknown. `exp` and `iat` are both read on the issuer's clock, so `exp − iat` holds whatever the page's clock says
 * (one a few minutes fast reads a fresh token's `exp` as past: issue 29). Without `iat`, `exp` is compared with the
 * page's clock, and a token that reads as already expired there has an unknown life: the hub judges it (a 401 asks
 * for a new one, with backoff).
 */
export function tokenLifetime(token: string, receivedAt: number): number | null {
    const times = tokenTimes(token);
    if (times === null) return null;
    const life = times.iat !== null && times.exp > times.iat ? (times.exp - times.iat) * 1_000 : times.exp * 1_000 - receivedAt;
    return life > 0 ? life : null;
}

/**
 * The hub token of one connector (header auth, `Authorization: Bearer`): the last token obtained, when it
 * was obtained and when it expires, and the one call in flight (single-flight: concurrent askers share it).
 *
 * There is no timer here: {@link HubTokenSource.get} judges freshness when asked (a token past a third of
 * its life, or refused with 401, is replaced), and the connector schedules the stream renewal from
 * {@link HubTokenSource.lifetime}, so the replacement stream asks for a new token before the old one expires.
 */
export class HubTokenSource {
    /**
     * The last token obtained, when (the page's clock, ms), when it expires on the page's clock (received + its
     * lifetime, see {@link tokenLifetime}; null when unknown), and whether the hub refused it (401); null before the first.
     */
    private token: { value: string; obtainedAt: number; expiresAt: number | null; refused: boolean } | null = null;

    /** The call of the `hubToken` function in flight, shared by every asker. */
    private pending: Promise<string> | null = null;

    /**
     * Wrap the `hubToken` option; a call of its function that gives nothing within `timeout` ms fails (the auth
     * request's default deadline), so that a hung call can neither stall the auth nor be shared by every later asker.
     */
    constructor(
        private readonly option: HubTokenOption,
        private readonly timeout: number = 15_000,
    ) {}

    /**
     * The last token obtained, even one refused, for an `EventSource` that takes its headers synchronously (a refused
     * token gets 401 and a re-auth, where an empty header would get a fatal 400); null before the first.
     */
    current(): string | null {
        return this.token?.value ?? null;
    }

    /**
     * A usable token: the last one while it is fresh (under a third of its life, not refused), else a new one from
     * the option (one call at a time). Rejects with a `MercureError` when the function fails or returns no string.
     */
    get(): Promise<string> {
        const token = this.token;
        if (token !== null && !token.refused && (token.expiresAt === null || Date.now() < token.obtainedAt + REUSE_SHARE * (token.expiresAt - token.obtainedAt))) {
            return Promise.resolve(token.value);
        }
        this.pending ??= this.obtain().finally(() => (this.pending = null));
        return this.pending;
    }

    /** The hub refused the last token (401): the next {@link HubTokenSource.get} asks for a new one. */
    refused(): void {
        if (this.token !== null) this.token.refused = true;
    }

    /**
     * How many seconds from `since` (wall clock, ms) the current token lives, at most `fallback` (the auth
     * response's `expires_in`, null when unknown): what the stream renewal is scheduled from.
     */
    lifetime(since: number, fallback: number | null): number | null {
        const expiresAt = this.token?.expiresAt ?? null;
        if (expiresAt === null) return fallback;
        const life = Math.max(0, (expiresAt - since) / 1_000);
        return fallback === null ? life : Math.min(life, fallback);
    }

    /** Call the option once and keep what it gave. */
    private async obtain(): Promise<string> {
        const option = this.option;
        // A call that never settles fails at the deadline, and the next get() calls the function again.
        const waited = await within(() => (typeof option === "function" ? option() : option), this.timeout, new AbortController().signal);
        if (waited.kind === "timeout") {
            throw new MercureError("auth_failed", `The \`hubToken\` function gave no token within ${this.timeout} ms; retrying with backoff.`);
        }
        if (waited.kind !== "done") {
            throw new MercureError("auth_failed", "The `hubToken` function failed; retrying with backoff.", { cause: waited.kind === "failed" ? waited.cause : undefined });
        }
        const value: unknown = waited.value;
        // [spec] mercure-hub §2.1: the token travels as `Authorization: Bearer <jws>`, one token, no spaces.
        if (typeof value !== "string" || !/^[A-Za-z0-9\-._~+/]+=*$/.test(value)) {
            throw new MercureError("invalid_option", "`hubToken` must give a bare subscriber JWT (no `Bearer `, no spaces).");
        }
        const obtainedAt = Date.now();
        const life = tokenLifetime(value, obtainedAt);
        this.token = { value, obtainedAt, expiresAt: life === null ? null : obtainedAt + life, refused: false };
        return value;
    }
}

/**
 * `fetch` with the hub token: a request to the hub (its URL, or a path below it: subscriptions, snapshots,
 * whispers, probes, the `eventsource` package's streams) carries `Authorization: Bearer <token>` unless it sets its
 * own, and does not follow a redirect (the token goes to the hub URL only, whatever the `fetch` option does with
 * Authorization on a redirect: the 3xx, or a browser's opaque answer of status 0, is the answer); a 401 from the hub
 * makes the token source ask for a new token next time. Other requests (the auth endpoint) go as they are.
 */
export function withHubToken(fetch: FetchLike, hub: URL, token: HubTokenSource): FetchLike {
    const base = hub.origin + hub.pathname.replace(/\/$/, "");
    const isHub = (url: string): boolean => {
        const href = new URL(url, hub).href;
        return href.startsWith(base) && /^(?:$|[/?#])/.test(href.slice(base.length));
    };
    return async (url, init) => {
        if (!isHub(url)) return fetch(url, init);
        const headers = new Headers(init.headers);
        // [spec] mercure-hub §2.1: the header, never the query string.
        if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${await token.get()}`);
        const response = await fetch(url, { ...init, headers, redirect: "manual" });
        if (response.status === 401) token.refused();
        return response;
    };
}
