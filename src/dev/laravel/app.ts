import type { IncomingMessage, ServerResponse } from "node:http";
import { handleAuthRequest, handleHubToken } from "./auth-endpoint";
import { buildPublications, publish, type BroadcastInput } from "./broadcaster";
import { ChannelRegistry } from "./channels";
import { CsrfTokens } from "./csrf";
import { cookieUserResolver, handleBroadcast, handleLogin, handleLogout } from "./dev-routes";
import { ChannelEncrypter } from "./encrypter";
import { LaravelDevError } from "./errors";
import { sendError, sendJson } from "./http";
import {
    absolutePublicUrl,
    resolveOptions,
    urlValue,
    type BroadcastingAppOptions,
    type ChannelCallback,
    type DevUser,
    type ResolvedOptions,
} from "./options";
import { signPublisherToken } from "./publisher-token";
import { hubLastEventId, hubLinkElement } from "./rendered-cursor";

/** One auth request as the app saw it. */
export interface AuthRequestRecord {
    /** The raw `channel_names` input. */
    channelNames: unknown;
    /** The status the app answered. */
    status: number;
}

/** The dev routes and the methods each accepts. */
const ROUTES = new Map<string, readonly string[]>([
    ["/broadcasting/auth", ["GET", "POST"]],
    ["/dev/login", ["POST"]],
    ["/dev/logout", ["POST"]],
    ["/dev/broadcast", ["POST"]],
    ["/dev/hub-token", ["GET"]],
    ["/dev/csrf", ["GET"]],
    ["/dev/csrf/regenerate", ["POST"]],
    ["/dev/user", ["GET"]],
]);

/**
 * A small HTTP app that behaves like Laravel 13's `mercure` broadcasting driver: the batch auth endpoint,
 * the authorization cookie, and publishing broadcasts to a Mercure hub over HTTP.
 */
export class BroadcastingApp {
    /** Counters for tests: auth requests seen (with their `channel_names` input and status). */
    readonly stats: { authRequests: AuthRequestRecord[] } = { authRequests: [] };

    /** The options with defaults applied. */
    private readonly options: ResolvedOptions;

    /** The channel callbacks. */
    private readonly registry = new ChannelRegistry();

    /** Derives channel keys; `null` without `encryptionKey`. */
    private readonly encrypter: ChannelEncrypter | null;

    /** Identifies the user of a request. */
    private readonly resolveUser: (req: IncomingMessage) => DevUser | null;

    /** The sessions' CSRF tokens; checked on the auth request only with the `csrf` option. */
    private readonly csrf = new CsrfTokens();

    /** The `csrf` option. */
    private readonly checkCsrf: boolean;

    /** Create the app; throws a `invalid_option` {@link LaravelDevError} on unusable options. */
    constructor(options: BroadcastingAppOptions) {
        this.options = resolveOptions(options);
        this.encrypter = this.options.encryptionKey === null ? null : new ChannelEncrypter(this.options.encryptionKey);
        this.resolveUser = options.resolveUser ?? cookieUserResolver(this.options.users);
        this.checkCsrf = options.csrf === true;
    }

    /**
     * The `Set-Cookie` values a page of the app sends with the `csrf` option: the session and its `XSRF-TOKEN`, as every
     * response of Laravel's web middleware carries them (so that a page's first auth request, before any login, has a
     * token to send); none without it.
     */
    pageCookies(req: IncomingMessage): string[] {
        return this.checkCsrf ? this.csrf.current(req).cookies : [];
    }

    /** Register a channel authorization callback, as `Broadcast::channel('orders.{id}', fn)`. */
    channel(pattern: string, callback: ChannelCallback): this {
        this.registry.add(pattern, callback);
        return this;
    }

