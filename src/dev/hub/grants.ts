import { hasForbiddenChars, utf8Length } from "./form";
import { compileMatcher, isMatchType, MAX_PATTERN_BYTES } from "./matchers";
import type { Matcher, MatchType } from "./matchers";

/** The RFC 9396 `type` of a Mercure authorization detail. */
export const MERCURE_DETAIL_TYPE = "https://mercure.rocks/authorization-detail";

/** Most Mercure details a token may carry (the Go hub's limit). */
export const MAX_DETAILS = 100;

/** Most topic entries a token may carry across all its details (the Go hub's limit). */
export const MAX_TOPIC_ENTRIES = 100;

/** One Mercure authorization detail of a validated token. */
export interface Grant {
    /** The action strings the detail lists (`publish`, `subscribe`; unknown ones grant nothing). */
    readonly actions: ReadonlySet<string>;
    /** The compiled topic selectors. */
    readonly topics: readonly Matcher[];
    /** The detail's `payload`, present only when the detail had one. */
    readonly payload?: { readonly value: unknown };
}

/** A grant action. */
export type GrantAction = "publish" | "subscribe";

/**
 * Parse a token's `authorization_details` claim into grants; `null` means the token must be rejected
 * (any invalid Mercure detail invalidates the whole token). An absent claim grants nothing.
 */
export function parseAuthorizationDetails(claim: unknown, base: string): Grant[] | null {
    if (claim === undefined) return [];
    if (!Array.isArray(claim)) return null;
    const grants: Grant[] = [];
    let topicEntries = 0;
    for (const detail of claim) {
        if (!isObject(detail) || typeof detail["type"] !== "string") return null;
        // [spec] §2.2: only the exact Mercure type URI is ours; other detail types are ignored.
        if (detail["type"] !== MERCURE_DETAIL_TYPE) continue;
        if (grants.length >= MAX_DETAILS) return null;
        const actions = detail["actions"];
        // [spec] §2.2: `actions` is a non-empty array of strings; a non-string entry invalidates the token.
        if (!Array.isArray(actions) || actions.length === 0 || !actions.every((a) => typeof a === "string")) {
            return null;
        }
        const topics = detail["topics"];
        if (!Array.isArray(topics) || topics.length === 0) return null;
        topicEntries += topics.length;
        if (topicEntries > MAX_TOPIC_ENTRIES) return null;
        const matchers: Matcher[] = [];
        for (const entry of topics) {
            const matcher = parseTopicEntry(entry, base);
            if (matcher === null) return null;
            matchers.push(matcher);
        }
        grants.push({
            actions: new Set(actions as string[]),
            topics: matchers,
            ...("payload" in detail ? { payload: { value: detail["payload"] } } : {}),
        });
    }
    return grants;
}

/** Most selectors a 0.x `mercure.publish` or `mercure.subscribe` list may hold (the Go hub v0.24.2's limit). */
const MAX_LEGACY_SELECTORS = 100;

/**
 * The grants of a Mercure 0.x token: its `mercure` claim (or the namespaced `https://mercure.rocks/` one),
 * `{ publish: [selectors], subscribe: [selectors], payload }`, read as exact topics (`*`: every topic; 0.x URI
 * templates are not supported). `authorization_details` grant nothing there; `null` means the token must be
 * rejected (a list over the limit).
 */
export function parseLegacyClaim(claims: Readonly<Record<string, unknown>>, base: string): Grant[] | null {
    const claim = claims["https://mercure.rocks/"] ?? claims["mercure"];
    if (!isObject(claim)) return [];
    const found: Grant[] = [];
    for (const action of ["publish", "subscribe"] as const) {
        const selectors = claim[action];
        if (!Array.isArray(selectors)) continue;
        if (selectors.length > MAX_LEGACY_SELECTORS) return null;
        const topics = selectors.filter((selector): selector is string => typeof selector === "string" && selector !== "").map((selector) => compileMatcher("exact", selector, base));
        found.push({
            actions: new Set([action]),
            topics: topics.filter((matcher): matcher is Matcher => matcher !== null),
            ...(action === "subscribe" && "payload" in claim ? { payload: { value: claim["payload"] } } : {}),
        });
    }
    return found;
}

/** Parse one `{match, match_type?}` entry; bare strings and unknown match types are invalid. */
function parseTopicEntry(entry: unknown, base: string): Matcher | null {
    if (!isObject(entry)) return null;
    const match = entry["match"];
    const matchType: unknown = "match_type" in entry ? entry["match_type"] : "exact";
    // [spec] §2.2: `match_type` is case-sensitive and defaults to `exact`.
    if (typeof match !== "string" || match === "" || !isMatchType(matchType)) return null;
    if (utf8Length(match) > MAX_PATTERN_BYTES || hasForbiddenChars(match)) return null;
    return compileMatcher(matchType as MatchType, match, base);
}

/** True when some grant carrying `action` selects `topic`. */
export function grants(grantList: readonly Grant[], action: GrantAction, topic: string): boolean {
    return grantList.some(
        (grant) => grant.actions.has(action) && grant.topics.some((matcher) => matcher.matches(topic)),
    );
}

/** True when a subscribe grant selects at least one of `topics` (what a private update needs). */
export function canSubscribeToAny(grantList: readonly Grant[], topics: readonly string[]): boolean {
    // [spec] §2.4: a private update needs a subscribe grant on at least one of its topics.
    return topics.some((topic) => grants(grantList, "subscribe", topic));
}

/** True when publish grants cover every one of `topics`. */
export function canPublishAll(grantList: readonly Grant[], topics: readonly string[]): boolean {
    // [spec] §3: the publish grant must match every topic, canonical and alternate.
    return topics.every((topic) => grants(grantList, "publish", topic));
}

/**
 * True when a subscribe grant covers the subscription selector `selector` of matcher type `type`: a grant
 * selector identical to it (same type and value), or one that selects it read as a topic (`*`, an exact
 * topic, a URL pattern matching an exact topic). Test instrumentation only: routing never needs this.
 */
export function grantsSelector(grantList: readonly Grant[], type: MatchType, selector: string): boolean {
    return grantList.some(
        (grant) =>
            grant.actions.has("subscribe") &&
            grant.topics.some(
                (matcher) => (matcher.type === type && matcher.value === selector) || (type === "exact" && matcher.matches(selector)),
            ),
    );
}

/**
 * The payload of the first subscribe detail (token order) one of whose topics matches `match` treated as
 * a topic; `undefined` when none has one.
 */
export function payloadFor(grantList: readonly Grant[], match: string): { readonly value: unknown } | undefined {
    // [spec] §4.3: first matching subscribe detail wins.
    const grant = grantList.find(
        (candidate) => candidate.actions.has("subscribe") && candidate.topics.some((matcher) => matcher.matches(match)),
    );
    return grant?.payload;
}

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
