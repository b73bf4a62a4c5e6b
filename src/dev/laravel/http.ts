import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { LaravelDevError } from "./errors";
import { phpJsonEncode } from "./json";

/** The largest request body the dev app reads. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Read a request body, refusing more than {@link MAX_BODY_BYTES}. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
            throw new LaravelDevError("invalid_input", "The request body is larger than the dev app accepts (1 MiB).");
        }
        chunks.push(chunk);
    }
    return Buffer.concat(chunks);
}

/**
 * Read a request's input the way Laravel's `$request->input()` does: the JSON body for JSON requests, the
 * form body otherwise, with query-string values underneath. Unparseable bodies count as empty.
 */
export async function readInput(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
    const input = parseForm(url.searchParams);
    if (req.method === "GET" || req.method === "HEAD") return input;
    const body = await readBody(req);
    const type = (req.headers["content-type"] ?? "").toLowerCase();
    if (type.includes("json")) {
        try {
            const value: unknown = JSON.parse(body.toString("utf8"));
            if (typeof value === "object" && value !== null && !Array.isArray(value)) {
                return { ...input, ...(value as Record<string, unknown>) };
            }
        } catch {
            // Laravel treats an unparseable JSON body as no input.
        }
        return input;
    }
    if (type.includes("application/x-www-form-urlencoded")) {
        return { ...input, ...parseForm(new URLSearchParams(body.toString("utf8"))) };
    }
    return input;
}

/**
 * Parse form fields with PHP's array syntax for one level: `a[]=x&a[]=y` and `a[0]=x&a[1]=y` give lists,
 * `a=x` a string.
 */
export function parseForm(params: URLSearchParams): Record<string, unknown> {
    const result: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, value] of params) {
        const bracket = /^([^[\]]+)\[[^\]]*\]$/.exec(key);
        if (bracket === null) {
            result[key] = value;
            continue;
        }
        const name = bracket[1] as string;
        const existing = result[name];
        if (Array.isArray(existing)) existing.push(value);
        else result[name] = [value];
    }
    return { ...result };
}

/** The request's origin (`http://host:port`), as Laravel's `url()` sees it; TLS sockets give `https`. */
export function requestOrigin(req: IncomingMessage): string {
    const scheme = (req.socket as TLSSocket).encrypted === true ? "https" : "http";
    return `${scheme}://${req.headers.host ?? "localhost"}`;
}

/** The request's host name without port, lowercased (Symfony's `Request::getHost()`). */
export function requestHost(req: IncomingMessage): string {
    try {
        return new URL(`http://${req.headers.host ?? "localhost"}`).hostname;
    } catch {
        return "localhost";
    }
}

/** Answer with a Laravel-encoded JSON body. */
export function sendJson(
    res: ServerResponse,
    status: number,
    value: unknown,
    headers: Record<string, string | string[]> = {},
): void {
    sendRawJson(res, status, phpJsonEncode(value), headers);
}

/** Answer with an already-encoded JSON body. */
export function sendRawJson(
    res: ServerResponse,
    status: number,
    body: string,
    headers: Record<string, string | string[]> = {},
): void {
    res.writeHead(status, {
        "Content-Type": "application/json",
        "Cache-Control": "no-cache, private",
        "Content-Length": String(Buffer.byteLength(body)),
        ...headers,
    });
    res.end(body);
}

/** Answer with an error as Laravel's JSON exception renderer does: `{"message": "..."}`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
    sendJson(res, status, { message });
}