    /**
     * Handle `/broadcasting/auth` and the dev routes (`/dev/login`, `/dev/logout`, `/dev/broadcast`, `/dev/hub-token`,
     * `/dev/csrf`, `/dev/csrf/regenerate`);
     * resolves `false`, writing nothing, for any other path.
     */
    async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
        const url = new URL(req.url ?? "/", "http://localhost");
        const methods = ROUTES.get(url.pathname);
        if (methods === undefined) return false;
        const method = req.method ?? "GET";
        try {
            if (!methods.includes(method)) {
                res.writeHead(405, { Allow: methods.join(", ") });
                res.end();
                return true;
            }
            switch (url.pathname) {
                case "/broadcasting/auth": {
                    // Laravel's VerifyCsrfToken: a POST without the session's token is refused with 419 before any route.
                    if (this.checkCsrf && method === "POST" && !this.csrf.verify(req)) {
                        sendError(res, 419, "CSRF token mismatch.");
                        this.stats.authRequests.push({ channelNames: undefined, status: 419 });
                        break;
                    }
                    const outcome = await handleAuthRequest(
                        {
                            options: this.options,
                            registry: this.registry,
                            encrypter: this.encrypter,
                            resolveUser: this.resolveUser,
                        },
                        req,
                        res,
                        url,
                    );
                    this.stats.authRequests.push(outcome);
                    break;
                }
                case "/dev/login":
                    // A login regenerates the session and with it the CSRF token (Laravel's `session()->regenerate()`).
                    handleLogin(this.options.users, res, url, this.checkCsrf ? this.csrf.regenerate(req).cookies : []);
                    break;
                case "/dev/csrf":
                case "/dev/csrf/regenerate": {
                    const grant = url.pathname === "/dev/csrf" ? this.csrf.current(req) : this.csrf.regenerate(req);
                    sendJson(res, 200, { token: grant.token }, { "Set-Cookie": grant.cookies });
                    break;
                }
                case "/dev/logout":
                    handleLogout(res);
                    break;
                case "/dev/broadcast":
                    await handleBroadcast((input) => this.broadcast(input), req, res);
                    break;
                case "/dev/user":
                    // Who this browser's session belongs to now: a login in another window of it replaces the user.
                    // With the csrf option, it starts the session as any page of the app does (a page Vite serves has none).
                    sendJson(res, 200, { user: this.resolveUser(req) }, { "Set-Cookie": this.pageCookies(req) });
                    break;
                case "/dev/hub-token":
                    await handleHubToken({ options: this.options, registry: this.registry, encrypter: this.encrypter, resolveUser: this.resolveUser }, req, res, url);
                    break;
            }
        } catch (error) {
            if (url.pathname === "/broadcasting/auth") {
                this.stats.authRequests.push({ channelNames: undefined, status: statusOf(error) });
            }
            if (!res.headersSent) sendError(res, statusOf(error), messageOf(error));
            else res.destroy();
        }
        return true;
    }

    /**
     * Publish one broadcast as Laravel does (public channels together, each guarded channel alone and private,
     * each encrypted channel as a private JWE update); resolves with the hub's event ids in publish order.
     */
    async broadcast(input: BroadcastInput): Promise<string[]> {
        const publications = buildPublications(input, this.options.topicPrefix, this.encrypter);
        if (publications.length === 0) return [];
        const hubUrl = urlValue(this.options.hubUrl);
        // [spec] laravel-mercure §1.1: aud = `claims.aud`, else the public URL made absolute without a request (app.url).
        const base = this.options.appUrl === null ? hubUrl : urlValue(this.options.appUrl);
        const bearer = signPublisherToken(
            {
                issuer: this.options.issuer,
                audience: this.options.audience === null ? absolutePublicUrl(urlValue(this.options.publicUrl), base) : urlValue(this.options.audience),
                now: this.options.now(),
            },
            this.options.jwtKey,
        );
        const ids: string[] = [];
        for (const publication of publications) ids.push(await publish(hubUrl, publication, bearer));
        return ids;
    }

    /**
     * The `<link rel="mercure" href="…" last-event-id="…">` a page of the app renders in its `<head>`: the public hub URL
     * and the hub's last event id now, asked of the hub's subscriptions API (see {@link hubLastEventId}); the connector
     * starts its first stream from it, so the page receives every event published after its render, once.
     */
    async hubLink(): Promise<string> {
        const hubUrl = urlValue(this.options.hubUrl);
        const publicUrl = absolutePublicUrl(urlValue(this.options.publicUrl), this.options.appUrl === null ? hubUrl : urlValue(this.options.appUrl));
        const audience = this.options.audience === null ? publicUrl : urlValue(this.options.audience);
        const lastEventId = await hubLastEventId({ hubUrl, jwtKey: this.options.jwtKey, issuer: this.options.issuer, audience, now: this.options.now() });
        return hubLinkElement(publicUrl, lastEventId);
    }

    /** Forget the recorded auth requests. */
    resetStats(): void {
        this.stats.authRequests.length = 0;
    }
}

function statusOf(error: unknown): number {
    return error instanceof LaravelDevError ? error.status : 500;
}

function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : "Server Error";
}
