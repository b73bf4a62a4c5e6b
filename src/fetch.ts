// The fetch types every layer that makes HTTP requests shares: a foundation, so that auth and transport both read them.

/**
 * The part of a fetch `Response` the connector reads.
 */
export interface FetchResponseLike {
    /** HTTP status. */
    readonly status: number;
    /** Whether `fetch` followed a redirect to get here (absent: not known). */
    readonly redirected?: boolean;
    /** The URL of the response, after redirects (absent: not known). */
    readonly url?: string;
    /** The response headers (absent: not known). */
    readonly headers?: { get(name: string): string | null };
    /** Read the body as text. */
    text(): Promise<string>;
}

/**
 * A `fetch` implementation: the global one, or a wrapper (for example one that keeps cookies in Node).
 */
export type FetchLike = (url: string, init: RequestInit) => Promise<FetchResponseLike>;
