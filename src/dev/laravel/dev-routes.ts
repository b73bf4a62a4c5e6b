import type { IncomingMessage, ServerResponse } from "node:http";
import { validateBroadcastInput, type BroadcastInput } from "./broadcaster";
import { clearDevUserCookie, DEV_USER_COOKIE, devUserCookie, parseCookieHeader } from "./cookie";
import { LaravelDevError } from "./errors";
import { readBody, sendError, sendJson } from "./http";
import { isPlainObject } from "./json";
import type { DevUser } from "./options";

/** Find a known user by the string form of its id. */
export function findUser(users: readonly DevUser[], id: string | null | undefined): DevUser | null {
    if (id === null || id === undefined) return null;
    return users.find((user) => String(user.id) === id) ?? null;
}

/** The default `resolveUser`: the `dev_user` cookie looked up in `users` (Laravel's session guard, simplified). */
export function cookieUserResolver(users: readonly DevUser[]): (req: IncomingMessage) => DevUser | null {
    return (req) => findUser(users, parseCookieHeader(req.headers.cookie).get(DEV_USER_COOKIE));
}

/**
 * `POST /dev/login?user=<id>` (never GET: a link or an image on any page could log the developer in): set the `dev_user`
 * cookie (and `cookies`: the regenerated session's CSRF cookies), or 404 for an unknown user.
 */
export function handleLogin(users: readonly DevUser[], res: ServerResponse, url: URL, cookies: string[] = []): void {
    const user = findUser(users, url.searchParams.get("user"));
    if (user === null) {
        sendError(res, 404, "No dev user has that id; pass ?user=<id> of one of the users option's entries.");
        return;
    }
    sendJson(res, 200, { user }, { "Set-Cookie": [devUserCookie(String(user.id)), ...cookies] });
}

/** `POST /dev/logout`: clear the `dev_user` cookie. */
export function handleLogout(res: ServerResponse): void {
    res.writeHead(204, { "Set-Cookie": clearDevUserCookie(), "Cache-Control": "no-cache, private" });
    res.end();
}

/**
 * `POST /dev/broadcast`: publish a JSON `{channels, event, payload?, toOthers?}` (`Content-Type: application/json`, else 415) and answer `{ids}`; 422 or
 * 502 on failure. As with Laravel's `broadcast(...)->toOthers()`, `toOthers: true` takes the sender's socket
 * from the `X-Socket-ID` request header (any case), the header Echo's HTTP interceptors add.
 */
export async function handleBroadcast(
    broadcast: (input: BroadcastInput) => Promise<string[]>,
    req: IncomingMessage,
    res: ServerResponse,
): Promise<void> {
    // A form or `text/plain` POST is a "simple" request any page can send cross-site without a CORS preflight: not here.
    if (!/^application\/json\s*(?:;|$)/i.test(req.headers["content-type"] ?? "")) {
        sendError(res, 415, "POST /dev/broadcast takes a JSON body: send Content-Type: application/json.");
        return;
    }
    let parsed: unknown;
    try {
        parsed = JSON.parse((await readBody(req)).toString("utf8"));
    } catch (error) {
        if (error instanceof LaravelDevError) throw error;
        throw new LaravelDevError(
            "invalid_input",
            "The broadcast body must be JSON: {channels, event, payload?, toOthers?}.",
        );
    }
    if (isPlainObject(parsed) && Object.hasOwn(parsed, "socket")) {
        throw new LaravelDevError(
            "invalid_input",
            "The broadcast body has no socket field: send toOthers: true with the X-Socket-ID header, as Laravel's toOthers() reads it.",
        );
    }
    const toOthers = isPlainObject(parsed) ? parsed["toOthers"] : undefined;
    if (toOthers !== undefined && typeof toOthers !== "boolean") {
        throw new LaravelDevError("invalid_input", "The broadcast toOthers field must be true or false.");
    }
    const input = validateBroadcastInput(isPlainObject(parsed) ? withoutKey(parsed, "toOthers") : parsed);
    // [spec] laravel-mercure §4.5: toOthers() copies the X-Socket-ID header into the event's socket.
    const socket = toOthers === true ? (req.headersDistinct["x-socket-id"]?.[0] ?? null) : null;
    const ids = await broadcast({ ...input, socket });
    sendJson(res, 200, { ids });
}

/** A copy of `object` without `key`. */
function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
    const { [key]: _removed, ...rest } = object;
    return rest;
}
