import type { FetchLike } from "../transport/platform";
import { within } from "../transport/deadline";
import { isToken } from "./http-syntax";
import { describeFailure } from "./response";
import { metadataUrlFor } from "./well-known";

export { METADATA_PREFIX, metadataUrlFor } from "./well-known";

/** The authorization details type of Mercure grants (mercure-hub §2.2). */
export const MERCURE_DETAIL_TYPE = "https://mercure.rocks/authorization-detail";

/** Default deadline of one metadata request, in milliseconds. */
export const DEFAULT_METADATA_TIMEOUT = 10_000;

/**
 * The fields of a hub's protected resource metadata a Mercure client uses (mercure-hub §5). Fields that
 * are absent or malformed are null (each malformed one is also listed in the validation's problems).
 */
export interface HubMetadata {
    /** The resource identifier: the value tokens must carry in `aud`. */
    readonly resource: string;
    /** `authorization_servers`: issuers of tokens for this hub. */
    readonly authorizationServers: readonly string[] | null;
    /** `bearer_methods_supported`: how a bearer token may be presented (`header`). */
    readonly bearerMethodsSupported: readonly string[] | null;
    /** `authorization_details_types_supported`: should list {@link MERCURE_DETAIL_TYPE}. */
    readonly authorizationDetailsTypesSupported: readonly string[] | null;
    /** `mercure_cookie`: the name of the cookie the hub reads the token from. */
    readonly mercureCookie: string | null;
    /** `mercure_subscriptions`: whether active subscriptions (presence) are on. */
    readonly mercureSubscriptions: boolean | null;
}

/** What {@link validateMetadata} found in a metadata document. */
export interface MetadataValidation {
    /** The usable fields, or null when the document has no usable `resource`. */
    readonly metadata: HubMetadata | null;
    /** One phrase per problem with the document, empty when it is valid. */
    readonly problems: readonly string[];
    /**
     * Whether `resource` names the hub URL the client uses (RFC 9728 §3.3: otherwise the document must not
     * be used; for Mercure, tokens signed for the hub URL are then refused).
     */
    readonly resourceMatches: boolean;
}

/**
 * The result of fetching the metadata document, classified.
 *
 * - `found`: the hub answered 2xx; the validation says whether the document is usable.
 * - `absent`: 404 or 410: the hub serves none (pre-1.0 hubs and anonymous-only 1.0 hubs don't).
 * - `unavailable`: another status, a network or CORS failure, or the deadline.
 */
export type MetadataOutcome =
    | { readonly kind: "found"; readonly url: string; readonly validation: MetadataValidation }
    | { readonly kind: "absent"; readonly url: string; readonly status: number }
    | { readonly kind: "unavailable"; readonly url: string; readonly reason: string };

/**
 * Validate a metadata document against the hub URL the client uses: `resource` is required and must
 * name that hub; the optional members must have the types RFC 9728 and Mercure give them.
 */
export function validateMetadata(document: unknown, hub: URL | string): MetadataValidation {
    if (typeof document !== "object" || document === null || Array.isArray(document)) {
        return { metadata: null, problems: ["the document is not a JSON object"], resourceMatches: false };
    }
    const fields = document as Record<string, unknown>;
    const problems: string[] = [];
    const resource = fields["resource"];
    // [spec] mercure-hub §5: `resource` is required; it is what tokens carry in `aud`.
    if (typeof resource !== "string" || !isHttpUrl(resource)) {
        problems.push(resource === undefined ? "resource is missing" : "resource is not an absolute http(s) URL");
    }
    const servers = urlList(fields, "authorization_servers", problems);
    const methods = stringList(fields, "bearer_methods_supported", problems);
    // [spec] mercure-hub §2.1: no token in the URL, ever.
    if (methods?.includes("query")) problems.push('bearer_methods_supported lists "query", but Mercure never accepts a token in the URL');
    const types = stringList(fields, "authorization_details_types_supported", problems);
    if (types !== null && !types.includes(MERCURE_DETAIL_TYPE)) {
        problems.push(`authorization_details_types_supported does not list ${MERCURE_DETAIL_TYPE}`);
    }
    const cookie = fields["mercure_cookie"];
    if (cookie !== undefined && (typeof cookie !== "string" || !isToken(cookie))) problems.push("mercure_cookie is not a cookie name");
    const subscriptions = fields["mercure_subscriptions"];
    if (subscriptions !== undefined && typeof subscriptions !== "boolean") problems.push("mercure_subscriptions is not a boolean");
    if (typeof resource !== "string" || !isHttpUrl(resource)) return { metadata: null, problems, resourceMatches: false };
    return {
        metadata: {
            resource,
            authorizationServers: servers,
            bearerMethodsSupported: methods,
            authorizationDetailsTypesSupported: types,
            mercureCookie: typeof cookie === "string" && isToken(cookie) ? cookie : null,
            mercureSubscriptions: typeof subscriptions === "boolean" ? subscriptions : null,
        },
        problems,
        // [spec] RFC 9728 §3.3: `resource` must be identical to the identifier the metadata URL was built from.
        resourceMatches: sameUrl(resource, String(hub)),
    };
}

