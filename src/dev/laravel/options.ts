import type { IncomingMessage } from "node:http";
import { LaravelDevError } from "./errors";

/** A user of the dev app. */
export interface DevUser {
    /** The user's identifier; its string form is the JWT `sub` and the presence `user_id`. */
    id: string | number;
    /** A display name. */
    name?: string;
    /** Any further attributes a channel callback may use. */
    [key: string]: unknown;
}

/**
 * Laravel channel callback: `false` = deny; any other PHP-falsy result (`undefined`, `null`, `0`, `""`, `"0"`,
 * `[]`, `{}`) = no decision (later matching patterns are tried, then deny); any truthy value = allow (presence:
 * it becomes the member's info).
 */
export type ChannelCallback = (user: DevUser, params: Record<string, string>) => unknown;

/** A URL option that may be computed late, because dev-stack ports are ephemeral. */
export type UrlOption = string | (() => string);

/** How the dev app is configured; the names follow Laravel's `config/broadcasting.php` `mercure` connection. */
export interface BroadcastingAppOptions {
    /** URL the server POSTs publishes to (Laravel `url`); a function is resolved at each use. */
    hubUrl: UrlOption;
    /**
     * URL browsers use (Laravel `public_url`); relative values are resolved against the auth request's origin
     * (PR #61629). Default: `hubUrl`. Drives cookie Path/Domain/Secure, JWT `aud`, presence pattern path.
     */
    publicUrl?: UrlOption;
    /**
     * Laravel `app.url`, used only to make a relative `publicUrl` absolute when there is no request to resolve
     * it against (the publisher token's `aud`). Default: the hub URL.
     */
    appUrl?: UrlOption;
    /**
     * JWT `aud` of every token (Laravel's `claims.aud`): the hub's pinned resource identifier when it differs
     * from the public URL. Default: the absolute public URL.
     */
    audience?: UrlOption;
    /** JWT key for subscriber cookies and publisher tokens (the same key for both roles). */
    jwtKey: string;
    /** JWT `iss` (and `client_id`). Default `"http://laravel.test"`. */
    issuer?: string;
    /** Cookie name. Default `"mercure_access_token"`; a `__` name with an `http:` public URL answers 500. */
    cookieName?: string;
    /** Cookie and JWT lifetime in seconds (Laravel `subscribe_expiration`×60). Default 300. */
    expiresIn?: number;
    /** Topic namespace. Default `"https://laravel.alt/echo/"`; `null` ⇒ legacy server (bare channel topics). */
    topicPrefix?: string | null;
    /** Whether whisper grants are minted and reported. Default `true`. */
    clientEvents?: boolean;
    /** Base64 of 32 bytes (optional `base64:` prefix) enabling `private-encrypted-*` channels. */
    encryptionKey?: string;
    /** Older servers: any denied guarded channel ⇒ the whole request is 403. Default `false`. */
    allOrNothing?: boolean;
    /** Older servers: the presence payload is the raw callback result instead of `{user_id, user_info}`. */
    legacyPresencePayload?: boolean;
    /** Identify the user of a request. Default: the `dev_user` cookie, looked up in `users`. */
    resolveUser?: (req: IncomingMessage) => DevUser | null;
    /** Known users, for the default `resolveUser` and the login route. */
    users?: DevUser[];
    /** Clock in milliseconds, injectable for tests. Default `Date.now`. */
    now?: () => number;
    /**
     * Check Laravel's CSRF token on `POST /broadcasting/auth` (419 without the session's token, see `csrf.ts`); the
     * token is then set as the `XSRF-TOKEN` cookie by the login and by `GET /dev/csrf`. Default `false`.
     */
    csrf?: boolean;
}

