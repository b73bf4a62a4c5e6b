import { URLPattern } from "urlpattern-polyfill/urlpattern";

/** The matcher types a Mercure 1.0 hub understands. */
export type MatchType = "exact" | "urlpattern";

/** A compiled topic matcher (a subscription's routing matcher or a token grant's topic selector). */
export interface Matcher {
    /** How `value` is interpreted. */
    readonly type: MatchType;
    /** The matcher string as given. */
    readonly value: string;
    /** Whether `topic` is selected by this matcher. */
    matches(topic: string): boolean;
}

/** Subscribe query parameters that carry a matcher, and their type. */
export const MATCHER_PARAMETERS: Readonly<Record<string, MatchType>> = {
    match: "exact",
    match_exact: "exact",
    match_urlpattern: "urlpattern",
};

/** The reserved value matching every topic, whichever matcher type carries it. */
export const WILDCARD = "*";

/** Longest matcher value accepted, in UTF-8 bytes (the Go hub's limit). */
export const MAX_PATTERN_BYTES = 4096;

/** True when `value` names a known matcher type. */
export function isMatchType(value: unknown): value is MatchType {
    return value === "exact" || value === "urlpattern";
}

/**
 * Compile a matcher; relative URL patterns (and, at match time, relative topics) resolve against `base`, the
 * hub's pattern base (its resource identifier, or `http://mercure.invalid`). Returns `null` for an invalid
 * URL pattern, and for one with custom regular-expression groups.
 */
export function compileMatcher(type: MatchType, value: string, base: string): Matcher | null {
    if (value === WILDCARD) {
        // [spec] §1.2: `*` matches every topic whichever matcher carries it.
        return { type, value, matches: () => true };
    }
    if (type === "exact") {
        // [spec] §9 Matchers: byte-for-byte, case-sensitive, no normalization or resolution.
        return { type, value, matches: (topic) => topic === value };
    }
    let pattern: URLPattern;
    try {
        // [spec] §1.2: relative patterns resolve against the configured base, never the request's host;
        // ignoreCase is never enabled.
        pattern = new URLPattern(value, base);
    } catch {
        return null;
    }
    // [spec] §9 Matchers: evaluation must be linear-time or cost-limited. Custom regular-expression groups
    // (`:id(\\d+)`) would run arbitrary backtracking regexes, so this hub refuses them as invalid patterns;
    // named groups, wildcards and optional groups compile to simple segment classes.
    if ((pattern as URLPattern & { hasRegExpGroups?: boolean }).hasRegExpGroups === true) return null;
    return {
        type,
        value,
        matches: (topic) => {
            try {
                // [spec] §9 Matchers: a topic that is not parseable as a URL never matches.
                return pattern.test(topic, base);
            } catch {
                return false;
            }
        },
    };
}

/** True when any of `matchers` selects any of `topics`. */
export function matchesAny(matchers: readonly Matcher[], topics: readonly string[]): boolean {
    return matchers.some((matcher) => topics.some((topic) => matcher.matches(topic)));
}

/**
 * True when `topic`, resolved against the pattern base `base` with dot segments removed and percent-encoded
 * unreserved characters decoded, is the hub path or below it (on any scheme and host).
 */
export function isReservedTopic(topic: string, base: string, hubPath: string): boolean {
    let pathname: string;
    try {
        pathname = new URL(topic, base).pathname;
    } catch {
        return false;
    }
    // [spec] §3: compare after resolution, dot-segment removal and decoding of %-encoded unreserved chars;
    // decoding can reveal new dot segments, so normalise once more.
    const decoded = normalisePath(decodeUnreserved(pathname));
    const reserved = normalisePath(decodeUnreserved(hubPath));
    return decoded === reserved || decoded.startsWith(reserved + "/");
}

function decodeUnreserved(path: string): string {
    return path.replace(/%([0-9A-Fa-f]{2})/g, (escape, hex: string) => {
        const char = String.fromCharCode(parseInt(hex, 16));
        return /[A-Za-z0-9\-._~]/.test(char) ? char : escape.toUpperCase();
    });
}

function normalisePath(path: string): string {
    if (!path.startsWith("/")) return path;
    try {
        return new URL("http://h" + path).pathname;
    } catch {
        return path;
    }
}
