/** The well-known path prefix of RFC 9728 protected resource metadata. */
export const METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/**
 * The metadata URL of a hub: `/.well-known/oauth-protected-resource` inserted between the hub's origin and
 * its path (RFC 9728 §3.1), e.g. `https://example.com/.well-known/oauth-protected-resource/.well-known/mercure`.
 */
export function metadataUrlFor(hub: URL | string): URL {
    const url = new URL(String(hub));
    // [spec] RFC 9728 §3.1: a path of "/" (no path) adds nothing after the prefix; the query is not kept.
    const path = url.pathname === "/" ? "" : url.pathname;
    return new URL(METADATA_PREFIX + path, url.origin);
}
