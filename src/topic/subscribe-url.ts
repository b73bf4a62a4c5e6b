/**
 * What one subscribe request asks the hub for.
 */
export interface SubscribeRequest {
    /** Exact topics, one `match` parameter each, in order. */
    topics: readonly string[];
    /** URL patterns, one `match_urlpattern` parameter each. */
    patterns?: readonly string[];
    /** The cursor to resume after, sent as `last_event_id`. */
    lastEventId?: string | null;
}

/**
 * Build the hub's subscribe URL: the hub URL with its query replaced by the Mercure 1.0 parameters.
 */
export function buildSubscribeUrl(hub: URL, request: SubscribeRequest): string {
    // [spec] laravel-mercure §4.1: copy the hub URL, clear its query, append with URLSearchParams semantics.
    const url = new URL(hub.href);
    url.hash = "";
    const params = new URLSearchParams();
    for (const topic of request.topics) params.append("match", topic);
    for (const pattern of request.patterns ?? []) params.append("match_urlpattern", pattern);
    if (request.lastEventId) params.set("last_event_id", request.lastEventId);
    url.search = params.toString();
    return url.href;
}
