/** The components of a URL as PHP's `parse_url()` reports them: absent components are `undefined`. */
export interface PhpUrlParts {
    /** The scheme as written (`http`, `https`), when the URL has one. */
    scheme?: string;
    /** The host name, when the URL has an authority. */
    host?: string;
    /** The path as written (not normalised, no query or fragment), when not empty. */
    path?: string;
}

/**
 * Split a URL as PHP's `parse_url()` does for the URLs a `public_url` holds (`https://host:port/path`,
 * `//host/path`, `/path`): components are taken verbatim, nothing is resolved or normalised, and an empty
 * path is absent (`parse_url("https://hub.example", PHP_URL_PATH)` is `null`, not `/`).
 */
export function parsePhpUrl(url: string): PhpUrlParts {
    const parts: PhpUrlParts = {};
    let rest = url.replace(/[?#].*$/s, "");
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
    if (scheme !== null) {
        parts.scheme = scheme[1]!;
        rest = rest.slice(scheme[0].length);
    }
    if (rest.startsWith("//")) {
        const end = rest.indexOf("/", 2);
        const authority = end === -1 ? rest.slice(2) : rest.slice(2, end);
        rest = end === -1 ? "" : rest.slice(end);
        const host = authority.replace(/^.*@/s, "").replace(/:\d*$/, "");
        if (host !== "") parts.host = host;
    }
    if (rest !== "") parts.path = rest;
    return parts;
}
