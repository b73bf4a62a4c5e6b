import type { IncomingMessage, ServerResponse } from "node:http";
import { authenticate, extractToken, sendChallenge } from "./authorization";
import { canPublishAll } from "./grants";
import { parseForm } from "./form";
import { send, sendError } from "./http";
import type { RequestContext } from "./http";
import type { HubRuntime } from "./runtime";
import { validateUpdate } from "./update";
import type { UpdateFields } from "./update";

/** Largest publish body accepted, in bytes (the Go hub's limit). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * Handle a publish request (POST on the hub path): check the CSRF origin for cookie authentication,
 * authenticate, read and validate the form, check publish grants, dispatch, answer with the id.
 */
export async function handlePublish(
    req: IncomingMessage,
    res: ServerResponse,
    context: RequestContext,
    runtime: HubRuntime,
): Promise<void> {
    const { options } = runtime;
    // [spec] §3, §9: CSRF mitigation for cookie-authenticated POSTs, checked before the token (an expired
    // cookie from a refused origin is 400, not 401): Origin (fallback Referer) must be listed, the hub's own
    // origin included.
    const presented = extractToken(req, options.cookieAuth ? options.cookieName : null);
    if (presented.kind === "token" && presented.source === "cookie" && !isAllowedOrigin(req, options.publishOrigins)) {
        options.onRefusal?.(
            `POST ${context.rawPath} refused (publisher): a cookie-authenticated publish from origin ${JSON.stringify(req.headers.origin ?? req.headers.referer ?? null)}, which is not in the publish origins (--publish-origin).`,
        );
        return sendChallenge(res, context, 400, "invalid_request");
    }
    // [spec] §3: publishing always needs a token.
    const auth = authenticate(req, context, options, "publisher");
    if (!auth.ok) return sendChallenge(res, context, auth.status, auth.error);

    const body = await readBody(req, MAX_BODY_BYTES);
    if (body === "aborted") return;
    if (body === "too_large") {
        // [spec] §7: body over the limit is 413.
        return sendError(res, 413, `The body exceeds ${MAX_BODY_BYTES} bytes.`, { Connection: "close" });
    }
    const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (contentType !== "application/x-www-form-urlencoded") {
        return sendError(res, 400, "The body must be application/x-www-form-urlencoded.");
    }
    const fields = parseForm(body);
    if (fields === null) return sendError(res, 400, "The body is not valid UTF-8.");
    const update = validateUpdate(toUpdateFields(fields), options.path);
    if (!update.ok) return sendError(res, 400, update.message);

    // [spec] §3: every topic needs a publish grant, else 403 and nothing is dispatched.
    if (!canPublishAll(auth.token?.grants ?? [], update.update.topics)) {
        options.onRefusal?.(`POST ${context.rawPath} refused (publisher): the token has no publish grant for every topic of ${JSON.stringify(update.update.topics)}.`);
        return sendChallenge(res, context, 403, "insufficient_scope");
    }
    runtime.dispatch(update.update);
    runtime.stats.publishes++;
    // [spec] §3: 200, text/plain; charset=utf-8, body = the id.
    send(res, 200, update.update.id);
}

/** Map form fields to update fields: `topic` repeats, the others take their first occurrence, unknown ones are ignored. */
export function toUpdateFields(fields: readonly (readonly [string, string])[]): UpdateFields {
    const topics: string[] = [];
    const first = new Map<string, string>();
    for (const [name, value] of fields) {
        if (name === "topic") topics.push(value);
        else if (!first.has(name)) first.set(name, value);
    }
    // Empty optional fields mean "not given", as in the Go hub.
    const optional = (name: string): string | undefined => {
        const value = first.get(name);
        return value === undefined || value === "" ? undefined : value;
    };
    return {
        topics,
        data: first.get("data"),
        // [spec] §3: `private` by presence alone.
        private: first.has("private"),
        id: optional("id"),
        type: optional("type"),
        retry: optional("retry"),
    };
}

/**
 * True when the request's Origin (or, without one, its Referer's origin) is in `allowed`, or `allowed` holds
 * `*`; false when both headers are missing. There is no exemption for the hub's own origin.
 */
export function isAllowedOrigin(req: IncomingMessage, allowed: readonly string[]): boolean {
    let origin = req.headers.origin;
    if (origin === undefined && req.headers.referer !== undefined) {
        try {
            origin = new URL(req.headers.referer).origin;
        } catch {
            return false;
        }
    }
    return origin !== undefined && (allowed.includes("*") || allowed.includes(origin));
}

/** Read a request body up to `limit` bytes. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | "too_large" | "aborted"> {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > limit) {
        req.resume();
        return Promise.resolve("too_large");
    }
    return new Promise((resolve) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let settled = false;
        const settle = (value: Buffer | "too_large" | "aborted"): void => {
            if (settled) return;
            settled = true;
            resolve(value);
        };
        req.on("data", (chunk: Buffer) => {
            if (settled) return;
            size += chunk.length;
            if (size > limit) settle("too_large");
            else chunks.push(chunk);
        });
        req.on("end", () => settle(Buffer.concat(chunks)));
        req.on("error", () => settle("aborted"));
        req.on("close", () => settle(req.complete ? Buffer.concat(chunks) : "aborted"));
    });
}
