import { randomBytes } from "node:crypto";
import { signJwt } from "../jwt/jwt";
import { channelTopic, presencePattern, whisperTopic } from "./topics";

/** The `type` of every authorization detail Mercure 1.0 understands. */
export const AUTHORIZATION_DETAIL_TYPE = "https://mercure.rocks/authorization-detail";

/** One topic matcher of an authorization detail; `match_type` is omitted for exact matchers. */
export interface TopicMatcher {
    /** The topic or pattern. */
    match: string;
    /** The matcher type when not exact. */
    match_type?: "urlpattern";
}

/** One RFC 9396 authorization detail as Mercure 1.0 reads it. */
export interface AuthorizationDetail {
    /** Always {@link AUTHORIZATION_DETAIL_TYPE}. */
    type: typeof AUTHORIZATION_DETAIL_TYPE;
    /** What the holder may do on the topics. */
    actions: Array<"subscribe" | "publish">;
    /** Which topics the actions cover. */
    topics: TopicMatcher[];
    /** The presence member payload. */
    payload?: unknown;
}

/** A granted presence channel and the member payload its callback produced. */
export interface PresenceGrant {
    /** Full channel name (`presence-…`). */
    name: string;
    /** The payload the hub attaches to the member's subscriptions. */
    payload: unknown;
}

/** The granted channels of one auth request, each list in request order. */
export interface Grants {
    /** Granted `private-*` and `private-encrypted-*` channels. */
    privateChannels: string[];
    /** Granted `presence-*` channels. */
    presenceChannels: PresenceGrant[];
    /** Every granted guarded channel (private, encrypted, presence). */
    guardedChannels: string[];
}

/** What the subscriber token is built from. */
export interface SubscriberTokenInput {
    /** Granted channels. */
    grants: Grants;
    /** Topic prefix, `null` for a legacy server. */
    topicPrefix: string | null;
    /** Path of the public hub URL (for the presence patterns). */
    hubPath: string;
    /** Whether whisper grants are minted. */
    clientEvents: boolean;
    /** `iss` and `client_id`. */
    issuer: string;
    /** `aud`: the absolute public URL. */
    audience: string;
    /** `sub`: the user's broadcasting identifier, or `anonymous`. */
    subject: string;
    /** Token lifetime in seconds. */
    expiresIn: number;
    /** Current time in milliseconds. */
    now: number;
}

/** The presence member payload: `{user_id, user_info}` (newest server) or the raw callback result (legacy). */
export function presencePayload(userId: string | number, userInfo: unknown, legacy: boolean): unknown {
    // [spec] laravel-mercure §5.3: `user_id` cast to string.
    return legacy ? userInfo : { user_id: String(userId), user_info: userInfo };
}

/**
 * Build the `authorization_details` of a subscriber token, in the order private grant, one detail per
 * presence channel, whisper grant; empty when nothing is granted.
 */
export function subscriberAuthorizationDetails(
    input: Pick<SubscriberTokenInput, "grants" | "topicPrefix" | "hubPath" | "clientEvents">,
): AuthorizationDetail[] {
    // [spec] laravel-mercure §2.7: detail order and shape.
    const { grants, topicPrefix, hubPath } = input;
    const details: AuthorizationDetail[] = [];
    if (grants.privateChannels.length > 0) {
        details.push({
            type: AUTHORIZATION_DETAIL_TYPE,
            actions: ["subscribe"],
            topics: grants.privateChannels.map((name) => ({ match: channelTopic(topicPrefix, name) })),
        });
    }
    for (const presence of grants.presenceChannels) {
        details.push({
            type: AUTHORIZATION_DETAIL_TYPE,
            actions: ["subscribe"],
            topics: [
                { match: channelTopic(topicPrefix, presence.name) },
                { match: presencePattern(hubPath, topicPrefix, presence.name), match_type: "urlpattern" },
            ],
            payload: presence.payload,
        });
    }
    if (input.clientEvents && grants.guardedChannels.length > 0) {
        // [spec] laravel-mercure §7.1: subscribe+publish on whisper topics only, never on channel topics.
        details.push({
            type: AUTHORIZATION_DETAIL_TYPE,
            actions: ["subscribe", "publish"],
            topics: grants.guardedChannels.map((name) => ({ match: whisperTopic(topicPrefix, name) })),
        });
    }
    return details;
}

/** Build the subscriber claims in the order iss, aud, sub, client_id, iat, jti, exp, authorization_details. */
export function subscriberClaims(input: SubscriberTokenInput): Record<string, unknown> {
    // [spec] laravel-mercure §2.7: claims; authorization_details omitted when there are no grants.
    const iat = Math.floor(input.now / 1000);
    const claims: Record<string, unknown> = {
        iss: input.issuer,
        aud: input.audience,
        sub: input.subject,
        client_id: input.issuer,
        iat,
        jti: randomBytes(16).toString("hex"),
        exp: iat + input.expiresIn,
    };
    const details = subscriberAuthorizationDetails(input);
    if (details.length > 0) claims["authorization_details"] = details;
    return claims;
}

/** Sign the subscriber token (HS256, `typ` `at+jwt`) with the shared JWT key. */
export function signSubscriberToken(input: SubscriberTokenInput, key: string): string {
    return signJwt(subscriberClaims(input), key, "HS256");
}
