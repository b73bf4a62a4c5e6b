import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { MercureHub } from "./hub/hub";
import { allowedOrigin, refuseRequest } from "./laravel/request-guard";
import { hubLifecycle, listenRestartable, originOf } from "./listener";
import type { MercureHubOptions } from "./hub/options";
import { RemoteHub, type ServedHub } from "./remote-hub";
import { BroadcastingApp } from "./laravel/app";
import type { BroadcastInput } from "./laravel/broadcaster";
import { DEFAULT_ISSUER, type BroadcastingAppOptions, type ChannelCallback } from "./laravel/options";

/** What the dev stack's Laravel stand-in renders into a page given as a function in `pages`. */
export interface RenderedPage {
    /**
     * `<link rel="mercure" href="…" last-event-id="…">` for the page's `<head>`: the hub URL and the hub's last event id
     * at this request (left out when the hub's subscriptions API does not give one). A connector whose `host` is that
     * hub, or that finds it by discovery, starts from that id: every event published after the render arrives, once.
     */
    readonly hubLink: string;
}

/**
 * Options of {@link startDevServer}: where to listen, and the hub's and the Laravel app's settings.
 */
export interface DevServerOptions {
    /** Port to listen on; 0 (default) picks an ephemeral one. */
    port?: number;
    /** Interface; default 127.0.0.1. */
    host?: string;
    /**
     * Host names (no port) requests may name in `Host` besides loopback ones (`localhost`, `*.localhost`, 127.0.0.0/8,
     * `[::1]`) and `host`: for example `["app.test"]` when a browser reaches the stack under that name. Any other
     * `Host` is refused (DNS rebinding), as is a state change from a page of another origin (see `request-guard.ts`).
     */
    allowedHosts?: readonly string[];
    /**
     * Origins of pages served elsewhere that may change the stack's state (log in and out, call `/broadcasting/auth`,
     * broadcast), besides its own pages: for example `["http://localhost:5173"]`, a Vite dev server whose proxy
     * forwards to this server with `changeOrigin: true`. Every other origin is refused, other local servers' included.
     */
    allowedOrigins?: readonly string[];
    /** Key for every JWT (subscriber cookies, publisher tokens). Default: random per start. */
    jwtKey?: string;
    /**
     * Hub settings (for example `{ history: false }`); the key and cookie name follow the app's. By default the
     * hub trusts the app's issuer and lists this server's origin in its publish origins.
     */
    hub?: Partial<Omit<MercureHubOptions, "jwtKey">>;
    /** Laravel app settings (for example `{ expiresIn: 6, allOrNothing: true }`). */
    app?: Partial<Omit<BroadcastingAppOptions, "jwtKey" | "hubUrl">>;
    /** Channel authorization callbacks by pattern, as in `routes/channels.php`. */
    channels?: Record<string, ChannelCallback>;
    /**
     * Extra HTML pages by path (for example `{ "/": "<!doctype html>…" }`). A function renders its page at each request,
     * as a Laravel view does, with what the app renders into it: the `<link rel="mercure">` carrying the hub's last
     * event id (see {@link RenderedPage}).
     */
    pages?: Record<string, string | ((page: RenderedPage) => string)>;
    /**
     * Folder served at `/dist/`: your page's scripts (a relative path is resolved against the working directory; a
     * folder that does not exist is refused). Default: the package's own `dist/`.
     */
    distDir?: string;
    /**
     * Files of `distDir` (their paths below it, e.g. `/^assets\//` for Vite's `assets/app-[hash].js`) served as a
     * production server serves content-hashed assets: `Cache-Control: public, max-age=31536000, immutable`, so that a
     * second tab of the browser takes them from its cache, and two tabs asking for one at once get one download. Match
     * only files whose names change with their content. Default: none; every file is `no-store`, so a rebuild shows at
     * the next load.
     */
    cacheAssets?: RegExp;
    /** Where the server says what it serves (one line at start, for a `distDir` given). Default: `console.log`. */
    log?: (line: string) => void;
    /**
     * A Mercure hub that runs elsewhere, used instead of the embedded one: the app publishes to its URL (Laravel's
     * `url`) and browsers reach it through this server's origin (`public_url`, a same-origin reverse proxy), so its
     * tokens carry `aud` = `<this origin><hub path>`. A function is called once the origin is known (to start a
     * hub configured for it) and the hub it returns is closed with the server. `hub` options then do not apply.
     */
    externalHub?: ExternalHub | ((stack: ExternalHubContext) => Promise<ExternalHub>);
}

