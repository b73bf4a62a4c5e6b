import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP server that can stop and listen again on the same port, the way the dev stack simulates a
 * hub restart in tests.
 */
export interface RestartableListener {
    /** The port listened on (fixed after the first start, even when 0 was asked for). */
    readonly port: number;
    /** Listen (again); does nothing while listening. */
    start(): Promise<void>;
    /** Stop listening and cut every open connection; does nothing while stopped. */
    stop(): Promise<void>;
}

/**
 * Listen on `host:port` (port 0 picks a free one) with `handler`, and return the handle that restarts it.
 */
export async function listenRestartable(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    host: string,
    port: number,
): Promise<RestartableListener> {
    let server: Server | null = null;
    let boundPort = port;
    const listener: RestartableListener = {
        get port() {
            return boundPort;
        },
        start: async () => {
            if (server !== null) return;
            const next = createServer(handler);
            await new Promise<void>((resolve, reject) => {
                next.once("error", reject);
                next.listen(boundPort, host, () => {
                    next.off("error", reject);
                    resolve();
                });
            });
            next.on("error", () => undefined);
            boundPort = (next.address() as AddressInfo).port;
            server = next;
        },
        stop: async () => {
            const current = server;
            if (current === null) return;
            server = null;
            const closed = new Promise<void>((resolve) => current.close(() => resolve()));
            current.closeAllConnections();
            await closed;
        },
    };
    await listener.start();
    return listener;
}

/** The origin of a server listening on `host:port`. */
export function originOf(host: string, port: number): string {
    return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/**
 * The stop / restart / close trio of a server that carries a hub: stopping drops the hub's streams and
 * the listener's connections (a hub restart), closing also ends the hub for good (and `closeExternal`, a hub
 * that runs outside). History survives a stop.
 */
export function hubLifecycle(
    hub: { dropConnections(): void; close(): void },
    listener: RestartableListener,
    closeExternal: () => Promise<void> | undefined = () => undefined,
): { stop(): Promise<void>; restart(): Promise<void>; close(): Promise<void> } {
    const stop = async (): Promise<void> => {
        hub.dropConnections();
        await listener.stop();
    };
    return {
        stop,
        restart: () => listener.start(),
        close: async () => {
            await stop();
            hub.close();
            await closeExternal();
        },
    };
}
