import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { BroadcastingApp } from "../../../src/dev/laravel";
import { base64UrlDecode } from "../../../src/dev/jwt/jwt";

/** A started HTTP server on 127.0.0.1 and how to stop it. */
export interface Started {
    /** `http://127.0.0.1:<port>`. */
    url: string;
    /** The port. */
    port: number;
    /** Stop the server, dropping open connections. */
    close: () => Promise<void>;
}

async function listen(server: Server): Promise<Started> {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
        url: `http://127.0.0.1:${port}`,
        port,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }),
    };
}

/** Serve `app` on an ephemeral port; unhandled paths answer 404 "fallthrough". */
export function serveApp(app: BroadcastingApp): Promise<Started> {
    return listen(
        createServer((req, res) => {
            void app.handle(req, res).then((handled) => {
                if (!handled) {
                    res.writeHead(404, { "Content-Type": "text/plain" });
                    res.end("fallthrough");
                }
            });
        }),
    );
}

/** A response read fully. */
export interface TestResponse {
    /** HTTP status. */
    status: number;
    /** Response headers. */
    headers: IncomingHttpHeaders;
    /** Body as text. */
    body: string;
    /** Every `Set-Cookie` header. */
    setCookies: string[];
}

/** Send one HTTP request without keep-alive (so any `Host` header can be set). */
export function send(
    url: string,
    options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<TestResponse> {
    return new Promise((resolve, reject) => {
        const req = httpRequest(url, { method: options.method ?? "GET", headers: options.headers, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
                resolve({
                    status: res.statusCode ?? 0,
                    headers: res.headers,
                    body: Buffer.concat(chunks).toString("utf8"),
                    setCookies: res.headers["set-cookie"] ?? [],
                }),
            );
            res.on("error", reject);
        });
        req.on("error", reject);
        req.end(options.body);
    });
}

/** POST a JSON auth request for `channelNames`, with optional extra headers. */
export function postAuth(baseUrl: string, channelNames: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
    return send(`${baseUrl}/broadcasting/auth`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", ...headers },
        body: JSON.stringify({ channel_names: channelNames }),
    });
}

/** Decode a compact JWS without verifying it. */
export function decodeJwt(token: string): { header: Record<string, unknown>; claims: Record<string, unknown>; rawClaims: string } {
    const [head, body] = token.split(".") as [string, string];
    const rawClaims = (base64UrlDecode(body) as Buffer).toString("utf8");
    return {
        header: JSON.parse((base64UrlDecode(head) as Buffer).toString("utf8")) as Record<string, unknown>,
        claims: JSON.parse(rawClaims) as Record<string, unknown>,
        rawClaims,
    };
}

/** The JWT inside a `Set-Cookie` value. */
export function cookieJwt(setCookie: string): string {
    const first = setCookie.split(";")[0] as string;
    return first.slice(first.indexOf("=") + 1);
}

/** One publish the fake hub received. */
export interface HubRequest {
    /** Request headers. */
    headers: IncomingHttpHeaders;
    /** Raw form body. */
    body: string;
    /** Parsed form body. */
    form: URLSearchParams;
}

/** A fake Mercure hub recording publishes; answers 200 `urn:uuid:fake-<n>` or, in `fail` mode, 500. */
export interface FakeHub extends Started {
    /** Publishes received, in order. */
    requests: HubRequest[];
    /** `"ok"` answers 200 text/plain with an id, `"fail"` answers 500. */
    mode: "ok" | "fail";
}

/** Start a fake hub on an ephemeral port. */
export async function startFakeHub(): Promise<FakeHub> {
    const hub = { requests: [] as HubRequest[], mode: "ok" as "ok" | "fail" };
    const server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            const body = Buffer.concat(chunks).toString("utf8");
            hub.requests.push({ headers: req.headers, body, form: new URLSearchParams(body) });
            if (hub.mode === "fail") {
                res.writeHead(500, { "Content-Type": "text/plain" });
                res.end("hub exploded");
                return;
            }
            res.writeHead(200, { "Content-Type": "text/plain" });
            res.end(`urn:uuid:fake-${hub.requests.length}`);
        });
    });
    const started = await listen(server);
    return Object.assign(hub, started);
}

/** A JWT key long enough for HS256. */
export const JWT_KEY = "!ChangeThisMercureHubJWTSecretKey!";