/** A Mercure hub the dev server does not run itself. */
export interface ExternalHub {
    /** The hub's URL as the app publishes to it, e.g. `http://127.0.0.1:3000/.well-known/mercure`. */
    url: string;
    /** Called when the dev server closes. */
    close?(): Promise<void>;
}

/** What a hub started for a dev server must be configured with. */
export interface ExternalHubContext {
    /** The dev server's origin: the CORS and publish origin. */
    origin: string;
    /** The public hub URL: the audience of every token (`resource_identifier`). */
    publicUrl: string;
    /** The JWT key of publishers and subscribers. */
    jwtKey: string;
    /** The token issuer the hub must trust. */
    issuer: string;
    /** The authorization cookie's name. */
    cookieName: string;
}

/**
 * A running dev stack: hub, broadcasting app and pages on one origin, as a same-origin reverse-proxied
 * hub would be in production.
 */
export interface DevServer {
    /** The origin, e.g. `http://127.0.0.1:8000`. */
    url: string;
    /** The hub URL, `<url>/.well-known/mercure`. */
    hubUrl: string;
    /** The auth endpoint, `<url>/broadcasting/auth`. */
    authEndpoint: string;
    /** Port listened on. */
    port: number;
    /** The Mercure hub: the embedded one (stats, dropConnections, in-process publish), or the proxy to an external one. */
    hub: ServedHub;
    /** The Laravel-compatible app (stats, channel registration). */
    app: BroadcastingApp;
    /** Broadcast like Laravel's `broadcast(new Event)`; resolves with the hub's event ids. */
    broadcast(input: BroadcastInput): Promise<string[]>;
    /** Stop listening and drop every connection (a hub restart), keeping history and state. */
    stop(): Promise<void>;
    /** Listen again on the same port after {@link DevServer.stop}. */
    restart(): Promise<void>;
    /** Stop for good. */
    close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".map": "application/json; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
};

