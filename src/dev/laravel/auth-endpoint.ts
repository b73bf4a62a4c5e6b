import type { IncomingMessage, ServerResponse } from "node:http";
import { channelKind, type ChannelRegistry } from "./channels";
import { buildAuthCookie } from "./cookie";
import type { ChannelEncrypter, ChannelJwk } from "./encrypter";
import { LaravelDevError } from "./errors";
import { readInput, requestHost, requestOrigin, sendError, sendRawJson } from "./http";
import { phpJsonEncode } from "./json";
import { absolutePublicUrl, urlValue, type DevUser, type ResolvedOptions } from "./options";
import { presencePayload, signSubscriberToken, type Grants } from "./subscriber-token";
import { parsePhpUrl } from "./url";

/** The hub path Laravel falls back to when the public URL has none. */
const DEFAULT_HUB_PATH = "/.well-known/mercure";

/** The most channel names one auth request may carry (counted before de-duplication). */
export const MAX_CHANNEL_NAMES = 100;

/** What the auth endpoint needs from the app. */
export interface AuthContext {
    /** The resolved options. */
    options: ResolvedOptions;
    /** The channel callbacks. */
    registry: ChannelRegistry;
    /** The channel encrypter, `null` without `encryptionKey`. */
    encrypter: ChannelEncrypter | null;
    /** Identify the request's user. */
    resolveUser: (req: IncomingMessage) => DevUser | null;
}

/** One entry of the response's `channel_names`. */
export interface AuthEntry {
    /** The full channel name. */
    name: string;
    /** Present (always `true`) when the channel was denied. */
    denied?: true;
    /** Present for granted encrypted channels. */
    jwk?: ChannelJwk;
}

/** What one auth request came to, for the app's stats. */
export interface AuthOutcome {
    /** The raw `channel_names` input, before validation. */
    channelNames: unknown;
    /** The HTTP status answered. */
    status: number;
}

/** A successful batch authorisation: the response body, the cookie, and the subscriber token it carries. */
interface AuthSuccess {
    body: string;
    cookie: string;
    token: string;
}

/**
 * Handle `GET|POST /broadcasting/auth` as Laravel's mercure broadcaster does: validate, authorise every
 * guarded channel, answer the §2.5 body and set the §2.6 cookie; errors answer 403 or 500.
 */
export async function handleAuthRequest(
    context: AuthContext,
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
): Promise<AuthOutcome> {
    // [spec] laravel-mercure §2.2: only `channel_names` is read, from JSON, form or query input.
    const input = await readInput(req, url);
    const channelNames = input["channel_names"];
    try {
        const success = await authorizeBatch(context, req, channelNames);
        sendRawJson(res, 200, success.body, { "Set-Cookie": success.cookie });
        return { channelNames, status: 200 };
    } catch (error) {
        if (!(error instanceof LaravelDevError)) throw error;
        sendError(res, error.status, error.message);
        return { channelNames, status: error.status };
    }
}

/**
 * Cast the `channel_names` input to a list as PHP's `(array)` does, validate it and de-duplicate it, keeping
 * the first occurrence; throws `access_denied`.
 */
export function validateChannelNames(input: unknown): string[] {
    const channelNames = phpArrayCast(input);
    // [spec] laravel-mercure §2.3: missing/empty, >100 (before de-duplication) or non-string ⇒ 403.
    if (channelNames.length === 0) {
        throw new LaravelDevError("access_denied", "The channel_names input must be a non-empty list.");
    }
    if (channelNames.length > MAX_CHANNEL_NAMES) {
        throw new LaravelDevError(
            "access_denied",
            `The channel_names input may list at most ${MAX_CHANNEL_NAMES} channels.`,
        );
    }
    if (!channelNames.every((name): name is string => typeof name === "string")) {
        throw new LaravelDevError("access_denied", "Every channel_names entry must be a string.");
    }
    return [...new Set(channelNames)];
}

/**
 * PHP's `(array)` cast of a request input: missing or `null` gives `[]`, a list stays itself, an object
 * (a decoded JSON object, PHP's associative array) gives its values, and a scalar `x` gives `[x]`.
 */
function phpArrayCast(value: unknown): unknown[] {
    // [spec] laravel-mercure §2.2: Laravel reads `(array) $request->input('channel_names', [])`.
    if (value === undefined || value === null) return [];
    if (Array.isArray(value)) return value;
    if (typeof value === "object") return Object.values(value);
    return [value];
}

