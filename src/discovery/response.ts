import type { FetchResponseLike } from "../transport/platform";

/*
 * Reading the parts of a fetch response that the connector's `FetchLike` type does not promise (headers,
 * URL, type, body). The real `fetch` has them all; a wrapper may not, and then they read as absent.
 */

/** A response header, or null when absent or when the response exposes no headers. */
export function readHeader(response: FetchResponseLike, name: string): string | null {
    const headers = (response as { headers?: { get?: (name: string) => string | null } }).headers;
    try {
        return typeof headers?.get === "function" ? headers.get(name) : null;
    } catch {
        return null;
    }
}

/** The URL the response came from after redirects, or null when the response does not say. */
export function responseUrl(response: FetchResponseLike): string | null {
    const url = (response as { url?: unknown }).url;
    return typeof url === "string" && url !== "" ? url : null;
}

/** The response's `type` (`basic`, `cors`, `opaque`, …), or null when the response does not say. */
export function responseType(response: FetchResponseLike): string | null {
    const type = (response as { type?: unknown }).type;
    return typeof type === "string" ? type : null;
}

/** Stop reading the body (an event stream never ends by itself); never throws. */
export function discardBody(response: FetchResponseLike): void {
    const body = (response as { body?: { cancel?: () => Promise<void> } | null }).body;
    try {
        body?.cancel?.().catch(() => undefined);
    } catch {
        // A body that is locked or already consumed needs no cancelling.
    }
}

/** A short, one-line description of why a request failed. */
export function describeFailure(cause: unknown): string {
    if (cause instanceof Error) {
        const inner = (cause as { cause?: unknown }).cause;
        const code = (inner as { code?: unknown } | undefined)?.code;
        return typeof code === "string" ? `${cause.message}: ${code}` : cause.message;
    }
    return "network error";
}
