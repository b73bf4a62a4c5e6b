import type { IncomingMessage, ServerResponse } from "node:http";
import { hubLifecycle, listenRestartable, originOf } from "../listener";
import { MercureHub } from "./hub";
import type { MercureHubOptions } from "./options";

/** Options of {@link startDevHub}: the hub's, plus where to listen. */
export interface DevHubOptions extends MercureHubOptions {
    /** Port to listen on; 0 (default) picks an ephemeral one. */
    port?: number;
    /** Interface to listen on; default 127.0.0.1 (the dev hub is never meant to be reachable from elsewhere). */
    host?: string;
}

/** A running development hub. */
export interface DevHub {
    /** Absolute hub URL, e.g. http://127.0.0.1:PORT/.well-known/mercure */
    url: string;
    /** Origin of the hub URL. */
    origin: string;
    /** Port listened on. */
    port: number;
    /** The hub itself (publish in-process, test hooks, stats). */
    hub: MercureHub;
    /** Stop listening and drop all connections, keeping the MercureHub (and its history). */
    stop(): Promise<void>;
    /** Listen again on the same port (after stop()). */
    restart(): Promise<void>;
    /** Stop for good. */
    close(): Promise<void>;
}

/**
 * Start a hub on 127.0.0.1 (port 0 = ephemeral by default). `GET /` answers a short HTML page naming this
 * development hub and its endpoint; other non-hub paths 404.
 */
export async function startDevHub(options: DevHubOptions): Promise<DevHub> {
    const { port: requestedPort = 0, host = "127.0.0.1", ...hubOptions } = options;
    const hub = new MercureHub(hubOptions);
    let url = "";
    const listener = await listenRestartable(
        (req, res) => {
            if (!hub.handle(req, res)) serveOther(req, res, url);
        },
        host,
        requestedPort,
    );
    const origin = originOf(host, listener.port);
    url = origin + hub.path;
    return {
        url,
        origin,
        port: listener.port,
        hub,
        ...hubLifecycle(hub, listener),
    };
}

/** Answer requests outside the hub: an explanatory page on `/`, 404 elsewhere. */
function serveOther(req: IncomingMessage, res: ServerResponse, hubUrl: string): void {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/" && (req.method === "GET" || req.method === "HEAD")) {
        const escaped = hubUrl.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
        res.end(
            "<!doctype html><title>laravel-echo-mercure development hub</title>" +
                "<h1>laravel-echo-mercure development hub</h1>" +
                "<p>This is a Mercure 1.0 hub for development and tests, not a production hub.</p>" +
                `<p>Hub endpoint: <code>${escaped}</code></p>\n`,
        );
        return;
    }
    res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
    res.end("Not found.\n");
}
