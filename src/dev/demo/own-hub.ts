import { mintAccessToken } from "../jwt/access-token";
import { LaravelDevError } from "../laravel/errors";
import { DEFAULT_TOPIC_PREFIX } from "../laravel/options";
import type { DevServer } from "../server";

// `demo --hub`: the demo's Laravel stand-in in front of a Mercure hub the user runs (FrankenPHP, the Mercure hub).
// The app publishes to the hub's own URL, as Laravel's `url`; the page reaches the hub through the demo's origin
// (the dev server's same-origin proxy, Laravel's `public_url`), so what the hub must accept is known only once
// the demo listens: printed by ownHubRequirements, then tried by checkOwnHub before anyone opens the page.

/** The user's own Mercure hub the demo runs against (`demo --hub`). */
export interface DemoHub {
    /** The hub URL the demo's Laravel stand-in publishes to (a URL without a path gets `/.well-known/mercure`). */
    url: string;
    /** The HS256 key the hub verifies publisher and subscriber tokens with. */
    jwtKey: string;
    /** The `iss` of every token: one of the hub's trusted issuers. */
    issuer: string;
    /** The authorization cookie's name, the hub's `cookie_name`. */
    cookieName: string;
    /** The `aud` of every token, the hub's pinned `resource_identifier`; null: the demo page's hub URL. */
    audience: string | null;
}

/** The private channel the start-up check publishes on: no page listens to it. */
export const CHECK_CHANNEL = "private-laravel-echo-mercure-demo-check";

/** The `aud` every token of the demo carries: `--audience`, else the hub URL the page uses. */
export function demoAudience(server: DevServer, hub: DemoHub): string {
    return hub.audience ?? server.hubUrl;
}

/**
 * What the user's hub must be configured with, as the Caddyfile `mercure` directives FrankenPHP and the Mercure
 * hub take: the issuer and key the app signs with, the audience, the cookie name, the page's origin as a publish
 * origin (whispers), and the subscriptions API (presence). The key itself is not printed.
 */
export function ownHubRequirements(server: DevServer, hub: DemoHub): string {
    const audience = demoAudience(server, hub);
    return [
        `Your hub at ${hub.url} must be configured with these Caddyfile directives`,
        `(FrankenPHP, the Mercure hub; MERCURE_JWT_SECRET holding the --jwt-key value):`,
        `  mercure {`,
        `      issuer ${hub.issuer} {`,
        `          publisher {`,
        `              jwt {env.MERCURE_JWT_SECRET}`,
        `          }`,
        `          subscriber {`,
        `              jwt {env.MERCURE_JWT_SECRET}`,
        `          }`,
        `      }`,
        `      resource_identifier ${audience}`,
        `      cookie_name ${hub.cookieName}`,
        `      publish_origins ${server.url}`,
        `      subscriptions`,
        `  }`,
        `- issuer: the iss of the demo's tokens (--issuer), HS256 with the --jwt-key.`,
        hub.audience === null
            ? `- resource_identifier: the aud of the demo's tokens, the page's hub URL (or pass --audience <the hub's>).`
            : `- resource_identifier: the aud of the demo's tokens (--audience).`,
        `  Pin it: a hub that derives the audience from each request's Host refuses the app's publishes, which go`,
        `  to ${hub.url} directly, as Laravel's do.`,
        `- cookie_name: the cookie the page's hub token travels in (--cookie-name).`,
        `- publish_origins: the page's origin, for whispers ("typing…"); subscriptions: presence (who is online).`,
        `The page reaches the hub through ${server.hubUrl} (a same-origin proxy that keeps the browser's Host).`,
        "",
    ].join("\n");
}

/** How the start-up check went: fine (perhaps with warnings), or the reason the demo cannot work. */
export type OwnHubCheck = { ok: true; warnings: string[] } | { ok: false; reason: string };

/**
 * Try the user's hub as the demo will use it: the app publishes a private update with its bearer token to the
 * hub's URL, then a browser-style publish (the hub cookie, the page's `Origin`) goes through the demo's
 * origin. Resolves with the first reason it cannot work; a refused `Origin` only warns (whispers alone need it).
 */
export async function checkOwnHub(server: DevServer, hub: DemoHub): Promise<OwnHubCheck> {
    const audience = demoAudience(server, hub);
    try {
        const [id] = await server.broadcast({ channels: [CHECK_CHANNEL], event: "DemoHubCheck", payload: { at: Date.now() } });
        if (id === undefined || id.trim() === "") {
            return { ok: false, reason: `${hub.url} answered the app's publish without an update id: is it a Mercure hub's URL?` };
        }
    } catch (error) {
        if (!(error instanceof LaravelDevError)) throw error;
        if (error.code === "hub_unreachable") {
            return { ok: false, reason: `The hub at ${hub.url} could not be reached: is it running, and is --hub its URL?` };
        }
        const status = error.hubStatus;
        return {
            ok: false,
            reason:
                status === 401
                    ? `The hub at ${hub.url} refused the app's publisher token (401): it must trust the issuer "${hub.issuer}" with the --jwt-key (HS256), and its resource_identifier must be "${audience}".`
                    : status === 403
                      ? `The hub at ${hub.url} refused the app's publish (403): the publisher token grants every topic, so check what in front of the hub answered.`
                      : `The hub at ${hub.url} refused the app's publish: ${error.message}`,
        };
    }

    // As the page's whispers do: the hub cookie and the page's Origin, through the demo's origin.
    const topic = `${DEFAULT_TOPIC_PREFIX}channel/${CHECK_CHANNEL}`;
    const token = mintAccessToken({ jwtKey: hub.jwtKey, issuer: hub.issuer, resource: audience, publish: [topic], subscribe: [], ttl: 60, now: Date.now() });
    let response: Response;
    try {
        response = await fetch(server.hubUrl, {
            method: "POST",
            headers: { Cookie: `${hub.cookieName}=${token}`, Origin: server.url, "Content-Type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ topic, data: "{}", private: "on" }).toString(),
            signal: AbortSignal.timeout(10_000),
        });
    } catch {
        return { ok: false, reason: `The hub at ${hub.url} did not answer through ${server.hubUrl} within 10 s.` };
    }
    const body = (await response.text().catch(() => "")).trim();
    if (response.status === 200 && body !== "") return { ok: true, warnings: [] };
    if (response.status === 400) {
        return {
            ok: true,
            warnings: [`The hub refused a publish from the page's origin (400): add ${server.url} to its publish_origins, or whispers ("typing…") fail.`],
        };
    }
    if (response.status === 401) {
        const readToken = /error="invalid_token"/.test(response.headers.get("www-authenticate") ?? "");
        return {
            ok: false,
            reason: readToken
                ? `The hub refused the page's token when reached through ${server.hubUrl} (401) though it took the app's: it derives the audience from the Host header; pin its resource_identifier to "${audience}".`
                : `The hub found no token in the page's cookie (401): its cookie_name must be "${hub.cookieName}" (--cookie-name).`,
        };
    }
    return {
        ok: false,
        reason: `The hub answered ${response.status}${body === "" ? " without an update id" : ` (${body.slice(0, 200)})`} to a publish through ${server.hubUrl}: does it answer requests whose Host is ${new URL(server.url).host}?`,
    };
}
