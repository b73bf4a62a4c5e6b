import type { IncomingMessage, ServerResponse } from "node:http";
import { validateBroadcastInput, type BroadcastInput } from "./broadcaster";
import { clearDevUserCookie, DEV_USER_COOKIE, devUserCookie, parseCookieHeader } from "./cookie";
import { LaravelDevError } from "./errors";
import { readBody, sendError, sendJson } from "./http";
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

/** `GET|POST /dev/login?user=<id>`: set the `dev_user` cookie, or 404 for an unknown user. */
export function handleLogin(users: readonly DevUser[], res: ServerResponse, url: URL): void {
    const user = findUser(users, url.searchParams.get("user"));
    if (user === null) {
        sendError(res, 404, "No dev user has that id; pass ?user=<id> of one of the users option's entries.");
        return;
    }
    sendJson(res, 200, { user }, { "Set-Cookie": devUserCookie(String(user.id)) });
}

/** `POST /dev/logout`: clear the `dev_user` cookie. */
export function handleLogout(res: ServerResponse): void {
    res.writeHead(204, { "Set-Cookie": clearDevUserCookie(), "Cache-Control": "no-cache, private" });
    res.end();
}

/** `POST /dev/broadcast`: publish a JSON {@link BroadcastInput} and answer `{ids}`; 422 or 502 on failure. */
export async function handleBroadcast(
    broadcast: (input: BroadcastInput) => Promise<string[]>,
    req: IncomingMessage,
    res: ServerResponse,
): Promise<void> {
    let parsed: unknown;
    try {
        parsed = JSON.parse((await readBody(req)).toString("utf8"));
    } catch (error) {
        if (error instanceof LaravelDevError) throw error;
        throw new LaravelDevError(
            "invalid_input",
            "The broadcast body must be JSON: {channels, event, payload?, socket?}.",
        );
    }
    const ids = await broadcast(validateBroadcastInput(parsed));
    sendJson(res, 200, { ids });
}
