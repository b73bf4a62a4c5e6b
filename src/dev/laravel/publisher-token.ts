import { randomBytes } from "node:crypto";
import { signJwt } from "../jwt/jwt";
import { AUTHORIZATION_DETAIL_TYPE, type AuthorizationDetail } from "./subscriber-token";

/** How long a publisher token lives: one publish call, so a minute is plenty. */
export const PUBLISHER_TOKEN_LIFETIME = 60;

/** What the publisher token is built from. */
export interface PublisherTokenInput {
    /** `iss` and `client_id`. */
    issuer: string;
    /** `aud`: the absolute public hub URL. */
    audience: string;
    /** Current time in milliseconds. */
    now: number;
}

/** Build the publisher claims: iss, aud, client_id, iat, jti, exp, and a `publish` grant on every topic. */
export function publisherClaims(input: PublisherTokenInput): Record<string, unknown> {
    // [spec] laravel-mercure §4.3: the server publishes with a bearer token granting `publish` on `*`.
    return serverClaims(input, [{ type: AUTHORIZATION_DETAIL_TYPE, actions: ["publish"], topics: [{ match: "*" }] }]);
}

/**
 * The claims of a token the app sends the hub itself (publishing, reading its subscriptions API): iss, aud, client_id,
 * iat, jti, exp ({@link PUBLISHER_TOKEN_LIFETIME} from now) and `details`.
 */
export function serverClaims(input: PublisherTokenInput, details: readonly AuthorizationDetail[]): Record<string, unknown> {
    const iat = Math.floor(input.now / 1000);
    return {
        iss: input.issuer,
        aud: input.audience,
        client_id: input.issuer,
        iat,
        jti: randomBytes(16).toString("hex"),
        exp: iat + PUBLISHER_TOKEN_LIFETIME,
        authorization_details: details,
    };
}

/** Sign the publisher token (HS256, `typ` `at+jwt`) with the shared JWT key. */
export function signPublisherToken(input: PublisherTokenInput, key: string): string {
    return signJwt(publisherClaims(input), key, "HS256");
}