async function authorizeBatch(context: AuthContext, req: IncomingMessage, channelNames: unknown): Promise<AuthSuccess> {
    const { options, registry, encrypter } = context;
    const configuredUrl = urlValue(options.publicUrl);
    // [spec] laravel-mercure §1.1: a relative public URL is made absolute from the request (PR #61629) for aud.
    const publicUrl = absolutePublicUrl(configuredUrl, requestOrigin(req));
    const configured = parsePhpUrl(configuredUrl);
    // [spec] laravel-mercure §1.1: a `__` cookie name with an `http:` public URL is refused (normally a boot
    // error); Laravel tests the scheme as configured, so a relative public URL passes.
    if (options.cookieName.startsWith("__") && configured.scheme?.toLowerCase() === "http") {
        throw new LaravelDevError(
            "broadcast_exception",
            `Mercure error: the cookie name "${options.cookieName}" needs an https public_url; use a name without the __ prefix for plain-HTTP development.`,
        );
    }
    const names = validateChannelNames(channelNames);

    let user: DevUser | null | undefined;
    const currentUser = (): DevUser | null => (user === undefined ? (user = context.resolveUser(req)) : user);

    const entries: AuthEntry[] = [];
    const grants: Grants = { privateChannels: [], presenceChannels: [], guardedChannels: [] };
    for (const name of names) {
        const kind = channelKind(name);
        // [spec] laravel-mercure §2.3: public names are never checked and never denied.
        if (kind === "public") {
            entries.push({ name });
            continue;
        }
        const member = currentUser();
        const decision = member === null ? { granted: false as const } : await registry.authorize(name, member);
        if (!decision.granted || member === null) {
            // [spec] laravel-mercure §2.4: per-channel denial (newest) or the whole request 403 (older).
            if (options.allOrNothing) {
                throw new LaravelDevError("access_denied", `Access to the channel "${name}" was denied.`);
            }
            entries.push({ name, denied: true });
            continue;
        }
        grants.guardedChannels.push(name);
        if (kind === "presence") {
            grants.presenceChannels.push({
                name,
                payload: presencePayload(member.id, decision.result, options.legacyPresencePayload),
            });
            entries.push({ name });
        } else if (kind === "encrypted") {
            // [spec] laravel-mercure §2.4: the key check comes after the denial check.
            if (encrypter === null) {
                throw new LaravelDevError(
                    "broadcast_exception",
                    `Mercure error: the channel "${name}" is encrypted but no encryption_key is configured; set the encryptionKey option.`,
                );
            }
            grants.privateChannels.push(name);
            entries.push({ name, jwk: encrypter.jwk(name) });
        } else {
            grants.privateChannels.push(name);
            entries.push({ name });
        }
    }

    const now = options.now();
    const member = currentUser();
    // [spec] laravel-mercure §2.7: sub = the user's broadcasting identifier, else `anonymous`.
    const token = signSubscriberToken(
        {
            grants,
            topicPrefix: options.topicPrefix,
            // [spec] laravel-mercure §3: parse_url(public_url, PHP_URL_PATH) verbatim, `/.well-known/mercure`
            // only when there is no path (so a trailing `/` stays, giving `…/mercure//subscriptions/…`).
            hubPath: configured.path || DEFAULT_HUB_PATH,
            clientEvents: options.clientEvents,
            issuer: options.issuer,
            // [spec] laravel-mercure §1.1: `claims.aud` overrides the public URL.
            audience: options.audience === null ? publicUrl : urlValue(options.audience),
            subject: member === null ? "anonymous" : String(member.id),
            expiresIn: options.expiresIn,
            now,
        },
        options.jwtKey,
    );
    const cookie = buildAuthCookie({
        name: options.cookieName,
        value: token,
        expiresIn: options.expiresIn,
        now,
        publicUrl: configuredUrl,
        requestHost: requestHost(req),
    });
    return { body: authResponseBody(entries, options), cookie, token };
}

/**
 * `GET /dev/hub-token?channels=<name>,<name>`: the subscriber JWT the auth request would put in the cookie for
 * the logged-in user's authorized channels among `channels` (denied ones are left out), as JSON
 * `{token, expires_in}`, for the connector's `hubToken` against a hub that refuses cookies. A dev route: a
 * real app would expose its own.
 */
export async function handleHubToken(context: AuthContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const names = (url.searchParams.get("channels") ?? "").split(",").filter((name) => name !== "");
    try {
        const { token } = await authorizeBatch(context, req, names);
        sendRawJson(res, 200, phpJsonEncode({ token, expires_in: context.options.expiresIn }), { "Cache-Control": "no-store" });
    } catch (error) {
        if (!(error instanceof LaravelDevError)) throw error;
        sendError(res, error.status, error.message);
    }
}

/** Encode the §2.5 response body, keys in order, the way Laravel encodes JSON. */
export function authResponseBody(
    entries: AuthEntry[],
    options: Pick<ResolvedOptions, "expiresIn" | "topicPrefix" | "clientEvents">,
): string {
    // [spec] laravel-mercure §2.5: channel_names, expires_in, topic_prefix (omitted by legacy servers), client_events.
    const body: Record<string, unknown> = { channel_names: entries, expires_in: options.expiresIn };
    if (options.topicPrefix !== null) body["topic_prefix"] = options.topicPrefix;
    body["client_events"] = options.clientEvents;
    return phpJsonEncode(body);
}