/**
 * Start the dev stack on 127.0.0.1: the Mercure hub at `/.well-known/mercure`, Laravel's
 * `/broadcasting/auth` and dev routes, the package build at `/dist/`, and `pages`.
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
    const host = options.host ?? "127.0.0.1";
    const jwtKey = options.jwtKey ?? randomBytes(32).toString("hex");
    const cookieName = options.app?.cookieName ?? options.hub?.cookieName ?? "mercure_access_token";
    const distDir = options.distDir === undefined ? findDistDir() : servedFolder(options.distDir);
    const pages = options.pages ?? {};
    const allowedOrigins = (options.allowedOrigins ?? []).map(allowedOrigin); // Throws before anything listens.

    // The origin is known once the port is; requests are only served after the stack below is built.
    let serve: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null = null;
    const listener = await listenRestartable(
        (req, res) => {
            if (serve === null) {
                res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8", "Retry-After": "1" });
                res.end("Starting.\n");
                return;
            }
            serve(req, res).catch(() => {
                if (!res.headersSent) res.writeHead(500);
                res.end();
            });
        },
        host,
        options.port ?? 0,
    );
    const origin = originOf(host, listener.port);
    const issuer = options.app?.issuer ?? DEFAULT_ISSUER;
    let hub: ServedHub;
    let app: BroadcastingApp;
    let external: ExternalHub | null = null;
    try {
        let publishUrl: string;
        if (options.externalHub === undefined) {
            hub = new MercureHub({
                ...options.hub,
                jwtKey,
                cookieName,
                // A real deployment lists the app's origin in publish_origins, or whispers get 400 (the hub's own
                // origin is not exempt); here the app and the hub share this origin.
                publishOrigins: options.hub?.publishOrigins ?? [origin],
                // The hub trusts the issuer the app signs with, as a real deployment's issuer block must.
                issuers: options.hub?.issuers ?? [issuer],
            });
            publishUrl = origin + hub.path;
        } else {
            const publicUrl = origin + "/.well-known/mercure";
            external = typeof options.externalHub === "function"
                ? await options.externalHub({ origin, publicUrl, jwtKey, issuer, cookieName })
                : options.externalHub;
            hub = new RemoteHub({ url: external.url, cookieName, patternBase: publicUrl });
            publishUrl = external.url;
        }
        const hubUrl = origin + hub.path;
        app = new BroadcastingApp({
            // Laravel's app.url is the app's own origin: it makes a relative public URL absolute for the publisher
            // token's aud (the hub's own URL would be wrong when the app publishes to a hub elsewhere).
            appUrl: origin,
            ...options.app,
            jwtKey,
            cookieName,
            hubUrl: publishUrl,
            publicUrl: options.app?.publicUrl ?? hubUrl,
        });
    } catch (error) {
        await Promise.allSettled([listener.stop(), external?.close?.()]);
        throw error;
    }
    for (const [pattern, callback] of Object.entries(options.channels ?? {})) app.channel(pattern, callback);
    if (options.distDir !== undefined) (options.log ?? console.log)(`laravel-echo-mercure dev server: serves ${distDir} at ${origin}/dist/`);

    const guard = { allowedHosts: [host, ...(options.allowedHosts ?? [])], allowedOrigins, hubPath: hub.path };
    serve = async (req, res) => {
        const refusal = refuseRequest(req, guard);
        if (refusal !== null) {
            res.writeHead(refusal.status, { "Content-Type": "text/plain; charset=utf-8" });
            res.end(refusal.reason + "\n");
            return;
        }
        if (hub.handle(req, res)) return;
        if (await app.handle(req, res)) return;
        const path = new URL(req.url ?? "/", "http://localhost").pathname;
        const served = pages[path];
        if (served !== undefined && (req.method === "GET" || req.method === "HEAD")) {
            const page = typeof served === "string" ? served : served({ hubLink: await app.hubLink() });
            res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Set-Cookie": app.pageCookies(req) });
            res.end(req.method === "HEAD" ? undefined : page);
            return;
        }
        if (path.startsWith("/dist/") && distDir !== null && serveFile(distDir, path.slice("/dist/".length), res, options.cacheAssets)) return;
        if (path === "/favicon.ico" && (req.method === "GET" || req.method === "HEAD")) {
            // Browsers ask for it on every page: no icon, and no 404 in the console either.
            res.writeHead(204, { "Cache-Control": "max-age=86400" });
            res.end();
            return;
        }
        res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
        res.end("Not found\n");
    };
    return {
        url: origin,
        hubUrl: origin + hub.path,
        authEndpoint: origin + "/broadcasting/auth",
        port: listener.port,
        hub,
        app,
        broadcast: (input) => app.broadcast(input),
        ...hubLifecycle(hub, listener, () => external?.close?.()),
    };
}

/**
 * The `distDir` option as an absolute path (relative to the working directory, as a path on the command line is), or an
 * error naming the folder when there is none: a wrong path would otherwise serve nothing, silently.
 */
function servedFolder(distDir: string): string {
    const folder = resolve(distDir);
    let isFolder = false;
    try {
        isFolder = statSync(folder).isDirectory();
    } catch {
        // Missing: refused below.
    }
    if (!isFolder) {
        throw new Error(`startDevServer: distDir "${distDir}" is not a folder (resolved against the working directory ${process.cwd()} to ${folder}); build your page's scripts first, or pass an absolute path.`);
    }
    return folder;
}

/** Serve one file below `root` (cached for good when `cached` matches its path: see `cacheAssets`); false when it does not exist or escapes `root`. */
function serveFile(root: string, relative: string, res: ServerResponse, cached?: RegExp): boolean {
    let body: Buffer;
    let file: string;
    try {
        file = normalize(join(root, decodeURIComponent(relative)));
        if (!file.startsWith(resolve(root) + sep) || !existsSync(file)) return false;
        body = readFileSync(file);
    } catch {
        return false; // A malformed escape or an unreadable file: not found.
    }
    const immutable = cached?.test(relative) === true; // `relative` is the URL's path: no query, no fragment.
    res.writeHead(200, { "Content-Type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream", "Cache-Control": immutable ? "public, max-age=31536000, immutable" : "no-store" });
    res.end(body);
    return true;
}

/** The package's `dist/`: beside the built dev entry, or under the working directory. */
function findDistDir(): string | null {
    const here = dirname(fileURLToPath(import.meta.url));
    for (const candidate of [resolve(here, ".."), resolve(here, "../../dist"), resolve(process.cwd(), "dist")]) {
        if (existsSync(join(candidate, "laravel-echo-mercure.iife.js"))) return candidate;
    }
    return null;
}