/** The options with every default applied and every value checked. */
export interface ResolvedOptions {
    /** See {@link BroadcastingAppOptions.hubUrl}. */
    hubUrl: UrlOption;
    /** See {@link BroadcastingAppOptions.publicUrl}; defaults to the hub URL. */
    publicUrl: UrlOption;
    /** See {@link BroadcastingAppOptions.appUrl}; `null` means "use the hub URL". */
    appUrl: UrlOption | null;
    /** See {@link BroadcastingAppOptions.audience}; `null` means "the absolute public URL". */
    audience: UrlOption | null;
    /** See {@link BroadcastingAppOptions.jwtKey}. */
    jwtKey: string;
    /** See {@link BroadcastingAppOptions.issuer}. */
    issuer: string;
    /** See {@link BroadcastingAppOptions.cookieName}. */
    cookieName: string;
    /** See {@link BroadcastingAppOptions.expiresIn}. */
    expiresIn: number;
    /** See {@link BroadcastingAppOptions.topicPrefix}. */
    topicPrefix: string | null;
    /** See {@link BroadcastingAppOptions.clientEvents}. */
    clientEvents: boolean;
    /** The decoded 32-byte master key, or `null` when encrypted channels are not configured. */
    encryptionKey: Uint8Array | null;
    /** See {@link BroadcastingAppOptions.allOrNothing}. */
    allOrNothing: boolean;
    /** See {@link BroadcastingAppOptions.legacyPresencePayload}. */
    legacyPresencePayload: boolean;
    /** See {@link BroadcastingAppOptions.users}. */
    users: DevUser[];
    /** See {@link BroadcastingAppOptions.now}. */
    now: () => number;
}

/** The dev app's default JWT `iss` (Laravel's is `claims.iss`, else `app.url`). */
export const DEFAULT_ISSUER = "http://laravel.test";

/** Laravel's default topic namespace (`.alt` is the RFC 9476 non-resolvable TLD). */
export const DEFAULT_TOPIC_PREFIX = "https://laravel.alt/echo/";

/** Apply defaults and validate, throwing a {@link LaravelDevError} `invalid_option` on unusable values. */
export function resolveOptions(options: BroadcastingAppOptions): ResolvedOptions {
    // [spec] laravel-mercure §1.1: defaults and validation of the `mercure` connection.
    if (typeof options.jwtKey !== "string" || Buffer.byteLength(options.jwtKey) < 32) {
        throw new LaravelDevError(
            "invalid_option",
            "The jwtKey option must be a string of at least 32 bytes for HS256.",
        );
    }
    const expiresIn = options.expiresIn ?? 300;
    if (!Number.isInteger(expiresIn) || expiresIn <= 0) {
        throw new LaravelDevError("invalid_option", "The expiresIn option must be a positive whole number of seconds.");
    }
    return {
        hubUrl: options.hubUrl,
        publicUrl: options.publicUrl ?? options.hubUrl,
        appUrl: options.appUrl ?? null,
        audience: options.audience ?? null,
        jwtKey: options.jwtKey,
        issuer: options.issuer ?? DEFAULT_ISSUER,
        cookieName: options.cookieName ?? "mercure_access_token",
        expiresIn,
        topicPrefix: options.topicPrefix === undefined ? DEFAULT_TOPIC_PREFIX : options.topicPrefix,
        clientEvents: options.clientEvents ?? true,
        encryptionKey: options.encryptionKey === undefined ? null : decodeMasterKey(options.encryptionKey),
        allOrNothing: options.allOrNothing ?? false,
        legacyPresencePayload: options.legacyPresencePayload ?? false,
        users: options.users ?? [],
        now: options.now ?? Date.now,
    };
}

/** Read a URL option now. */
export function urlValue(option: UrlOption): string {
    return typeof option === "function" ? option() : option;
}

/**
 * Make the public URL absolute: absolute values are kept verbatim, relative ones are resolved against `base`
 * (the auth request's origin, PR #61629).
 */
export function absolutePublicUrl(publicUrl: string, base: string): string {
    if (/^[a-z][a-z0-9+.-]*:/i.test(publicUrl)) return publicUrl;
    return new URL(publicUrl, base).href;
}

/** Decode Laravel's `encryption_key`: base64 of exactly 32 bytes, optional `base64:` prefix. */
function decodeMasterKey(value: string): Uint8Array {
    const text = value.startsWith("base64:") ? value.slice("base64:".length) : value;
    const bytes = /^[A-Za-z0-9+/]*={0,2}$/.test(text) ? Buffer.from(text, "base64") : null;
    if (bytes === null || bytes.length !== 32) {
        throw new LaravelDevError(
            "invalid_option",
            "The encryptionKey option must be base64 of exactly 32 bytes (optionally prefixed with base64:).",
        );
    }
    return new Uint8Array(bytes);
}
