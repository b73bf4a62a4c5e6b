import type { ServerResponse } from "node:http";
import { MERCURE_DETAIL_TYPE } from "./grants";
import type { RequestContext } from "./http";
import type { ResolvedHubOptions } from "./options";

/** Path prefix of RFC 9728 protected resource metadata. */
export const METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/** Path of the metadata document for a hub path, e.g. `/.well-known/oauth-protected-resource/.well-known/mercure`. */
export function metadataPath(hubPath: string): string {
    return METADATA_PREFIX + hubPath;
}

/** The RFC 9728 protected resource metadata of the hub as seen by one request. */
export function metadataDocument(context: RequestContext, options: ResolvedHubOptions): Record<string, unknown> {
    // [spec] §5: `resource` is required and equals what tokens carry in `aud`.
    return {
        resource: context.resource,
        authorization_details_types_supported: [MERCURE_DETAIL_TYPE],
        // [spec] §5: the cookie is not an RFC 6750 method; it is advertised as `mercure_cookie`.
        bearer_methods_supported: ["header"],
        ...(options.cookieAuth ? { mercure_cookie: options.cookieName } : {}),
        mercure_subscriptions: options.subscriptions,
    };
}

/** Serve the metadata document. */
export function handleMetadata(res: ServerResponse, context: RequestContext, options: ResolvedHubOptions): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" });
    res.end(JSON.stringify(metadataDocument(context, options)));
}