/** Options of {@link fetchMetadata}. */
export interface FetchMetadataOptions {
    /** The fetch to use. */
    fetch: FetchLike;
    /** The metadata URL, when a challenge's `resource_metadata` named it; default {@link metadataUrlFor}. */
    url?: string | null;
    /** Deadline in milliseconds; default {@link DEFAULT_METADATA_TIMEOUT}. */
    timeout?: number;
    /** Abort the request. */
    signal?: AbortSignal;
}

/**
 * Fetch and validate a hub's metadata document; never rejects. Requested without credentials: the
 * document is public, and a credential-less request needs only `Access-Control-Allow-Origin`.
 */
export async function fetchMetadata(hub: URL | string, options: FetchMetadataOptions): Promise<MetadataOutcome> {
    const url = options.url ?? metadataUrlFor(hub).href;
    const waited = await within(
        async (signal) => {
            const response = await options.fetch(url, { method: "GET", credentials: "omit", headers: { Accept: "application/json" }, signal });
            return { status: response.status, text: response.status >= 200 && response.status < 300 ? await response.text() : "" };
        },
        options.timeout ?? DEFAULT_METADATA_TIMEOUT,
        options.signal ?? new AbortController().signal,
    );
    if (waited.kind === "timeout") return { kind: "unavailable", url, reason: "no answer in time" };
    if (waited.kind === "aborted") return { kind: "unavailable", url, reason: "aborted" };
    if (waited.kind === "failed") return { kind: "unavailable", url, reason: describeFailure(waited.cause) };
    const { status, text } = waited.value;
    if (status === 404 || status === 410) return { kind: "absent", url, status };
    if (status < 200 || status >= 300) return { kind: "unavailable", url, reason: `HTTP ${status}` };
    let document: unknown;
    try {
        document = JSON.parse(text);
    } catch {
        return { kind: "found", url, validation: { metadata: null, problems: ["the document is not JSON"], resourceMatches: false } };
    }
    return { kind: "found", url, validation: validateMetadata(document, hub) };
}

/** Whether two absolute URLs are the same once parsed (so `HTTP://Example.com:443/x` equals `http://example.com:443/x`). */
export function sameUrl(a: string, b: string): boolean {
    try {
        return new URL(a).href === new URL(b).href;
    } catch {
        return a === b;
    }
}

function isHttpUrl(value: string): boolean {
    try {
        const url = new URL(value);
        return (url.protocol === "https:" || url.protocol === "http:") && url.hash === "";
    } catch {
        return false;
    }
}

function stringList(fields: Record<string, unknown>, name: string, problems: string[]): string[] | null {
    const value = fields[name];
    if (value === undefined) return null;
    if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) {
        problems.push(`${name} is not an array of strings`);
        return null;
    }
    return value as string[];
}

function urlList(fields: Record<string, unknown>, name: string, problems: string[]): string[] | null {
    const list = stringList(fields, name, problems);
    if (list !== null && !list.every(isHttpUrl)) {
        problems.push(`${name} is not a list of absolute http(s) URLs`);
        return null;
    }
    return list;
}
