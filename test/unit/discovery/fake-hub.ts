import type { FetchLike, FetchResponseLike } from "../../../src/transport/platform";

/** One answer of the fake: a status with headers and body, or a rejection. */
export interface FakeAnswer {
    status?: number;
    headers?: Record<string, string>;
    body?: string;
    /** The response's `type` (`basic`, `cors`, `opaque`); default `basic`, as Node.js gives. */
    type?: string;
    /** The response URL (after redirects); default the request URL. */
    url?: string;
}

/** A recorded request. */
export interface FakeCall {
    url: string;
    init: RequestInit;
    headers: Record<string, string>;
}

/** A response as fetch gives it, with what the test wants to observe (whether its body was cancelled or read). */
export interface FakeResponse extends FetchResponseLike {
    readonly headers: Headers;
    readonly type: string;
    readonly url: string;
    readonly body: { cancel(): Promise<void> };
    cancelled: boolean;
    read: boolean;
}

/**
 * A scriptable fetch: `route` answers each request (an answer, an Error to reject with, or a promise of
 * either, for a request held open); every request is recorded with its headers flattened to lower-case.
 */
export function fakeFetch(route: (call: FakeCall) => FakeAnswer | Error | Promise<FakeAnswer | Error>) {
    const calls: FakeCall[] = [];
    const responses: FakeResponse[] = [];
    const fetch: FetchLike = async (url, init) => {
        // Read as given: a DOM Headers object would drop what browsers forbid scripts to set (Origin, Cookie).
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries((init.headers ?? {}) as Record<string, string>)) headers[name.toLowerCase()] = value;
        const call = { url, init, headers };
        calls.push(call);
        const answer = await route(call);
        if (answer instanceof Error) throw answer;
        const response: FakeResponse = {
            status: answer.status ?? 200,
            headers: new Headers(answer.headers ?? {}),
            type: answer.type ?? "basic",
            url: answer.url ?? url,
            cancelled: false,
            read: false,
            body: {
                cancel: async () => {
                    response.cancelled = true;
                },
            },
            text: async () => {
                response.read = true;
                return answer.body ?? "";
            },
        };
        responses.push(response);
        return response;
    };
    return { fetch, calls, responses };
}

/** The metadata document a 1.0 hub at `hub` serves. */
export function metadataDocument(hub: string, overrides: Record<string, unknown> = {}): string {
    return JSON.stringify({
        resource: hub,
        authorization_details_types_supported: ["https://mercure.rocks/authorization-detail"],
        bearer_methods_supported: ["header"],
        mercure_cookie: "mercure_access_token",
        mercure_subscriptions: true,
        ...overrides,
    });
}

/** An unsigned compact JWS carrying `claims` (the diagnostics read claims, they never verify). */
export function unsignedToken(claims: Record<string, unknown>, header: Record<string, unknown> = { alg: "HS256", typ: "at+jwt" }): string {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    return `${encode(header)}.${encode(claims)}.c2lnbmF0dXJl`;
}
