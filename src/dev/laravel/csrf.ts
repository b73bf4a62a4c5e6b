import type { IncomingMessage } from "node:http";
import { randomBytes } from "node:crypto";
import { parseCookieHeader } from "./cookie";

/** The cookie naming the dev browser session the CSRF token belongs to. */
export const DEV_SESSION_COOKIE = "dev_session";

/** The session's token and the `Set-Cookie` values that give it to the browser. */
export interface CsrfGrant {
    /** The session's CSRF token now. */
    readonly token: string;
    /** `Set-Cookie` values: the session cookie when it is new, and `XSRF-TOKEN`. */
    readonly cookies: string[];
}

/**
 * Laravel's session CSRF token in the dev stand-in (the `csrf` app option): one token per browser session (the
 * `dev_session` cookie), replaced when the session is regenerated (a login, or `POST /dev/csrf/regenerate`, as another
 * tab's login would), and readable by the page's scripts as the `XSRF-TOKEN` cookie (URL-encoded, as Laravel's
 * `VerifyCsrfToken` adds it to responses). Laravel encrypts that cookie with a random IV, so its value changes on every
 * response that sets it while the token stays the same (issue 49: a client that takes the value for an identity splits
 * its tabs); the stand-in wraps the token with a random IV too (see {@link seal}). A state-changing request must carry
 * the session's token as `X-CSRF-TOKEN`, else the cookie's value as `X-XSRF-TOKEN`, or gets 419.
 */
export class CsrfTokens {
    /** Each session's current token. */
    readonly #tokens = new Map<string, string>();

    /** The request's session token, starting a session when it has none. */
    current(req: IncomingMessage): CsrfGrant {
        const session = this.#session(req);
        const token = this.#tokens.get(session.id) ?? this.#issue(session.id);
        return { token, cookies: [...session.cookies, xsrfCookie(token)] };
    }

    /** Give the request's session a new token (Laravel's `session()->regenerate()`); the old one is refused from now on. */
    regenerate(req: IncomingMessage): CsrfGrant {
        const session = this.#session(req);
        const token = this.#issue(session.id);
        return { token, cookies: [...session.cookies, xsrfCookie(token)] };
    }

    /**
     * Whether the request carries its session's token: `X-CSRF-TOKEN` as it is, else `X-XSRF-TOKEN` unsealed (as
     * `VerifyCsrfToken` reads them: the cookie's value decrypted).
     */
    verify(req: IncomingMessage): boolean {
        const id = parseCookieHeader(req.headers.cookie).get(DEV_SESSION_COOKIE);
        const expected = id === undefined ? undefined : this.#tokens.get(id);
        const given = req.headersDistinct["x-csrf-token"]?.[0] ?? unseal(req.headersDistinct["x-xsrf-token"]?.[0]);
        return expected !== undefined && given === expected;
    }

    /** The request's session id, or a new one with the cookie that sets it. */
    #session(req: IncomingMessage): { id: string; cookies: string[] } {
        const known = parseCookieHeader(req.headers.cookie).get(DEV_SESSION_COOKIE);
        if (known !== undefined && this.#tokens.has(known)) return { id: known, cookies: [] };
        const id = randomBytes(16).toString("hex");
        return { id, cookies: [`${DEV_SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`] };
    }

    /** A new token for session `id`: base64, so that the cookie's URL-encoding matters to the client. */
    #issue(id: string): string {
        const token = randomBytes(30).toString("base64");
        this.#tokens.set(id, token);
        return token;
    }
}

/** The `XSRF-TOKEN` cookie: readable by scripts (not HttpOnly), URL-encoded, a new value each time (see {@link seal}). */
function xsrfCookie(token: string): string {
    return `XSRF-TOKEN=${encodeURIComponent(seal(token))}; Path=/; SameSite=Lax`;
}

/**
 * `token` as Laravel's encrypted cookies look (base64 of a JSON object with a random `iv` and the `value`), a new text
 * each time; not encrypted: the stand-in keeps nothing from the developer, it only must change as Laravel's does.
 */
export function seal(token: string): string {
    return Buffer.from(JSON.stringify({ iv: randomBytes(16).toString("base64"), value: token })).toString("base64");
}

/** The token {@link seal} wrapped in `text`, or undefined for anything else. */
export function unseal(text: string | undefined): string | undefined {
    try {
        const value = (JSON.parse(Buffer.from(text ?? "", "base64").toString()) as { value?: unknown } | null)?.value;
        return typeof value === "string" ? value : undefined;
    } catch {
        return undefined;
    }
}
