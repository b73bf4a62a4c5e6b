import { FieldCursor } from "./http-syntax";

/** One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1). */
export interface Challenge {
    /** The auth scheme, lower-cased (`bearer`). */
    readonly scheme: string;
    /** The `token68` form of the challenge, when it has one instead of parameters. */
    readonly token68: string | null;
    /** The auth parameters by lower-cased name, first occurrence wins; quoted values are unquoted. */
    readonly params: Readonly<Record<string, string>>;
}

/** What an RFC 6750 `Bearer` challenge says, with the RFC 9728 metadata pointer. */
export interface BearerChallenge {
    /** `invalid_token`, `insufficient_scope`, `invalid_request`, or null for a bare challenge (no token was sent). */
    readonly error: string | null;
    /** The human-readable `error_description`, when given. */
    readonly errorDescription: string | null;
    /** The `resource_metadata` URL (RFC 9728 §5.1), when given. */
    readonly resourceMetadata: string | null;
    /** The `scope` parameter, when given. */
    readonly scope: string | null;
}

/**
 * Parse `WWW-Authenticate` values into challenges: several challenges in one value or across values,
 * `token68` or parameter forms, quoted values with commas, case-insensitive scheme and parameter names.
 * Malformed parts are skipped; it never throws.
 */
export function parseChallenges(value: string | readonly string[] | null | undefined): Challenge[] {
    const fields = value === null || value === undefined ? [] : typeof value === "string" ? [value] : value;
    const challenges: Challenge[] = [];
    for (const field of fields) readField(new FieldCursor(field), challenges);
    return challenges;
}

/** The first `Bearer` challenge of a `WWW-Authenticate` value, or null when there is none. */
export function bearerChallenge(value: string | readonly string[] | null | undefined): BearerChallenge | null {
    const bearer = parseChallenges(value).find((challenge) => challenge.scheme === "bearer");
    if (bearer === undefined) return null;
    // [spec] mercure-hub §2.3: the error codes of RFC 6750 §3.1 and `resource_metadata` of RFC 9728 §5.1.
    return {
        error: bearer.params["error"] ?? null,
        errorDescription: bearer.params["error_description"] ?? null,
        resourceMetadata: bearer.params["resource_metadata"] ?? null,
        scope: bearer.params["scope"] ?? null,
    };
}

/** `token68` = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=", then the end or a comma. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*[ \t]*(?:,|$)/;

function readField(cursor: FieldCursor, challenges: Challenge[]): void {
    for (;;) {
        cursor.skipListSeparators();
        if (cursor.done) return;
        // [spec] RFC 9110 §11.6.1: challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
        const scheme = cursor.readToken().toLowerCase();
        if (scheme === "") {
            cursor.skipToListSeparator();
            continue;
        }
        const params: Record<string, string> = Object.create(null) as Record<string, string>;
        let token68: string | null = null;
        cursor.skipWhitespace();
        const rest = cursor.text.slice(cursor.position);
        const token68Match = TOKEN68.exec(rest);
        if (token68Match !== null && !isParameterStart(rest)) {
            token68 = token68Match[0].replace(/[ \t,]+$/, "");
            cursor.position += token68.length;
        } else {
            readParameters(cursor, params);
        }
        challenges.push({ scheme, token68, params });
    }
}

/** Whether `text` starts with `name =` followed by a value (an auth-param rather than a token68). */
function isParameterStart(text: string): boolean {
    return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=[ \t]*(?:"|[!#$%&'*+\-.^_`|~0-9A-Za-z])/.test(text);
}

/** Read `name=value` parameters until the next challenge's scheme (a token not followed by `=`). */
function readParameters(cursor: FieldCursor, params: Record<string, string>): void {
    for (;;) {
        const start = cursor.position;
        cursor.skipListSeparators();
        if (cursor.done) return;
        if (!isParameterStart(cursor.text.slice(cursor.position))) {
            // A token without `=` starts the next challenge; anything else is skipped.
            if (cursor.readToken() !== "") {
                cursor.position = start;
                return;
            }
            cursor.skipToListSeparator();
            continue;
        }
        const name = cursor.readToken().toLowerCase();
        cursor.skipWhitespace();
        cursor.position++; // "="
        cursor.skipWhitespace();
        const value = cursor.peek() === '"' ? cursor.readQuotedString() : cursor.readToken();
        if (!(name in params)) params[name] = value;
    }
}
