import { afterEach } from "vitest";
import { signJwt } from "../../../src/dev/jwt/jwt";
import type { HmacAlgorithm } from "../../../src/dev/jwt/jwt";
import { startDevHub } from "../../../src/dev/hub";
import type { DevHub, DevHubOptions } from "../../../src/dev/hub";
import { openSse } from "./sse-client";
import type { SseStream } from "./sse-client";

/** The shared test key. */
export const KEY = "test-key-that-is-long-enough-for-hs256!";

/** The issuer of {@link token}'s tokens, which {@link startHub} trusts unless told otherwise. */
export const ISSUER = "https://app.test";

/** The Mercure authorization detail type. */
export const DETAIL_TYPE = "https://mercure.rocks/authorization-detail";

/** Build a Mercure authorization detail; string topics are exact matchers. */
export function detail(
    actions: unknown[],
    topics: (string | { match: unknown; match_type?: unknown })[],
    payload?: unknown,
): Record<string, unknown> {
    return {
        type: DETAIL_TYPE,
        actions,
        topics: topics.map((topic) => (typeof topic === "string" ? { match: topic } : topic)),
        ...(payload !== undefined ? { payload } : {}),
    };
}

/** Sign an access token for `hub` with the given details; `claims` overrides (undefined deletes). */
export function token(
    hub: DevHub,
    details?: unknown[],
    claims: Record<string, unknown> = {},
    options: { key?: string; alg?: HmacAlgorithm; header?: Record<string, unknown> } = {},
): string {
    const now = Math.floor(Date.now() / 1000);
    return signJwt(
        {
            iss: ISSUER,
            aud: hub.url,
            sub: "user",
            iat: now,
            exp: now + 60,
            ...(details !== undefined ? { authorization_details: details } : {}),
            ...claims,
        },
        options.key ?? KEY,
        options.alg ?? "HS256",
        options.header ?? {},
    );
}

/** A token granting subscribe and publish on everything. */
export function allToken(hub: DevHub, payload?: unknown): string {
    return token(hub, [detail(["subscribe", "publish"], ["*"], payload)]);
}

const started: DevHub[] = [];
const streams: SseStream[] = [];

/** Start a hub on an ephemeral port trusting {@link ISSUER}, closed after the test. */
export async function startHub(options: Partial<DevHubOptions> = {}): Promise<DevHub> {
    const hub = await startDevHub({ jwtKey: KEY, issuers: [ISSUER], ...options });
    started.push(hub);
    return hub;
}

afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    await Promise.all(started.splice(0).map((hub) => hub.close()));
});

/** Build a subscribe URL with URLSearchParams semantics. */
export function subscribeUrl(hub: DevHub, params: [string, string][]): string {
    const url = new URL(hub.url);
    for (const [name, value] of params) url.searchParams.append(name, value);
    return url.href;
}

/** Open an event stream (closed after the test). */
export async function subscribe(
    hub: DevHub,
    params: [string, string][],
    headers: Record<string, string> = {},
): Promise<SseStream> {
    const stream = await openSse(subscribeUrl(hub, params), { headers });
    streams.push(stream);
    return stream;
}

/** `Authorization: Bearer` headers. */
export function bearer(jwt: string): Record<string, string> {
    return { authorization: `Bearer ${jwt}` };
}

/** Cookie headers with the default cookie name. */
export function cookie(jwt: string, name = "mercure_access_token"): Record<string, string> {
    return { cookie: `${name}=${jwt}` };
}

/** POST a publish form to the hub. */
export async function post(
    hub: DevHub,
    fields: [string, string][],
    headers: Record<string, string> = {},
): Promise<Response> {
    return fetch(hub.url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(fields).toString(),
    });
}

/** Publish over HTTP with an all-powerful token and return the id (fails the test on non-200). */
export async function publish(hub: DevHub, fields: [string, string][]): Promise<string> {
    const response = await post(hub, fields, bearer(allToken(hub)));
    const body = await response.text();
    if (response.status !== 200) throw new Error(`publish failed: ${response.status} ${body}`);
    return body;
}

/** The expected `resource_metadata` URL of a hub. */
export function metadataUrl(hub: DevHub): string {
    return `${hub.origin}/.well-known/oauth-protected-resource/.well-known/mercure`;
}

/** Sleep. */
export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
